//! Several OpenAI-compatible endpoints serving one model, as one backend: a
//! request goes to the endpoint with the fewest requests outstanding (each
//! within its own `concurrency`), and one that fails after its own retries
//! is benched, with a backoff that doubles while it keeps failing, and the
//! request goes to another. The cache is the ledger: an answer is committed
//! by the caller the moment it arrives, whoever served it, and the pool's
//! [`BackendId`] is its model's, never an endpoint's.
//!
//! Before any request each endpoint is asked `GET /models`, and one that does
//! not serve the pool's model stops the pool, named. Not the HTTP client
//! itself (`openai`), nor what is asked (`batch`, `stage`).

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::openai::{OpenAiBackend, OpenAiConfig, OpenAiConfigError, without_credentials};
use super::{Backend, BackendId, GenerateError, Generation, Params};
use crate::prompt::Prompt;

/// What the run keeps of one endpoint's part in it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EndpointRecord {
    /// The base URL, without credentials.
    pub base_url: String,
    /// What the server says it is: vLLM's `/version`, else its `Server`
    /// header, else `unknown`.
    pub server: String,
    /// Answers it returned.
    pub served: usize,
    /// Requests that failed there after its own retries (each went on to
    /// another endpoint).
    pub failures: usize,
    /// Times it was benched.
    pub benched: usize,
    /// The last failure, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<String>,
}

/// Why a pool cannot be formed.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    #[error("a pool needs at least one endpoint")]
    Empty,
    #[error("{url}: {source}")]
    Config {
        url: String,
        source: OpenAiConfigError,
    },
    #[error(
        "{url}: serves model {found:?} but the pool's first endpoint serves {expected:?}; a pool is one model with one request body"
    )]
    NotOneModel {
        url: String,
        expected: String,
        found: String,
    },
    #[error("{url}: its extra request body differs from the pool's first endpoint's")]
    NotOneBody { url: String },
    #[error("{url} is in the pool twice; each endpoint is listed once, with its concurrency")]
    Twice { url: String },
    #[error("{url}/models cannot be read: {why}")]
    Unreachable { url: String, why: String },
    #[error("{url}/models does not list the pool's model {model:?} (it lists: {listed})")]
    WrongModel {
        url: String,
        model: String,
        listed: String,
    },
}

/// The pool's bookkeeping for one endpoint.
#[derive(Default)]
struct Slot {
    in_flight: usize,
    benched_until: Option<Instant>,
    failures_in_a_row: u32,
    record: EndpointRecord,
}

struct Endpoint {
    backend: OpenAiBackend,
    concurrency: usize,
}

/// A pool of endpoints that serve one model.
pub struct PoolBackend {
    endpoints: Vec<Endpoint>,
    slots: Mutex<Vec<Slot>>,
    changed: Condvar,
    /// The first bench; it doubles with each failure in a row.
    bench_base: Duration,
    bench_max: Duration,
}

impl PoolBackend {
    /// Checks that the endpoints share one model and request body, and that
    /// each one's `/models` lists that model; no request is sent before.
    pub fn connect(configs: Vec<OpenAiConfig>) -> Result<PoolBackend, PoolError> {
        let first = configs.first().ok_or(PoolError::Empty)?.clone();
        let mut endpoints = Vec::with_capacity(configs.len());
        let mut slots = Vec::with_capacity(configs.len());
        let mut seen = std::collections::HashSet::new();
        for config in configs {
            let url = without_credentials(&config.base_url);
            if !seen.insert(config.base_url.trim_end_matches('/').to_owned()) {
                return Err(PoolError::Twice { url });
            }
            if config.model != first.model {
                return Err(PoolError::NotOneModel {
                    url,
                    expected: first.model.clone(),
                    found: config.model,
                });
            }
            if config.extra_body != first.extra_body {
                return Err(PoolError::NotOneBody { url });
            }
            let backend =
                OpenAiBackend::new(config.clone()).map_err(|source| PoolError::Config {
                    url: url.clone(),
                    source,
                })?;
            let server = check_endpoint(&config)?;
            let concurrency = config.concurrency.max(1);
            endpoints.push(Endpoint {
                backend,
                concurrency,
            });
            slots.push(Slot {
                record: EndpointRecord {
                    base_url: url,
                    server,
                    ..EndpointRecord::default()
                },
                ..Slot::default()
            });
        }
        Ok(PoolBackend {
            endpoints,
            slots: Mutex::new(slots),
            changed: Condvar::new(),
            bench_base: first.retry_base.max(Duration::from_millis(10)),
            bench_max: first.retry_max,
        })
    }

    /// Each endpoint's record so far, in the config's order.
    pub fn records(&self) -> Vec<EndpointRecord> {
        self.lock().iter().map(|slot| slot.record.clone()).collect()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Slot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for an endpoint that is not benched and has room, and takes a
    /// place on the one with the fewest requests outstanding.
    fn acquire(&self) -> usize {
        let mut slots = self.lock();
        loop {
            let now = Instant::now();
            let open = |slot: &Slot| slot.benched_until.is_none_or(|until| until <= now);
            let free = slots
                .iter()
                .enumerate()
                .filter(|(i, slot)| open(slot) && slot.in_flight < self.endpoints[*i].concurrency)
                .min_by_key(|(_, slot)| slot.in_flight)
                .map(|(i, _)| i);
            if let Some(i) = free {
                slots[i].in_flight += 1;
                return i;
            }
            // All benched: wait for the first to come back. Otherwise some
            // are full: wait for a release (or a bench to end).
            let next_open = slots.iter().filter_map(|s| s.benched_until).min();
            let wait =
                next_open.map_or(Duration::from_secs(1), |t| t.saturating_duration_since(now));
            slots = self
                .changed
                .wait_timeout(slots, wait.max(Duration::from_millis(1)))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Gives back the place taken on endpoint `i`, counting the outcome.
    fn release(&self, i: usize, failure: Option<String>) {
        let mut slots = self.lock();
        let slot = &mut slots[i];
        slot.in_flight -= 1;
        match failure {
            None => {
                slot.record.served += 1;
                slot.failures_in_a_row = 0;
            }
            Some(why) => {
                slot.record.failures += 1;
                slot.failures_in_a_row += 1;
                let doubled = self
                    .bench_base
                    .saturating_mul(1 << (slot.failures_in_a_row - 1).min(16));
                slot.benched_until = Some(Instant::now() + doubled.min(self.bench_max));
                slot.record.benched += 1;
                slot.record.last_failure = Some(why);
            }
        }
        drop(slots);
        self.changed.notify_all();
    }
}

/// Whether another endpoint may answer where this one failed: it stopped
/// answering, answered what no server should, or is set up unlike the
/// others (no log-probabilities, a redirect, another model, a missing path
/// or key). Only a request refused for what it asks (400, 413, 422) would
/// fail anywhere.
fn fails_over(error: &GenerateError) -> bool {
    !matches!(
        error,
        GenerateError::Status {
            status: 400 | 413 | 422,
            ..
        }
    )
}

impl Backend for PoolBackend {
    fn id(&self) -> BackendId {
        self.endpoints[0].backend.id()
    }

    fn concurrency(&self) -> usize {
        self.endpoints.iter().map(|e| e.concurrency).sum()
    }

    fn generate(&self, prompt: &Prompt, params: &Params) -> Result<Generation, GenerateError> {
        // Each endpoint may fail a request twice before the pool gives up on it.
        let attempts = 2 * self.endpoints.len();
        let mut last = String::new();
        for _ in 0..attempts {
            let i = self.acquire();
            match self.endpoints[i].backend.generate(prompt, params) {
                Ok(generation) => {
                    self.release(i, None);
                    return Ok(generation);
                }
                Err(error) if fails_over(&error) => {
                    last = error.to_string();
                    self.release(i, Some(last.clone()));
                }
                Err(error) => {
                    self.release(i, None);
                    return Err(error);
                }
            }
        }
        Err(GenerateError::PoolExhausted {
            model: self.endpoints[0].backend.id().model,
            attempts,
            last,
        })
    }

    fn endpoint_records(&self) -> Vec<EndpointRecord> {
        self.records()
    }
}

/// Asks an endpoint which models it serves and what it is (the returned
/// text); an endpoint that does not list `config.model` is refused.
pub fn check_endpoint(config: &OpenAiConfig) -> Result<String, PoolError> {
    let url = without_credentials(&config.base_url);
    let unreachable = |why: String| PoolError::Unreachable {
        url: url.clone(),
        why,
    };
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(config.timeout.min(Duration::from_secs(30))))
        .build()
        .into();
    let key = config
        .api_key_env
        .as_deref()
        .and_then(|name| std::env::var(name).ok());
    let get = |path: &str| {
        let mut request = agent.get(format!("{}{path}", config.base_url));
        if let Some(key) = &key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        request.call()
    };
    let mut response = get("/models").map_err(|e| unreachable(e.to_string()))?;
    let status = response.status().as_u16();
    if status != 200 {
        return Err(unreachable(format!("HTTP {status}")));
    }
    let header = response
        .headers()
        .get("server")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body: serde_json::Value = response
        .body_mut()
        .read_json()
        .map_err(|e| unreachable(format!("not JSON: {e}")))?;
    let listed: Vec<&str> = body["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["id"].as_str())
        .collect();
    if !listed.contains(&config.model.as_str()) {
        return Err(PoolError::WrongModel {
            url,
            model: config.model.clone(),
            listed: if listed.is_empty() {
                "nothing".to_owned()
            } else {
                listed.join(", ")
            },
        });
    }
    let server = server_version(&agent, config).or(header);
    Ok(server.map_or_else(|| "unknown".to_owned(), |text| printable(&text)))
}

/// What a server says of itself, safe to print: control characters (a
/// terminal's escape sequences) dropped, at most 100 characters.
fn printable(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).take(100).collect()
}

/// vLLM's `/version` beside the API root, where the server has one.
fn server_version(agent: &ureq::Agent, config: &OpenAiConfig) -> Option<String> {
    let root = config.base_url.strip_suffix("/v1")?;
    let mut response = agent.get(format!("{root}/version")).call().ok()?;
    if response.status().as_u16() != 200 {
        return None;
    }
    let body: serde_json::Value = response.body_mut().read_json().ok()?;
    body["version"].as_str().map(|v| format!("vLLM {v}"))
}
