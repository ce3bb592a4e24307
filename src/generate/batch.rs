//! Drives many prompts through a backend and the response cache.
//!
//! Cached answers are served first; the rest are sent with the backend's
//! concurrency, and each answer is committed to the cache the moment it
//! arrives. A run that is killed and started again therefore asks for no
//! answer it already has. The first failing prompt stops new requests (those
//! in flight finish and are kept) and is reported with its id.
//! Reading prompt files is here too; what the answers mean is not.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use serde_json::Value;

use super::cache::{Cache, CacheError, request_key};
use super::{Backend, GenerateError, Generation, Params};
use crate::prompt::Prompt;

/// One line of a prompts file.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptRow {
    pub id: String,
    pub prompt: Prompt,
    /// The other fields of the line (`reference`, `code`, ...), kept for later stages.
    pub fields: serde_json::Map<String, Value>,
}

/// A generation and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    pub generation: Generation,
    /// Seconds the backend took (when cached: when it was first asked).
    pub seconds: f64,
    pub cached: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error("{path}:{line}: {source}")]
    PromptFile {
        path: PathBuf,
        line: usize,
        source: PromptLineError,
    },
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error("prompt {id}: {source}")]
    Generate { id: String, source: GenerateError },
}

/// Reads a JSONL file of `{"id", "prompt", ...}` lines (what `codecal
/// retrieve` writes). `prompt` is a string or a list of chat messages; ids
/// must be unique, because each prompt is answered exactly once.
pub fn read_prompts(path: &Path) -> Result<Vec<PromptRow>, BatchError> {
    let text = crate::artifact::read_regular_text(path, crate::artifact::TABLE_CAP_BYTES).map_err(
        |source| BatchError::Read {
            path: path.to_owned(),
            source,
        },
    )?;
    let mut rows = Vec::new();
    let mut seen = std::collections::HashMap::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let error = |source: PromptLineError| BatchError::PromptFile {
            path: path.to_owned(),
            line: index + 1,
            source,
        };
        let row = parse_prompt_line(line).map_err(error)?;
        if let Some(first) = seen.insert(row.id.clone(), index + 1) {
            return Err(error(PromptLineError::Duplicate { id: row.id, first }));
        }
        rows.push(row);
    }
    Ok(rows)
}

/// What is wrong with one line of a prompts file.
#[derive(Debug, thiserror::Error)]
pub enum PromptLineError {
    #[error("not JSON: {0}")]
    NotJson(serde_json::Error),
    #[error("not a JSON object")]
    NotAnObject,
    #[error("key \"id\" must be a string or a number")]
    BadId,
    #[error("no key \"{0}\"")]
    Missing(&'static str),
    #[error("key \"prompt\" must be a string or a list of {{\"role\", \"content\"}} messages")]
    BadPrompt,
    #[error("id {id:?} already appeared on line {first}")]
    Duplicate { id: String, first: usize },
}

fn parse_prompt_line(line: &str) -> Result<PromptRow, PromptLineError> {
    let value: Value = serde_json::from_str(line).map_err(PromptLineError::NotJson)?;
    let Value::Object(mut fields) = value else {
        return Err(PromptLineError::NotAnObject);
    };
    let id = match fields.remove("id") {
        Some(Value::String(s)) => s,
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => return Err(PromptLineError::BadId),
        None => return Err(PromptLineError::Missing("id")),
    };
    let prompt = fields
        .remove("prompt")
        .ok_or(PromptLineError::Missing("prompt"))?;
    let prompt: Prompt = serde_json::from_value(prompt).map_err(|_| PromptLineError::BadPrompt)?;
    Ok(PromptRow { id, prompt, fields })
}

/// Answers one prompt, from the cache when it can.
pub fn ask(
    backend: &dyn Backend,
    cache: &Cache,
    prompt: &Prompt,
    params: &Params,
) -> Result<Answer, AskError> {
    let id = backend.id();
    let key = request_key(&id, prompt, params);
    if let Some((generation, seconds)) = cache.get(&key)? {
        return Ok(Answer {
            generation,
            seconds,
            cached: true,
        });
    }
    let start = Instant::now();
    let generation = backend.generate(prompt, params)?;
    let seconds = start.elapsed().as_secs_f64();
    let request = serde_json::json!({ "prompt": prompt, "params": params });
    cache.put(&key, &id, &request, &generation, seconds)?;
    Ok(Answer {
        generation,
        seconds,
        cached: false,
    })
}

/// Why [`ask`] failed.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error(transparent)]
    Generate(#[from] GenerateError),
}

/// Answers every prompt, in order. `on_answer` is called once per prompt as
/// it completes (from worker threads), for progress.
pub fn answer_all(
    backend: &dyn Backend,
    cache: &Cache,
    rows: &[PromptRow],
    params: &Params,
    on_answer: &(dyn Fn(&Answer) + Sync),
) -> Result<Vec<Answer>, BatchError> {
    parallel_map(backend.concurrency(), rows, |row| {
        let params = row_params(params, row);
        let answer = ask(backend, cache, &row.prompt, &params).map_err(|e| match e {
            AskError::Cache(e) => BatchError::Cache(e),
            AskError::Generate(source) => BatchError::Generate {
                id: row.id.clone(),
                source,
            },
        })?;
        on_answer(&answer);
        Ok(answer)
    })
}

/// The decoding parameters of one row: a row's `seed_offset` (Turbulence's
/// rounds ask the same prompt several times) is added to the seed, so that
/// each round is its own request and its own cache entry.
pub fn row_params(params: &Params, row: &PromptRow) -> Params {
    let offset = row.fields.get("seed_offset").and_then(Value::as_u64);
    match offset {
        Some(offset) => Params {
            seed: params.seed.wrapping_add(offset),
            ..params.clone()
        },
        None => params.clone(),
    }
}

/// A worker that panicked cannot have left a half-written slot: take the value.
fn unpoison<G>(poisoned: std::sync::PoisonError<G>) -> G {
    poisoned.into_inner()
}

/// Maps `items` with up to `workers` threads, keeping their order. The first
/// error stops new work (work in flight finishes) and is returned.
pub fn parallel_map<T: Sync, U: Send, E: Send>(
    workers: usize,
    items: &[T],
    f: impl Fn(&T) -> Result<U, E> + Sync,
) -> Result<Vec<U>, E> {
    let results: Vec<Mutex<Option<U>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let failure: Mutex<Option<E>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, items.len().max(1)) {
            scope.spawn(|| {
                while !stop.load(Ordering::SeqCst) {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(item) = items.get(i) else { break };
                    match f(item) {
                        Ok(value) => *results[i].lock().unwrap_or_else(unpoison) = Some(value),
                        Err(e) => {
                            stop.store(true, Ordering::SeqCst);
                            failure.lock().unwrap_or_else(unpoison).get_or_insert(e);
                        }
                    }
                }
            });
        }
    });
    if let Some(error) = failure.into_inner().unwrap_or_else(unpoison) {
        return Err(error);
    }
    Ok(results
        .into_iter()
        .map(|r| {
            r.into_inner()
                .unwrap_or_else(unpoison)
                // The early return above leaves here only when every worker
                // filled its slot.
                .expect("every item is mapped when none failed")
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_lines_accept_text_and_messages_and_name_errors() {
        let row = parse_prompt_line(r#"{"id": 7, "prompt": "p", "reference": "r"}"#).unwrap();
        assert_eq!(
            (row.id.as_str(), row.fields["reference"].as_str()),
            ("7", Some("r"))
        );
        let chat =
            parse_prompt_line(r#"{"id": "a", "prompt": [{"role": "user", "content": "q"}]}"#)
                .unwrap();
        assert!(matches!(chat.prompt, Prompt::Chat(ref m) if m.len() == 1));
        assert_eq!(
            parse_prompt_line(r#"{"prompt": "p"}"#)
                .unwrap_err()
                .to_string(),
            "no key \"id\""
        );
        assert!(
            parse_prompt_line(r#"{"id": "a", "prompt": 3}"#)
                .unwrap_err()
                .to_string()
                .starts_with("key \"prompt\" must be a string or a list of {\"role\"")
        );
    }

    #[test]
    fn duplicate_ids_name_both_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.jsonl");
        std::fs::write(
            &path,
            "{\"id\": \"a\", \"prompt\": \"x\"}\n\n{\"id\": \"a\", \"prompt\": \"y\"}\n",
        )
        .unwrap();
        let err = read_prompts(&path).unwrap_err().to_string();
        assert!(
            err.ends_with("p.jsonl:3: id \"a\" already appeared on line 1"),
            "{err}"
        );
    }
}
