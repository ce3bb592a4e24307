//! The backend for OpenAI-compatible HTTP servers (vLLM, llama.cpp's server,
//! TGI, OpenAI, Together): `/completions` for a completion prompt and
//! `/chat/completions` for chat messages, both asked for log-probabilities.
//!
//! Transient failures (timeouts, dropped connections, 429, 5xx) are retried
//! with exponential backoff and jitter, honouring `Retry-After`; any other
//! 4xx is an error at once, because asking again cannot help. The API key is
//! read from an environment variable and never appears in a message: error
//! text from the server is scrubbed of it too.

use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::logprobs::{chat_tokens, completion_tokens};
use super::{Backend, BackendId, GenerateError, Generation, Params, stop_at};
use crate::prompt::Prompt;

/// The default cap on one wait between attempts, in seconds.
pub const DEFAULT_MAX_WAIT_S: u64 = 300;

/// How to reach the server.
#[derive(Clone, Debug)]
pub struct OpenAiConfig {
    /// Up to and including the API version, e.g. `http://127.0.0.1:8000/v1`.
    pub base_url: String,
    pub model: String,
    /// The environment variable holding the API key, if the server needs one.
    pub api_key_env: Option<String>,
    /// Prompts in flight at once.
    pub concurrency: usize,
    /// Limit on one whole request, response body included.
    pub timeout: Duration,
    /// Retries after the first attempt.
    pub max_retries: usize,
    /// The first backoff; it doubles with each retry up to `retry_max`.
    pub retry_base: Duration,
    /// The longest single wait: the backoff's cap, and the longest
    /// `Retry-After` obeyed (a longer one fails the request, naming it).
    pub retry_max: Duration,
    /// A response without log-probabilities is an error.
    pub require_logprobs: bool,
    /// Server-specific fields merged into every request, e.g. llama.cpp's
    /// `{"repeat_penalty": 1.0}`; none may be one codecal sets itself.
    pub extra_body: ExtraBody,
}

impl OpenAiConfig {
    pub fn new(base_url: &str, model: &str) -> OpenAiConfig {
        OpenAiConfig {
            base_url: base_url.trim_end_matches('/').to_owned(),
            model: model.to_owned(),
            api_key_env: None,
            concurrency: 8,
            timeout: Duration::from_secs(120),
            max_retries: 6,
            retry_base: Duration::from_secs(1),
            retry_max: Duration::from_secs(DEFAULT_MAX_WAIT_S),
            require_logprobs: true,
            extra_body: Map::new(),
        }
    }
}

/// Request fields codecal sets itself, or whose change would alter the
/// reply's shape (`n`, `stream`, `echo`): an extra body may not hold them.
const RESERVED_FIELDS: &[&str] = &[
    "model",
    "prompt",
    "messages",
    "max_tokens",
    "temperature",
    "seed",
    "stop",
    "logprobs",
    "top_logprobs",
    "n",
    "stream",
    "echo",
];

/// Fields merged into every request body, as given (`extra` in a
/// `[[backends]]` entry, `--extra-body`): any JSON the server takes.
pub type ExtraBody = Map<String, Value>;

/// An extra request body codecal can merge: none of the fields it sets itself.
pub fn check_extra_body(extra: &Map<String, Value>) -> Result<(), OpenAiConfigError> {
    match extra.keys().find(|k| RESERVED_FIELDS.contains(&k.as_str())) {
        Some(field) => Err(OpenAiConfigError::ReservedField(field.clone())),
        None => Ok(()),
    }
}

/// The key is kept out of `Debug` on purpose.
pub struct OpenAiBackend {
    config: OpenAiConfig,
    api_key: Option<String>,
    agent: ureq::Agent,
}

/// A configuration that cannot work.
#[derive(Debug, thiserror::Error)]
pub enum OpenAiConfigError {
    #[error("the API key variable {0} is not set (or empty)")]
    MissingKey(String),
    #[error("base URL {0:?} must start with http:// or https://")]
    BadUrl(String),
    #[error("base URL {url:?}: port {port:?} is not a number from 1 to 65535")]
    BadPort { url: String, port: String },
    #[error(
        "the extra request body sets {0:?}, which codecal sets itself or which changes the reply's shape (reserved: {fields})",
        fields = RESERVED_FIELDS.join(", ")
    )]
    ReservedField(String),
}

/// A base URL codecal can send requests to: http(s), with a port, if one
/// is given, from 1 to 65535 (an HTTP client would take `:99999` for its
/// default port and silently talk to another server).
pub fn check_base_url(url: &str) -> Result<(), OpenAiConfigError> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .ok_or_else(|| OpenAiConfigError::BadUrl(without_credentials(url)))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    // An IPv6 literal keeps its colons inside brackets.
    let after_host = match host_port.rfind(']') {
        Some(end) => &host_port[end + 1..],
        None => host_port,
    };
    if let Some((_, port)) = after_host.rsplit_once(':')
        && !port.parse::<u16>().is_ok_and(|p| p > 0)
    {
        return Err(OpenAiConfigError::BadPort {
            url: without_credentials(url),
            port: port.to_owned(),
        });
    }
    Ok(())
}

/// The `user:password@` part of a URL's authority, if it has one.
fn url_credentials(url: &str) -> Option<&str> {
    let start = url.find("://")? + 3;
    let authority_end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    let at = url[start..authority_end].rfind('@')? + start;
    Some(&url[start..=at])
}

/// `url` without its `user:password@`, for messages.
pub fn without_credentials(url: &str) -> String {
    match url_credentials(url) {
        Some(userinfo) => url.replacen(userinfo, "", 1),
        None => url.to_owned(),
    }
}

impl OpenAiBackend {
    pub fn new(config: OpenAiConfig) -> Result<OpenAiBackend, OpenAiConfigError> {
        check_base_url(&config.base_url)?;
        check_extra_body(&config.extra_body)?;
        let api_key = match &config.api_key_env {
            Some(name) => Some(
                std::env::var(name)
                    .ok()
                    .filter(|k| !k.is_empty())
                    .ok_or_else(|| OpenAiConfigError::MissingKey(name.clone()))?,
            ),
            None => None,
        };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // A redirected POST would be re-sent (or turned into a GET)
            // somewhere the config never named: refused below instead.
            .max_redirects(0)
            .timeout_global(Some(config.timeout))
            .build()
            .into();
        Ok(OpenAiBackend {
            config,
            api_key,
            agent,
        })
    }

    fn url(&self, prompt: &Prompt) -> String {
        let path = match prompt {
            Prompt::Completion(_) => "completions",
            Prompt::Chat(_) => "chat/completions",
        };
        format!("{}/{path}", self.config.base_url)
    }

    /// Removes the API key and any credentials of the base URL from text
    /// that may be shown.
    fn scrub(&self, text: &str) -> String {
        let mut text = match &self.api_key {
            Some(key) => text.replace(key.as_str(), "[api key]"),
            None => text.to_owned(),
        };
        if let Some(userinfo) = url_credentials(&self.config.base_url) {
            text = text.replace(userinfo, "[credentials]");
        }
        text
    }

    /// One attempt: the parsed answer, or whether and when to try again.
    fn attempt(&self, url: &str, body: &Value) -> Attempt {
        let mut request = self.agent.post(url);
        if let Some(key) = &self.api_key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        let mut response = match request.send_json(body) {
            Ok(response) => response,
            Err(e) => return Attempt::Retry(self.scrub(&e.to_string()), None),
        };
        let status = response.status().as_u16();
        if (300..400).contains(&status) {
            let location = response
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("(no Location header)");
            return Attempt::Done(Box::new(Err(GenerateError::Redirected {
                url: without_credentials(url),
                status,
                location: self.scrub(&without_credentials(location)),
            })));
        }
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|s| parse_retry_after(s, std::time::SystemTime::now()));
        let text = match response.body_mut().read_to_string() {
            Ok(text) => text,
            Err(e) => return Attempt::Retry(self.scrub(&e.to_string()), None),
        };
        match status {
            200..=299 => Attempt::Done(Box::new(serde_json::from_str(&text).map_err(|e| {
                GenerateError::Malformed {
                    url: without_credentials(url),
                    detail: e.to_string(),
                }
            }))),
            429 => Attempt::Retry(
                format!("HTTP 429: {}", self.scrub(&snippet(&text))),
                retry_after,
            ),
            500..=599 => Attempt::Retry(
                format!("HTTP {status}: {}", self.scrub(&snippet(&text))),
                None,
            ),
            _ => Attempt::Done(Box::new(Err(GenerateError::Status {
                url: without_credentials(url),
                status,
                message: self.scrub(&snippet(&text)),
            }))),
        }
    }

    /// Exponential backoff with jitter in [backoff/2, backoff].
    fn backoff(&self, retry: usize, rng: &mut ChaCha8Rng) -> Duration {
        let doubled = self
            .config
            .retry_base
            .saturating_mul(1u32 << retry.min(20) as u32);
        let backoff = doubled.min(self.config.retry_max);
        backoff.mul_f64(rng.random_range(0.5..=1.0))
    }
}

enum Attempt {
    Done(Box<Result<Value, GenerateError>>),
    Retry(String, Option<Duration>),
}

/// The start of an error body, on one line.
fn snippet(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    line.chars().take(300).collect()
}

impl Backend for OpenAiBackend {
    fn id(&self) -> BackendId {
        BackendId {
            kind: "openai".to_owned(),
            model: self.config.model.clone(),
            extra_body: self.config.extra_body.clone(),
            ..BackendId::default()
        }
    }

    fn concurrency(&self) -> usize {
        self.config.concurrency.max(1)
    }

    fn generate(&self, prompt: &Prompt, params: &Params) -> Result<Generation, GenerateError> {
        let url = self.url(prompt);
        let shown = without_credentials(&url);
        let mut body = request_body(&self.config.model, prompt, params);
        for (field, value) in &self.config.extra_body {
            body[field] = value.clone();
        }
        // The jitter is seeded so that a run's timing choices repeat too.
        let digest = Sha256::digest(body.to_string().as_bytes());
        // A sha256 digest is 32 bytes; its first 8 always convert.
        let request_bits = u64::from_le_bytes(digest[..8].try_into().expect("8 bytes"));
        let mut rng = ChaCha8Rng::seed_from_u64(params.seed ^ request_bits);
        let mut last = String::new();
        // Bounded: at most max_retries waits of at most retry_max each.
        let mut waited = Duration::ZERO;
        for retry in 0..=self.config.max_retries {
            match self.attempt(&url, &body) {
                Attempt::Done(result) => {
                    let value = (*result)?;
                    check_model_named(&shown, &self.config.model, &value)?;
                    let generation =
                        parse_response(&shown, prompt, &value, self.config.require_logprobs)?;
                    return Ok(cut_at_stop(generation, params));
                }
                Attempt::Retry(reason, retry_after) => {
                    last = reason;
                    if let Some(asked) = retry_after.filter(|d| *d > self.config.retry_max) {
                        return Err(GenerateError::WaitRefused {
                            url: shown,
                            asked_s: asked.as_secs_f64(),
                            cap_s: self.config.retry_max.as_secs_f64(),
                            last,
                        });
                    }
                    if retry < self.config.max_retries {
                        let wait = retry_after.unwrap_or_else(|| self.backoff(retry, &mut rng));
                        std::thread::sleep(wait);
                        waited += wait;
                    }
                }
            }
        }
        Err(GenerateError::RetriesExhausted {
            url: shown,
            attempts: self.config.max_retries + 1,
            waited_s: waited.as_secs_f64(),
            last,
        })
    }
}

/// With `stop_after_text`, the server was sent no stop strings: the reply is
/// cut here where the rule says, with the tokens that begin after the cut.
fn cut_at_stop(mut generation: Generation, params: &Params) -> Generation {
    if !params.stop_after_text {
        return generation;
    }
    let Some(cut) = stop_at(&generation.text, &params.stop, true) else {
        return generation;
    };
    generation.text.truncate(cut);
    let mut offset = 0;
    generation.tokens.retain(|token| {
        let starts_before = offset < cut;
        offset += token.token.len();
        starts_before
    });
    generation.completion_tokens = Some(generation.tokens.len());
    generation.finish_reason = Some("stop".to_owned());
    generation
}

/// The JSON request for `prompt`.
pub fn request_body(model: &str, prompt: &Prompt, params: &Params) -> Value {
    let mut body = json!({
        "model": model,
        "max_tokens": params.max_tokens,
        "temperature": params.temperature,
        "seed": params.seed,
    });
    // A server stops at the first occurrence of a stop string; the rule that
    // waits for text first is applied here, on the reply (`cut_at_stop`).
    if !params.stop.is_empty() && !params.stop_after_text {
        body["stop"] = json!(params.stop);
    }
    match prompt {
        Prompt::Completion(text) => {
            body["prompt"] = json!(text);
            body["logprobs"] = json!(params.top_logprobs);
        }
        Prompt::Chat(messages) => {
            body["messages"] = json!(messages);
            body["logprobs"] = json!(true);
            body["top_logprobs"] = json!(params.top_logprobs);
        }
    }
    body
}

/// A reply that names its model must name the one asked for, or a dated
/// snapshot of it (`gpt-4o-2024-08-06` for `gpt-4o`, `gpt-4-0613` for
/// `gpt-4`, as OpenAI answers); a
/// server that silently serves another model would label its answers with
/// the wrong name.
pub fn check_model_named(url: &str, asked: &str, value: &Value) -> Result<(), GenerateError> {
    let Some(answered) = value.get("model").and_then(Value::as_str) else {
        return Ok(());
    };
    let snapshot = answered
        .strip_prefix(asked)
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|date| {
            !date.is_empty() && date.chars().all(|c| c.is_ascii_digit() || c == '-')
        });
    if answered == asked || snapshot {
        return Ok(());
    }
    Err(GenerateError::OtherModel {
        url: url.to_owned(),
        asked: asked.to_owned(),
        answered: answered.to_owned(),
    })
}

/// Reads the first choice of a completions or chat completions response.
pub fn parse_response(
    url: &str,
    prompt: &Prompt,
    value: &Value,
    require_logprobs: bool,
) -> Result<Generation, GenerateError> {
    let malformed = |detail: &str| GenerateError::Malformed {
        url: url.to_owned(),
        detail: detail.to_owned(),
    };
    let choice = value
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| malformed("no choices[0]"))?;
    let (text, tokens) = match prompt {
        Prompt::Completion(_) => (
            choice.get("text").and_then(Value::as_str),
            completion_tokens(choice.get("logprobs")).map_err(|d| malformed(&d.to_string()))?,
        ),
        Prompt::Chat(_) => (
            choice.pointer("/message/content").and_then(Value::as_str),
            chat_tokens(choice.pointer("/logprobs/content"))
                .map_err(|d| malformed(&d.to_string()))?,
        ),
    };
    let text = text.ok_or_else(|| malformed("the choice has no text"))?;
    let tokens = match tokens {
        Some(tokens) => tokens,
        None if require_logprobs && !text.is_empty() => {
            return Err(GenerateError::NoLogprobs {
                url: url.to_owned(),
            });
        }
        None => Vec::new(),
    };
    let usage = |key: &str| {
        value
            .pointer(&format!("/usage/{key}"))
            .and_then(Value::as_u64)
            .map(|n| n as usize)
    };
    Ok(Generation {
        text: text.to_owned(),
        tokens,
        prompt_tokens: usage("prompt_tokens"),
        completion_tokens: usage("completion_tokens"),
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

/// A `Retry-After` value as a wait (RFC 9110 §10.2.3): seconds (an integer
/// of any size or a decimal; a negative one is no wait, one too large for a
/// `Duration` is `Duration::MAX`, which any `--max-wait` refuses) or an
/// HTTP-date, counted from `now` (a date past is no wait). `None` for
/// anything else.
pub fn parse_retry_after(value: &str, now: std::time::SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        if seconds.is_nan() {
            return None;
        }
        return Some(Duration::try_from_secs_f64(seconds.max(0.0)).unwrap_or(Duration::MAX));
    }
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Too many digits for an f64 to parse is still a number of seconds.
        return Some(Duration::MAX);
    }
    let at = http_date_seconds(value)?;
    let now = now.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs() as i64;
    Some(Duration::from_secs(at.saturating_sub(now).max(0) as u64))
}

/// Seconds since 1970 of an IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`.
fn http_date_seconds(value: &str) -> Option<i64> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts[..] else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| *m == month)? as i64 + 1;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let hms: Vec<i64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, s] = hms[..] else { return None };
    if !(1..=31).contains(&day)
        || !(0..24).contains(&h)
        || !(0..60).contains(&m)
        || !(0..61).contains(&s)
    {
        return None;
    }
    // Days from 1970-01-01 to the civil date (the proleptic Gregorian calendar).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    Some(days * 86_400 + h * 3600 + m * 60 + s)
}

#[cfg(test)]
mod tests;
