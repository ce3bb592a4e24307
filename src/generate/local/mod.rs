//! The local backend: the GGUF models codecal installs (Qwen2.5-Coder-0.5B
//! and -1.5B-Instruct, the first the embedded default run's model, and
//! SmolLM2-135M-Instruct, `codecal generate`'s when no model is named) on
//! candle, on the CPU or (with the `cuda` feature) a GPU.
//!
//! The prompt is run in one batched pass (prefill), then tokens are decoded
//! one at a time with the key/value cache; at every step the log-softmax
//! gives the chosen token's log-probability and the top alternatives.
//! Several prompts in flight (the backend's concurrency, `--parallel`)
//! share each decode step (`engine.rs`).
//! Decoding is greedy at temperature 0 and seeded sampling above it.
//! The last few prefilled prompts are kept (`Prefills`), so the answers
//! sampled from one prompt, asked one after the other, prefill it once.
//! Chat prompts are rendered with the model's ChatML template.

mod attention;
mod embedding;
mod engine;
mod kquant_int8;
#[cfg(target_arch = "x86_64")]
mod kquant_panels;
mod kquants;
mod llama;
mod logprobs;
mod packed;
#[cfg(target_arch = "x86_64")]
mod pair_vectors;
#[cfg(target_arch = "x86_64")]
mod panel_rows;
mod rope;
#[cfg(target_arch = "x86_64")]
mod tiles;
pub mod tokenizer;
mod vector_exp;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::thread::JoinHandle;

use candle_core::Device;
use candle_core::quantized::gguf_file;
use rand::SeedableRng;
use rand::distr::{Distribution, weighted::WeightedIndex};
use rand_chacha::ChaCha8Rng;
use tokenizers::Tokenizer;

use llama::{KvCache, Llama};
pub use llama::{Logits, Weights};
pub use logprobs::log_softmax;
use logprobs::top_k;

use super::{Alternative, Backend, BackendId, GenerateError, Generation, Params, Token, stop_at};
use crate::prompt::Prompt;

/// Prefill runs in chunks of this many tokens, bounding the attention matrix.
const PREFILL_CHUNK: usize = 512;

pub struct LocalBackend {
    name: String,
    /// The GGUF's sha256, in the backend's id (so in cache keys).
    file_sha256: String,
    decoder: Arc<Decoder>,
    /// The system turn the chat template adds when a chat has none.
    default_system: Option<String>,
    /// Prompts in flight at once, sharing each decode step.
    parallel: usize,
    /// To the engine thread; dropped first when the backend goes.
    requests: Option<Sender<engine::Request>>,
    engine: Option<JoinHandle<()>>,
}

/// The model with what turns its logits into tokens and text.
struct Decoder {
    model: Llama,
    tokenizer: Tokenizer,
    /// Ids that end a generation (`<|im_end|>`, `<|endoftext|>`).
    end_ids: Vec<u32>,
    /// The most sequences one decode step has advanced so far.
    widest_step: AtomicUsize,
    /// The prompts prefilled last, with their caches and last logits.
    prefills: std::sync::Mutex<Prefills>,
}

/// How many prefilled prompts are kept: a prompt's samples are asked
/// together, so a few cover the prompts in flight at once.
const PREFILLS_KEPT: usize = 4;

/// Prefilled prompts, most recent last. Reusing one gives the same numbers
/// as prefilling again: the cache is a copy of what the same pass wrote.
#[derive(Default)]
struct Prefills {
    entries: Vec<(Vec<u32>, KvCache, Vec<f32>)>,
    /// Prompts served from here, for tests.
    reused: usize,
}

impl Prefills {
    fn get(&mut self, prompt_ids: &[u32]) -> Option<(KvCache, Vec<f32>)> {
        let at = self
            .entries
            .iter()
            .position(|(ids, ..)| ids == prompt_ids)?;
        let entry = self.entries.remove(at);
        let found = (entry.1.clone(), entry.2.clone());
        self.entries.push(entry);
        self.reused += 1;
        Some(found)
    }

    fn put(&mut self, prompt_ids: &[u32], cache: &KvCache, logits: &[f32]) {
        if self.entries.len() >= PREFILLS_KEPT {
            self.entries.remove(0);
        }
        self.entries
            .push((prompt_ids.to_vec(), cache.clone(), logits.to_vec()));
    }
}

/// One prompt being answered: its cache, what it has generated, and its
/// sampler.
struct Sequence {
    prompt_ids: Vec<u32>,
    params: Params,
    cache: KvCache,
    rng: ChaCha8Rng,
    generated_ids: Vec<u32>,
    tokens: Vec<Token>,
    finish: &'static str,
}

impl Sequence {
    /// Where the token fed next sits: right after the last generated one.
    fn position(&self) -> usize {
        self.prompt_ids.len() + self.generated_ids.len() - 1
    }
}

/// How many prompts to keep in flight by default: two per core (a step's
/// products are too small to keep a core busy with one row each), at most 8,
/// and no more than the available memory allows at about 256 MB a sequence
/// (SmolLM2's key/value cache at 2,000 tokens is 92 MB, the logits and
/// intermediate rows a few MB more).
pub fn default_parallel() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let by_memory = available_memory_bytes().map_or(usize::MAX, |b| (b >> 28) as usize);
    (2 * cores).min(8).min(by_memory).max(1)
}

fn available_memory_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A generation with the ids behind it, for checks that rerun the model.
pub struct IdGeneration {
    pub generation: Generation,
    pub prompt_ids: Vec<u32>,
    pub generated_ids: Vec<u32>,
}

fn local_error(e: impl std::fmt::Display) -> GenerateError {
    GenerateError::Local(e.to_string())
}

impl LocalBackend {
    /// Loads a GGUF file; `name` identifies the model in caches and outputs.
    pub fn load(
        path: &Path,
        name: &str,
        device: &Device,
        weights: Weights,
    ) -> Result<LocalBackend, GenerateError> {
        let io = |e: std::io::Error| local_error(format!("{}: {e}", path.display()));
        let mut file = std::fs::File::open(path).map_err(io)?;
        let content = gguf_file::Content::read(&mut file)
            .map_err(|e| local_error(format!("{}: not a GGUF file: {e}", path.display())))?;
        let tokenizer = tokenizer::from_gguf(&content)
            .map_err(|e| local_error(format!("{}: {e}", path.display())))?;
        let model = Llama::from_gguf(&content, &mut file, device, weights)
            .map_err(|e| local_error(format!("{}: {e}", path.display())))?;
        drop(file);
        let end_ids = ["<|im_end|>", "<|endoftext|>"]
            .iter()
            .filter_map(|t| tokenizer.token_to_id(t))
            .collect();
        let template = content
            .metadata
            .get("tokenizer.chat_template")
            .and_then(|v| v.to_string().ok())
            .cloned()
            .unwrap_or_default();
        let decoder = Arc::new(Decoder {
            model,
            tokenizer,
            end_ids,
            widest_step: AtomicUsize::new(0),
            prefills: std::sync::Mutex::new(Prefills::default()),
        });
        let (requests, incoming) = channel();
        let engine = std::thread::Builder::new()
            .name("codecal-local-engine".into())
            .spawn({
                let decoder = decoder.clone();
                move || engine::run(decoder, incoming)
            })
            .map_err(|e| local_error(format!("cannot start the decoding thread: {e}")))?;
        Ok(LocalBackend {
            name: name.to_owned(),
            file_sha256: String::new(),
            decoder,
            default_system: default_system(&template),
            parallel: default_parallel(),
            requests: Some(requests),
            engine: Some(engine),
        })
    }

    /// Records the GGUF's sha256 (checked when it was installed) in the
    /// backend's id.
    pub fn with_file_sha256(mut self, sha256: &str) -> LocalBackend {
        self.file_sha256 = sha256.to_owned();
        self
    }

    /// Keeps up to `n` prompts in flight (at least 1). Answers do not depend
    /// on it beyond the rounding of a product with more rows.
    pub fn with_parallel(mut self, n: usize) -> LocalBackend {
        self.parallel = n.max(1);
        self
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.decoder.tokenizer
    }

    /// The most prompts one decode step has advanced together so far.
    pub fn widest_step(&self) -> usize {
        self.decoder.widest_step.load(Ordering::Relaxed)
    }

    /// How many prompts were served from the kept prefills so far.
    pub fn reused_prefills(&self) -> usize {
        self.decoder.prefills().reused
    }

    /// Drops the kept prefills, so that the next prompt is run in full:
    /// what a bench that times prefill needs before each run.
    pub fn forget_prefills(&self) {
        self.decoder.prefills().entries.clear();
    }

    /// The text the model sees for `prompt`: completion text as is, chat
    /// messages in ChatML with the assistant's turn opened.
    pub fn render(&self, prompt: &Prompt) -> String {
        match prompt {
            Prompt::Completion(text) => text.clone(),
            Prompt::Chat(messages) => {
                let mut out = String::new();
                let has_system = messages.first().is_some_and(|m| m.role == "system");
                if let (false, Some(system)) = (has_system, &self.default_system) {
                    out += &format!("<|im_start|>system\n{system}<|im_end|>\n");
                }
                for m in messages {
                    out += &format!("<|im_start|>{}\n{}<|im_end|>\n", m.role, m.content);
                }
                out + "<|im_start|>assistant\n"
            }
        }
    }

    pub fn encode(&self, text: &str) -> Result<Vec<u32>, GenerateError> {
        Ok(self
            .decoder
            .tokenizer
            .encode(text, false)
            .map_err(local_error)?
            .get_ids()
            .to_vec())
    }

    /// Generates, returning the ids too. The prompt joins the engine's
    /// batch and this waits for its answer.
    pub fn generate_ids(
        &self,
        prompt: &Prompt,
        params: &Params,
    ) -> Result<IdGeneration, GenerateError> {
        let prompt_ids = self.encode(&self.render(prompt))?;
        let stopped = || local_error("the decoding thread stopped");
        let (reply, answer) = channel();
        let request = engine::Request {
            prompt_ids,
            params: params.clone(),
            reply,
        };
        self.requests
            .as_ref()
            .ok_or_else(stopped)?
            .send(request)
            .map_err(|_| stopped())?;
        answer.recv().map_err(|_| stopped())?
    }

    /// Log-probabilities of `generated` after `prompt` from one batched pass
    /// over both (teacher forcing), without the key/value cache's steps.
    pub fn teacher_forced_logprobs(
        &self,
        prompt: &[u32],
        generated: &[u32],
    ) -> Result<Vec<f64>, GenerateError> {
        let model = &self.decoder.model;
        let all: Vec<u32> = prompt.iter().chain(generated).copied().collect();
        let logits = model
            .forward(&mut model.new_cache(), &all, 0, Logits::All)
            .and_then(|t| t.to_vec2::<f32>())
            .map_err(local_error)?;
        Ok(generated
            .iter()
            .enumerate()
            .map(|(i, &id)| log_softmax(&logits[prompt.len() + i - 1])[id as usize])
            .collect())
    }
}

impl Drop for LocalBackend {
    fn drop(&mut self) {
        // Closing the channel ends the engine's loop.
        self.requests.take();
        if let Some(engine) = self.engine.take() {
            let _ = engine.join();
        }
    }
}

impl Decoder {
    /// Prefills a prompt and chooses its first token: the sequence, and the
    /// token to feed next unless it has already ended.
    fn start(
        &self,
        prompt_ids: Vec<u32>,
        params: &Params,
    ) -> Result<(Sequence, Option<u32>), GenerateError> {
        if prompt_ids.is_empty() {
            return Err(local_error("the prompt is empty"));
        }
        let kept = self.prefills().get(&prompt_ids);
        let (cache, logits) = match kept {
            Some(kept) => kept,
            None => {
                let (cache, logits) = self.prefill(&prompt_ids)?;
                self.prefills().put(&prompt_ids, &cache, &logits);
                (cache, logits)
            }
        };
        let mut sequence = Sequence {
            prompt_ids,
            params: params.clone(),
            cache,
            rng: ChaCha8Rng::seed_from_u64(params.seed),
            generated_ids: Vec::new(),
            tokens: Vec::new(),
            finish: "length",
        };
        let next = self.advance(&mut sequence, &logits)?;
        Ok((sequence, next))
    }

    fn prefills(&self) -> std::sync::MutexGuard<'_, Prefills> {
        // Only the engine thread writes; a panic there leaves whole entries.
        self.prefills.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The prompt run in chunks: its cache and the last position's logits.
    fn prefill(&self, prompt_ids: &[u32]) -> Result<(KvCache, Vec<f32>), GenerateError> {
        let mut cache = self.model.new_cache();
        let mut logits = Vec::new();
        for (chunk_index, chunk) in prompt_ids.chunks(PREFILL_CHUNK).enumerate() {
            let position = chunk_index * PREFILL_CHUNK;
            logits = last_row(
                self.model
                    .forward(&mut cache, chunk, position, Logits::Last),
            )?;
        }
        Ok((cache, logits))
    }

    /// Chooses the sequence's next token from `logits` and records it: the
    /// token to feed next, or `None` when the sequence has ended (an end
    /// token, a stop string, or `max_tokens`).
    fn advance(
        &self,
        sequence: &mut Sequence,
        logits: &[f32],
    ) -> Result<Option<u32>, GenerateError> {
        let params = &sequence.params;
        if sequence.generated_ids.len() >= params.max_tokens {
            sequence.finish = "length";
            return Ok(None);
        }
        let log_probs = log_softmax(logits);
        let id = choose(logits, &log_probs, params.temperature, &mut sequence.rng)?;
        if self.end_ids.contains(&id) {
            sequence.finish = "stop";
            return Ok(None);
        }
        sequence.generated_ids.push(id);
        sequence.tokens.push(Token {
            token: self.token_text(id),
            logprob: log_probs[id as usize],
            top: top_k(&log_probs, params.top_logprobs)
                .into_iter()
                .map(|(i, logprob)| Alternative {
                    token: self.token_text(i),
                    logprob,
                })
                .collect(),
        });
        let text = self.decode(&sequence.generated_ids)?;
        if stop_at(&text, &params.stop, params.stop_after_text).is_some() {
            sequence.finish = "stop";
            return Ok(None);
        }
        if sequence.generated_ids.len() >= params.max_tokens {
            sequence.finish = "length";
            return Ok(None);
        }
        Ok(Some(id))
    }

    /// The answer of an ended sequence.
    fn finish(&self, sequence: Sequence) -> IdGeneration {
        let Sequence {
            prompt_ids,
            params,
            mut generated_ids,
            mut tokens,
            finish,
            ..
        } = sequence;
        // Every id was decoded once already, in `advance`.
        let mut text = self.decode(&generated_ids).unwrap_or_default();
        if let Some(cut) = stop_at(&text, &params.stop, params.stop_after_text) {
            // The token that completed a stop string is not part of the answer.
            text.truncate(cut);
            tokens.pop();
            generated_ids.pop();
        }
        IdGeneration {
            generation: Generation {
                text,
                completion_tokens: Some(tokens.len()),
                tokens,
                prompt_tokens: Some(prompt_ids.len()),
                finish_reason: Some(finish.to_owned()),
            },
            prompt_ids,
            generated_ids,
        }
    }

    fn decode(&self, ids: &[u32]) -> Result<String, GenerateError> {
        self.tokenizer.decode(ids, false).map_err(local_error)
    }

    fn token_text(&self, id: u32) -> String {
        self.tokenizer.decode(&[id], false).unwrap_or_default()
    }
}

impl Backend for LocalBackend {
    fn id(&self) -> BackendId {
        BackendId {
            kind: "local".to_owned(),
            model: self.name.clone(),
            model_sha256: self.file_sha256.clone(),
            ..BackendId::default()
        }
    }

    fn generate(&self, prompt: &Prompt, params: &Params) -> Result<Generation, GenerateError> {
        self.generate_ids(prompt, params).map(|g| g.generation)
    }

    fn concurrency(&self) -> usize {
        self.parallel
    }
}

fn last_row(logits: candle_core::Result<candle_core::Tensor>) -> Result<Vec<f32>, GenerateError> {
    logits
        .and_then(|t| t.squeeze(0))
        .and_then(|t| t.to_vec1::<f32>())
        .map_err(local_error)
}

/// The system prompt a ChatML template inserts when the chat has none: the
/// first system turn written out as literal text. Qwen's template opens
/// other system turns first (with tools, or the chat's own system message),
/// whose text is template code, not a prompt.
fn default_system(template: &str) -> Option<String> {
    const OPEN: &str = "<|im_start|>system";
    template.match_indices(OPEN).find_map(|(at, _)| {
        let after = &template[at + OPEN.len()..];
        // The newline is a real one or a Jinja escape, depending on the file.
        let after = after
            .strip_prefix('\n')
            .or_else(|| after.strip_prefix("\\n"))?;
        let text = &after[..after.find("<|im_end|>")?];
        let literal = !text.contains(['\'', '"', '{', '}', '+']);
        literal.then(|| text.to_owned())
    })
}

/// Greedy at temperature 0 (ties to the lowest id), else a seeded draw from
/// softmax(logits / temperature).
fn choose(
    logits: &[f32],
    log_probs: &[f64],
    temperature: f64,
    rng: &mut ChaCha8Rng,
) -> Result<u32, GenerateError> {
    if temperature <= 0.0 {
        return Ok(top_k(log_probs, 1)[0].0);
    }
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let weights: Vec<f64> = logits
        .iter()
        .map(|&l| ((l as f64 - max) / temperature).exp())
        .collect();
    let dist = WeightedIndex::new(&weights).map_err(local_error)?;
    Ok(dist.sample(rng) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_prompt_from_the_template() {
        let t = r"{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}";
        assert_eq!(
            default_system(t).as_deref(),
            Some("You are a helpful AI assistant named SmolLM, trained by Hugging Face")
        );
    }

    /// Qwen2.5's template (abridged) opens two system turns of template code
    /// before its literal default.
    #[test]
    fn system_prompt_from_a_template_with_tools() {
        let t = r"{%- if tools %}{{- '<|im_start|>system\n' }}{%- if messages[0]['role'] == 'system' %}{{- messages[0]['content'] }}{%- endif %}{{- '<|im_end|>\n' }}{%- else %}{%- if messages[0]['role'] == 'system' %}{{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}{%- else %}{{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}{%- endif %}{%- endif %}";
        assert_eq!(
            default_system(t).as_deref(),
            Some("You are Qwen, created by Alibaba Cloud. You are a helpful assistant.")
        );
    }
}
