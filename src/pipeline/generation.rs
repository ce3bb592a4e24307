//! What every flow of `codecal run` shares about generation: the stage that
//! answers a run's prompts with each `[[backends]]` entry, opening that
//! backend, and the run's decoding parameters. Not what the prompts are
//! (each flow writes its own `prompts.jsonl`) nor how answers are judged.

use super::PipelineError;
use super::artifacts::{failed, section};
use super::config::{BackendConfig, RunConfig, enum_value};
use super::{Books, Progress};
use crate::artifact::{create_dir, write_atomic};
use crate::confidence::reflective::{Measure, Templates, Wording};
use crate::generate::batch::read_prompts;
use crate::generate::cache::Cache;
use crate::generate::stage::StageOptions;
use crate::generate::{Backend, Params};
use crate::models::ModelHome;
use crate::task::TaskKind;

/// A file-name-safe name for a backend and model.
pub(crate) fn backend_label(backend: &BackendConfig) -> String {
    let model = backend
        .model
        .as_deref()
        .unwrap_or("SmolLM2-135M-Instruct-Q4_1");
    let weights = match backend.kind.as_str() {
        "local" => format!("@{}", backend.lm_weights.as_deref().unwrap_or("f32")),
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
    let task = config.task()?;
    let (max_tokens, stop) = match task {
        TaskKind::Summarize => {
            let params = Params::default();
            (params.max_tokens, params.stop)
        }
        _ => config.dataset()?.generation_defaults(),
    };
    Ok(Params {
        max_tokens: g.max_tokens.unwrap_or(max_tokens),
        temperature: g.temperature,
        stop: g.stop.clone().unwrap_or(stop),
        top_logprobs: g.top_logprobs,
        seed: g.seed,
        // A completed line starts after any blank line or fence a chat model
        // opens with, and ends at the newline after it.
        stop_after_text: task == TaskKind::LineCompletion,
    })
}

pub(crate) fn generations(
    config: &RunConfig,
    backend_config: &BackendConfig,
    label: &str,
    home: &ModelHome,
    books: &mut Books,
) -> Result<(), PipelineError> {
    let wording = match config.task()? {
        TaskKind::Summarize => Wording::Summary,
        _ => Wording::Code,
    };
    let templates = Templates::load(config.generation.template_dir.as_deref(), wording)
        .map_err(|e| failed("generate", e))?;
    let reflective: Vec<Measure> = config
        .generation
        .reflective
        .iter()
        .map(|name| enum_value("generation.reflective", name))
        .collect::<Result<_, _>>()?;
    let mut inputs = vec![
        books.file_hash("prompts.jsonl")?,
        section(backend_config),
        section(&config.generation),
        crate::confidence::measures_fingerprint(),
    ];
    inputs.extend(Measure::ALL.iter().map(|m| templates.hash(*m).to_owned()));
    let rows = read_prompts(&books.dir.join("prompts.jsonl")).map_err(|e| failed("generate", e))?;
    let samples = config.generation.samples;
    let steps = rows.len() * (1 + usize::from(!reflective.is_empty()) + samples);
    let output = format!("generations/{label}.jsonl");
    let on_progress = books.on_progress;
    books.stage(
        &format!("generate {label}"),
        &inputs,
        std::slice::from_ref(&output),
        steps as u64,
        |dir| {
            let backend = open_backend(backend_config, home).map_err(|e| failed("generate", e))?;
            let cache =
                Cache::open(&dir.join("cache.sqlite")).map_err(|e| failed("generate", e))?;
            let options = StageOptions {
                params: generation_params(config)?,
                first_k: config.generation.first_k,
                reflective,
                templates: &templates,
                samples,
                sample_temperature: config.generation.sample_temperature,
            };
            let rows =
                crate::generate::stage::run(backend.as_ref(), &cache, &rows, &options, &|| {
                    on_progress(Progress::Step)
                })
                .map_err(|e| failed("generate", e))?;
            let text: String = rows.iter().map(|r| r.to_string() + "\n").collect();
            create_dir(&dir.join("generations"))?;
            write_atomic(&dir.join(&output), text.as_bytes())?;
            Ok(())
        },
    )
}

/// A backend as a `[[backends]]` entry describes it.
pub fn open_backend(config: &BackendConfig, home: &ModelHome) -> Result<Box<dyn Backend>, String> {
    match config.kind.as_str() {
        "openai" => {
            use crate::generate::openai::{OpenAiBackend, OpenAiConfig};
            let mut c = OpenAiConfig::new(
                config.base_url.as_deref().ok_or("no base_url")?,
                config.model.as_deref().ok_or("no model")?,
            );
            c.api_key_env = config.api_key_env.clone();
            c.concurrency = config.concurrency;
            c.timeout = std::time::Duration::from_secs_f64(config.timeout_s.max(0.001));
            c.max_retries = config.max_retries;
            c.retry_base = std::time::Duration::from_millis(config.retry_base_ms);
            c.retry_max =
                std::time::Duration::from_secs_f64(config.max_wait_s.clamp(0.001, 3600.0));
            c.require_logprobs = config.require_logprobs;
            c.extra_body = config.extra.clone();
            Ok(Box::new(OpenAiBackend::new(c).map_err(|e| e.to_string())?))
        }
        _ => open_local(config, home),
    }
}

#[cfg(feature = "local")]
fn open_local(config: &BackendConfig, home: &ModelHome) -> Result<Box<dyn Backend>, String> {
    use crate::generate::local::{LocalBackend, Weights};
    let weights = match &config.lm_weights {
        Some(w) => enum_value::<Weights>("lm_weights", w).map_err(|e| e.to_string())?,
        None => Weights::F32,
    };
    let model = crate::models::language_model(
        config
            .model
            .as_deref()
            .unwrap_or(crate::models::DEFAULT_LANGUAGE_MODEL),
    )
    .map_err(|e| e.to_string())?;
    let gguf = home
        .ensure_language_model(model)
        .map_err(|e| e.to_string())?;
    // The model name carries the weight layout: the two give different numbers.
    let label = backend_label(config);
    let name = label.strip_prefix("local-").unwrap_or(&label);
    let mut backend = LocalBackend::load(&gguf, name, &candle_core::Device::Cpu, weights)
        .map_err(|e| e.to_string())?
        .with_file_sha256(model.sha256);
    if let Some(n) = config.parallel {
        backend = backend.with_parallel(n);
    }
    Ok(Box::new(backend))
}

#[cfg(not(feature = "local"))]
fn open_local(_: &BackendConfig, _: &ModelHome) -> Result<Box<dyn Backend>, String> {
    Err("this codecal was built without the `local` feature".into())
}
