//! Text generation with per-token log-probabilities.
//!
//! A [`Backend`] turns one prompt into one [`Generation`]: the text, and for
//! each generated token its log-probability and the top alternatives. Two
//! backends exist: [`openai`] (any OpenAI-compatible HTTP server) and, with
//! the `local` feature, [`local`] (SmolLM2 on candle). [`cache`] keeps every
//! answer in SQLite so none is requested twice, and [`batch`] drives a whole
//! prompt file through a backend and the cache.
//!
//! What the generation means (confidence measures) is `confidence`'s job.

pub mod batch;
pub mod cache;
#[cfg(feature = "local")]
pub mod local;
mod logprobs;
pub mod openai;
pub mod pool;
pub mod row;
pub mod stage;
pub mod weights;

use serde::{Deserialize, Serialize};

use crate::prompt::Prompt;

/// Decoding parameters. The defaults are the summarization seed's: greedy
/// (temperature 0), at most 100 tokens, stop at a newline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub max_tokens: usize,
    pub temperature: f64,
    pub stop: Vec<String>,
    /// How many alternatives to report at each position.
    pub top_logprobs: usize,
    /// Sampling seed, used when the temperature is above 0.
    pub seed: u64,
    /// A stop string counts only after the reply's first non-blank text that
    /// is not a code-fence line, so a chat model's leading newline or fence
    /// does not end the answer before it starts (line completion). Left out
    /// of the request key when false, so older caches stay valid.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stop_after_text: bool,
}

/// Where the answer in `text` ends: the first occurrence of a stop string,
/// and with `after_text`, the first one after the reply's first non-blank
/// text outside a fence line. `None` while no stop applies.
pub fn stop_at(text: &str, stops: &[String], after_text: bool) -> Option<usize> {
    let from = if after_text { content_start(text)? } else { 0 };
    stops
        .iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| text[from..].find(s.as_str()))
        .min()
        .map(|at| from + at)
}

/// The byte offset of the first non-blank character on a line that is not a
/// Markdown fence (```` ``` ```` with or without a language tag).
fn content_start(text: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let fence = trimmed.starts_with("```");
        // A line still being written may yet become a fence.
        let partial_fence = !line.ends_with('\n') && "```".starts_with(trimmed.trim_end());
        if !trimmed.trim().is_empty() && !fence && !partial_fence {
            return Some(offset + (line.len() - trimmed.len()));
        }
        offset += line.len();
    }
    None
}

impl Default for Params {
    fn default() -> Params {
        Params {
            max_tokens: 100,
            temperature: 0.0,
            stop: vec!["\n".to_owned()],
            top_logprobs: 5,
            seed: 0,
            stop_after_text: false,
        }
    }
}

/// One alternative token at a position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Alternative {
    pub token: String,
    pub logprob: f64,
}

/// One generated token.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Token {
    pub token: String,
    pub logprob: f64,
    /// The most likely tokens at this position, best first (may include this one).
    pub top: Vec<Alternative>,
}

/// What a backend returned for one prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Generation {
    pub text: String,
    /// Empty when the backend gave no log-probabilities.
    pub tokens: Vec<Token>,
    pub prompt_tokens: Option<usize>,
    pub completion_tokens: Option<usize>,
    pub finish_reason: Option<String>,
}

/// Which backend and model produced a generation; part of the cache key.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BackendId {
    /// `openai` or `local`.
    pub kind: String,
    pub model: String,
    /// The sha256 of the model's weights file, where the backend knows it
    /// (`local`): a changed file is another model. Empty otherwise, and
    /// then left out.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub model_sha256: String,
    /// Server-specific fields merged into every request (`openai`), such as
    /// llama.cpp's `repeat_penalty`: they change the replies, so they are
    /// part of the key. Empty for most backends, and then left out.
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra_body: serde_json::Map<String, serde_json::Value>,
}

/// Why a prompt got no generation.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error("{url}: HTTP {status}: {message}")]
    Status {
        url: String,
        status: u16,
        message: String,
    },
    #[error(
        "{url}: gave up after {attempts} attempts and {waited_s:.1} s of waiting; last: {last}"
    )]
    RetriesExhausted {
        url: String,
        attempts: usize,
        waited_s: f64,
        last: String,
    },
    #[error(
        "{url}: the server asked to wait {asked_s:.0} s (Retry-After), more than the {cap_s:.0} s codecal waits at most; last: {last}"
    )]
    WaitRefused {
        url: String,
        asked_s: f64,
        cap_s: f64,
        last: String,
    },
    #[error(
        "{url}: HTTP {status} redirect to {location}; codecal does not follow a redirected POST: set the base URL to where the server is"
    )]
    Redirected {
        url: String,
        status: u16,
        location: String,
    },
    #[error("{url}: the response is not the JSON an OpenAI-compatible server sends: {detail}")]
    Malformed { url: String, detail: String },
    #[error("{url}: the response has no log-probabilities (does the server support `logprobs`?)")]
    NoLogprobs { url: String },
    #[error("{url}: asked for model {asked:?}, the reply names model {answered:?}")]
    OtherModel {
        url: String,
        asked: String,
        answered: String,
    },
    #[error("every endpoint of the pool for {model} failed ({attempts} attempts); last: {last}")]
    PoolExhausted {
        model: String,
        attempts: usize,
        last: String,
    },
    #[error("the local model failed: {0}")]
    Local(String),
}

/// Something that writes a completion for a prompt. Implementations must be
/// deterministic for a fixed `Params` (greedy, or seeded sampling) where the
/// model allows it, because answers are cached by their request.
pub trait Backend: Send + Sync {
    fn id(&self) -> BackendId;
    fn generate(&self, prompt: &Prompt, params: &Params) -> Result<Generation, GenerateError>;
    /// How many prompts may be in flight at once.
    fn concurrency(&self) -> usize {
        1
    }
    /// Per-endpoint records, for a backend spread over several endpoints.
    fn endpoint_records(&self) -> Vec<pool::EndpointRecord> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::stop_at;

    #[test]
    fn a_stop_waits_for_text_after_a_leading_blank_line_or_fence() {
        let newline = ["\n".to_owned()];
        // Plain rule: the first newline ends it, even before any text.
        assert_eq!(stop_at("\nx = 1\n", &newline, false), Some(0));
        // Line completion: leading blank lines and a fence do not count.
        assert_eq!(stop_at("\n\nx = 1\ny", &newline, true), Some(7));
        assert_eq!(
            stop_at("```python\n    x = 1\n```", &newline, true),
            Some(19)
        );
        assert_eq!(stop_at("x = 1", &newline, true), None);
        assert_eq!(stop_at("\n  \n", &newline, true), None);
        // A fence still being written is not text yet.
        assert_eq!(stop_at("\n``", &newline, true), None);
    }
}
