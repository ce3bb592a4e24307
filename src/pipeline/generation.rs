//! What every flow of `codecal run` shares about generation: the stage that
//! answers a run's prompts (a shard's share of them) with each generator (a
//! `[[backends]]` entry, or the entries of one pool), opening that backend,
//! and the run's decoding parameters. Not what the prompts are (each flow
//! writes its own `prompts.jsonl`) nor how answers are judged.

use super::PipelineError;
use super::artifacts::{failed, section, to_jsonl};
use super::config::{BackendConfig, BackendKind, ConfigError, RunConfig, key_error};
use super::{Books, Progress};
use crate::artifact::{create_dir, write_atomic};
use crate::choice::Choice;
use crate::confidence::reflective::{Measure, Templates, Wording};
use crate::generate::batch::read_prompts;
use crate::generate::cache::Cache;
use crate::generate::row::GenerationRow;
use crate::generate::stage::StageOptions;
use crate::generate::{Backend, Params};
use crate::models::ModelHome;
use crate::task::TaskKind;

/// What answers a run's prompts once: one `[[backends]]` entry, or every
/// entry of one pool. Its label names its files; a pool's is its first
/// entry's, so spreading a model over endpoints changes no file name.
pub(crate) struct Generator<'a> {
    pub label: String,
    pub members: Vec<&'a BackendConfig>,
}

/// The run's generators, in the order their first entry appears.
pub(crate) fn generators(config: &RunConfig) -> Vec<Generator<'_>> {
    let mut out: Vec<Generator> = Vec::new();
    for backend in &config.backends {
        let pooled = backend.pool.as_ref().and_then(|pool| {
            out.iter()
                .position(|g| g.members[0].pool.as_ref() == Some(pool))
        });
        match pooled {
            Some(i) => out[i].members.push(backend),
            None => out.push(Generator {
                label: backend_label(backend),
                members: vec![backend],
            }),
        }
    }
    out
}

/// What of a backend entry changes the answers, for the generation stage's
/// inputs: not where the server is, nor how it is asked (URL, key,
/// concurrency, timeouts, pool), so that a pooled or moved server reuses
/// the stage.
fn answer_section(backend: &BackendConfig) -> String {
    // Its fields in name order: the order the stage's input hash was
    // first taken in.
    #[derive(serde::Serialize)]
    struct AnswerSection<'a> {
        extra: &'a crate::generate::openai::ExtraBody,
        kind: &'a str,
        lm_weights: &'a Option<crate::generate::weights::Weights>,
        model: &'a Option<String>,
        require_logprobs: bool,
    }
    section(&AnswerSection {
        extra: &backend.extra,
        kind: backend.kind.choice_name(),
        lm_weights: &backend.lm_weights,
        model: &backend.model,
        require_logprobs: backend.require_logprobs,
    })
}

/// Entries that answer alike must be one pool, and a pool one model with
/// one request body: otherwise two generators would write the same files.
pub(crate) fn check_generators(config: &RunConfig) -> Result<(), ConfigError> {
    let index = |entry: &BackendConfig| {
        config
            .backends
            .iter()
            .position(|b| std::ptr::eq(b, entry))
            .unwrap_or_default()
    };
    let generators = generators(config);
    for generator in &generators {
        let (first, j) = (generator.members[0], index(generator.members[0]));
        for member in &generator.members[1..] {
            let (i, pool) = (index(member), member.pool.as_deref().unwrap_or_default());
            if member.model != first.model {
                return Err(key_error(
                    &format!("backends[{i}].model"),
                    format!(
                        "differs from backends[{j}]'s, in the same pool {pool:?}: a pool serves one model"
                    ),
                ));
            }
            if member.extra != first.extra {
                return Err(key_error(
                    &format!("backends[{i}].extra"),
                    format!(
                        "differs from backends[{j}]'s, in the same pool {pool:?}: a pool's endpoints must answer alike"
                    ),
                ));
            }
        }
    }
    for (g, generator) in generators.iter().enumerate() {
        if let Some(earlier) = generators[..g].iter().find(|e| e.label == generator.label) {
            return Err(key_error(
                &format!("backends[{}]", index(generator.members[0])),
                format!(
                    "answers as backends[{}] does (same kind and model); to spread one model over both endpoints give both the same pool = \"NAME\"",
                    index(earlier.members[0])
                ),
            ));
        }
    }
    Ok(())
}

/// A file-name-safe name for a backend and model.
pub(crate) fn backend_label(backend: &BackendConfig) -> String {
    let model = backend
        .model
        .as_deref()
        .unwrap_or("SmolLM2-135M-Instruct-Q4_1");
    let weights = match backend.kind {
        BackendKind::Local => format!("@{}", backend.lm_weights.unwrap_or_default()),
        _ => String::new(),
    };
    format!("{}-{model}{weights}", backend.kind)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._@-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The run's decoding parameters: the `[generation]` keys, and where one
/// is unset, the task's default.
pub(crate) fn generation_params(config: &RunConfig) -> Result<Params, PipelineError> {
    let g = &config.generation;
    let task = config.task();
    let (max_tokens, default_stop) = match task {
        TaskKind::Summarize => {
            let params = Params::default();
            (params.max_tokens, params.stop)
        }
        _ => config.dataset()?.generation_defaults(),
    };
    let mut stop = g.stop.clone().unwrap_or(default_stop);
    if task == TaskKind::Summarize {
        // Whatever the stops asked for, a summary ends where the template's
        // next block begins: a model that continues the pattern writes the
        // instruction after its summary, on the same line.
        let template =
            crate::prompt::Template::parse(&config.prompt.template_text()?, "the template")
                .map_err(|e| failed("generate", e))?;
        for line in template.stops() {
            if !stop.contains(&line) {
                stop.push(line);
            }
        }
    }
    Ok(Params {
        max_tokens: g.max_tokens.unwrap_or(max_tokens),
        temperature: g.temperature,
        stop,
        top_logprobs: g.top_logprobs,
        seed: g.seed,
        // A completed line starts after any blank line or fence a chat model
        // opens with, and ends at the newline after it.
        stop_after_text: task == TaskKind::LineCompletion,
    })
}

/// How tests are asked for, where the run wants `[generation] tests = k`:
/// greedily, with room for k assertions, ended where the block of
/// assertions ends (`task::examples::written`).
fn test_params(config: &RunConfig) -> Result<Option<Params>, PipelineError> {
    use crate::task::examples::written::{TEST_STOPS, TOKENS_PER_TEST};
    let k = config.generation.tests;
    if k == 0 {
        return Ok(None);
    }
    Ok(Some(Params {
        max_tokens: TOKENS_PER_TEST * k,
        temperature: 0.0,
        stop: TEST_STOPS.map(String::from).to_vec(),
        top_logprobs: 0,
        ..generation_params(config)?
    }))
}

pub(crate) fn generations(
    config: &RunConfig,
    generator: &Generator,
    home: &ModelHome,
    books: &mut Books,
) -> Result<(), PipelineError> {
    let label = generator.label.as_str();
    let wording = match config.task() {
        TaskKind::Summarize => Wording::Summary,
        _ => Wording::Code,
    };
    let templates = Templates::load(config.generation.template_dir.as_deref(), wording)
        .map_err(|e| failed("generate", e))?;
    let reflective: Vec<Measure> = config.generation.reflective.clone();
    let mut inputs = vec![
        books.file_hash("prompts.jsonl")?,
        answer_section(generator.members[0]),
        section(&config.generation),
        crate::confidence::measures_fingerprint(),
    ];
    inputs.extend(Measure::ALL.iter().map(|m| templates.hash(*m).to_owned()));
    let mut rows =
        read_prompts(&books.dir.join("prompts.jsonl")).map_err(|e| failed("generate", e))?;
    if let Some(shard) = books.shard {
        rows.retain(|row| shard.owns(&row.id));
        inputs.push(shard.to_string());
    }
    let samples = config.generation.samples;
    let tests = usize::from(config.generation.tests > 0);
    let steps = rows.len() * (1 + usize::from(!reflective.is_empty()) + samples + tests);
    let output = format!("generations/{label}.jsonl");
    let served = format!("generations/{label}.served.json");
    let on_progress = books.on_progress;
    books.item_stage(
        &format!("generate {label}"),
        &inputs,
        &[output.clone(), served.clone()],
        steps as u64,
        |dir| {
            let backend =
                open_backends(&generator.members, home).map_err(|e| failed("generate", e))?;
            let cache =
                Cache::open(&dir.join("cache.sqlite")).map_err(|e| failed("generate", e))?;
            let options = StageOptions {
                params: generation_params(config)?,
                first_k: config.generation.first_k,
                reflective,
                templates: &templates,
                samples,
                sample_temperature: config.generation.sample_temperature,
                tests: test_params(config)?,
            };
            let start = std::time::Instant::now();
            let mut rows =
                crate::generate::stage::run(backend.as_ref(), &cache, &rows, &options, &|| {
                    on_progress(Progress::Step)
                })
                .map_err(|e| failed("generate", e))?;
            let record = served_record(&mut rows, backend.as_ref(), start.elapsed());
            let text = to_jsonl(&rows);
            create_dir(&dir.join("generations"))?;
            write_atomic(&dir.join(&output), text.as_bytes())?;
            let record = serde_json::to_string_pretty(&record).unwrap_or_default() + "\n";
            write_atomic(&dir.join(&served), record.as_bytes())?;
            Ok(())
        },
    )
}

/// Takes what differs between two runs of the same answers (seconds, and
/// whether the cache had them) out of the rows, so that the rows are a
/// function of the prompts and the model alone, and returns it summed, with
/// each endpoint's record where the generator is a pool.
fn served_record(
    rows: &mut [GenerationRow],
    backend: &dyn Backend,
    elapsed: std::time::Duration,
) -> ServedRecord {
    let mut record = ServedRecord {
        stage_seconds: elapsed.as_secs_f64(),
        endpoints: backend.endpoint_records(),
        ..ServedRecord::default()
    };
    let mut take = |seconds: &mut Option<f64>, cached: &mut Option<bool>| {
        record.answers += 1;
        record.from_cache += usize::from(cached.take() == Some(true));
        record.backend_seconds += seconds.take().unwrap_or(0.0);
    };
    for row in rows.iter_mut() {
        take(&mut row.seconds, &mut row.cached);
        for sample in row.samples.iter_mut().flatten() {
            take(&mut sample.seconds, &mut sample.cached);
        }
    }
    record
}

/// What serving a generator's answers took, summed over its answers and
/// samples: `generations/<label>.served.json`.
#[derive(Default, serde::Serialize)]
struct ServedRecord {
    answers: usize,
    from_cache: usize,
    backend_seconds: f64,
    stage_seconds: f64,
    endpoints: Vec<crate::generate::pool::EndpointRecord>,
}

/// Why a `[[backends]]` entry could not be opened; each keeps its source.
#[derive(Debug, thiserror::Error)]
pub enum OpenBackendError {
    #[error("no backend")]
    NoBackend,
    #[error("an openai entry needs {0}")]
    Missing(&'static str),
    #[error(transparent)]
    OpenAi(#[from] crate::generate::openai::OpenAiConfigError),
    #[error(transparent)]
    Pool(#[from] crate::generate::pool::PoolError),
    #[error(transparent)]
    Config(#[from] super::config::ConfigError),
    #[error(transparent)]
    UnknownModel(#[from] crate::models::UnknownModel),
    #[error(transparent)]
    Setup(#[from] crate::models::SetupError),
    #[error(transparent)]
    Load(#[from] crate::generate::GenerateError),
    #[error("this codecal was built without the `local` feature")]
    NoLocalFeature,
}

/// One backend over entries that answer alike: the one entry's own, or a
/// pool over them (every endpoint asked `/models` first).
pub fn open_backends(
    members: &[&BackendConfig],
    home: &ModelHome,
) -> Result<Box<dyn Backend>, OpenBackendError> {
    match members {
        [] => return Err(OpenBackendError::NoBackend),
        [one] if one.pool.is_none() => return open_backend(one, home),
        _ => {}
    }
    let configs = members
        .iter()
        .map(|member| openai_config(member))
        .collect::<Result<Vec<_>, _>>()?;
    let pool = crate::generate::pool::PoolBackend::connect(configs)?;
    Ok(Box::new(pool))
}

/// The HTTP client's settings for an `openai` entry.
pub(crate) fn openai_config(
    config: &BackendConfig,
) -> Result<crate::generate::openai::OpenAiConfig, OpenBackendError> {
    let mut c = crate::generate::openai::OpenAiConfig::new(
        config
            .base_url
            .as_deref()
            .ok_or(OpenBackendError::Missing("base_url"))?,
        config
            .model
            .as_deref()
            .ok_or(OpenBackendError::Missing("model"))?,
    );
    c.api_key_env = config.api_key_env.clone();
    c.concurrency = config.concurrency;
    c.timeout = std::time::Duration::from_secs_f64(config.timeout_s.max(0.001));
    c.max_retries = config.max_retries;
    c.retry_base = std::time::Duration::from_millis(config.retry_base_ms);
    c.retry_max = std::time::Duration::from_secs_f64(config.max_wait_s.clamp(0.001, 3600.0));
    c.require_logprobs = config.require_logprobs;
    c.extra_body = config.extra.clone();
    Ok(c)
}

/// A backend as a `[[backends]]` entry describes it.
pub fn open_backend(
    config: &BackendConfig,
    home: &ModelHome,
) -> Result<Box<dyn Backend>, OpenBackendError> {
    match config.kind {
        BackendKind::Openai => {
            let backend = crate::generate::openai::OpenAiBackend::new(openai_config(config)?)?;
            Ok(Box::new(backend))
        }
        BackendKind::Local => open_local(config, home),
    }
}

#[cfg(feature = "local")]
fn open_local(
    config: &BackendConfig,
    home: &ModelHome,
) -> Result<Box<dyn Backend>, OpenBackendError> {
    use crate::generate::local::{LocalBackend, Weights};
    let weights = config.lm_weights.unwrap_or(Weights::F32);
    let model = crate::models::language_model(
        config
            .model
            .as_deref()
            .unwrap_or(crate::models::DEFAULT_LANGUAGE_MODEL),
    )?;
    let gguf = home.ensure_language_model(model)?;
    // The model name carries the weight layout: the two give different numbers.
    let label = backend_label(config);
    let name = label.strip_prefix("local-").unwrap_or(&label);
    let mut backend = LocalBackend::load(&gguf, name, &candle_core::Device::Cpu, weights)?
        .with_file_sha256(model.sha256);
    if let Some(n) = config.parallel {
        backend = backend.with_parallel(n);
    }
    Ok(Box::new(backend))
}

#[cfg(not(feature = "local"))]
fn open_local(_: &BackendConfig, _: &ModelHome) -> Result<Box<dyn Backend>, OpenBackendError> {
    Err(OpenBackendError::NoLocalFeature)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_backend_kind_is_refused_when_read_not_taken_for_local() {
        let error = toml::from_str::<BackendConfig>("kind = \"gpu\"").unwrap_err();
        assert!(
            error
                .message()
                .contains("unknown value \"gpu\" (expected one of: local, openai)"),
            "{error}"
        );
    }
}
