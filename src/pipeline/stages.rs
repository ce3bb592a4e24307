//! The stages of `codecal run`, each a call into its library module with
//! the run directory's artifacts as input and output.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::config::{BackendConfig, RunConfig, enum_value};
use super::{Books, PipelineError, Progress, file_sha256, hash_strings};
use crate::artifact::{create_dir, write_atomic};
use crate::confidence::reflective::{Measure, Templates, Wording};
use crate::corpus::mine::{Language, MineOptions, mine_tree, python_stdlib};
use crate::corpus::{Record, dedupe, read_codexglue, to_jsonl};
use crate::generate::batch::read_prompts;
use crate::generate::cache::Cache;
use crate::generate::stage::StageOptions;
use crate::generate::{Backend, Params};
use crate::models::ModelHome;
use crate::prompt::{PromptStyle, Template};
use crate::retrieve::{ExemplarSearch, PromptOptions, RetrieveMode};
use crate::task::TaskKind;

/// A stage failed for a reason of its own.
pub(crate) fn failed(stage: &str, e: impl std::fmt::Display) -> PipelineError {
    PipelineError::Stage {
        stage: stage.to_owned(),
        message: e.to_string(),
    }
}

fn section(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

pub(crate) fn all(config: &RunConfig, books: &mut Books) -> Result<(), PipelineError> {
    if config.task()? != TaskKind::Summarize {
        return super::tasks::all(config, books);
    }
    records(config, books)?;
    sample(config, books)?;
    prompts(config, books)?;
    let home = ModelHome::from_env().map_err(|e| failed("generate", e))?;
    let mut labels = Vec::new();
    for backend in &config.backends {
        let label = backend_label(backend);
        generations(config, backend, &label, &home, books)?;
        scores(config, &label, &home, books)?;
        labels.push(label);
    }
    let mut inputs = vec![
        section(&config.scoring),
        section(&config.calibration),
        std::fs::read_to_string(&config.scoring.thresholds).unwrap_or_default(),
    ];
    for label in &labels {
        inputs.push(books.file_hash(&format!("generations/{label}.jsonl"))?);
        inputs.push(books.file_hash(&format!("scores/{label}.csv"))?);
    }
    books.stage("calibrate", &inputs, &["report.md".into()], 0, |dir| {
        super::report::calibrate_and_report(config, dir, &labels)
    })
}

fn records(config: &RunConfig, books: &mut Books) -> Result<(), PipelineError> {
    let corpus = &config.corpus;
    let mut inputs = vec![section(corpus)];
    match corpus.source.as_str() {
        "codexglue" => {
            for path in &corpus.paths {
                inputs.push(file_sha256(path)?);
            }
        }
        _ => inputs.push(tree_fingerprint(&mine_root(config)?)),
    }
    books.stage("records", &inputs, &["records.jsonl".into()], 0, |dir| {
        let records = read_corpus(config).map_err(|e| failed("records", e))?;
        write_atomic(&dir.join("records.jsonl"), to_jsonl(&records).as_bytes())?;
        Ok(())
    })
}

fn mine_root(config: &RunConfig) -> Result<PathBuf, PipelineError> {
    match config.corpus.source.as_str() {
        "python-stdlib" => python_stdlib().map_err(|e| failed("records", e)),
        _ => Ok(config.corpus.dir.clone().unwrap_or_default()),
    }
}

fn read_corpus(config: &RunConfig) -> Result<Vec<Record>, String> {
    let corpus = &config.corpus;
    let mut records = Vec::new();
    if corpus.source == "codexglue" {
        for path in &corpus.paths {
            records.extend(read_codexglue(path, false).map_err(|e| e.to_string())?.0);
        }
        dedupe(&mut records);
        return Ok(records);
    }
    let language = match corpus.source.as_str() {
        "python-stdlib" => Language::Python,
        _ => enum_value::<Language>("corpus.language", corpus.language.as_deref().unwrap_or(""))
            .map_err(|e| e.to_string())?,
    };
    let root = mine_root(config).map_err(|e| e.to_string())?;
    let options = MineOptions {
        language,
        repo_depth: corpus.repo_depth,
    };
    Ok(mine_tree(&root, options).map_err(|e| e.to_string())?.0)
}

/// Records of each language, languages in name order.
fn by_language(records: Vec<Record>) -> BTreeMap<String, Vec<Record>> {
    let mut groups: BTreeMap<String, Vec<Record>> = BTreeMap::new();
    for record in records {
        groups
            .entry(record.language.clone())
            .or_default()
            .push(record);
    }
    groups
}

fn sample(config: &RunConfig, books: &mut Books) -> Result<(), PipelineError> {
    let inputs = vec![
        books.file_hash("records.jsonl")?,
        config.corpus.queries.to_string(),
        config.corpus.seed.to_string(),
    ];
    let outputs = ["queries.jsonl".to_owned(), "pool.jsonl".to_owned()];
    books.stage("sample", &inputs, &outputs, 0, |dir| {
        let records = read_records(&dir.join("records.jsonl"))?;
        let (mut queries, mut pool) = (Vec::new(), Vec::new());
        for (_, records) in by_language(records) {
            let (q, p) =
                crate::corpus::sample(&records, config.corpus.queries, config.corpus.seed, false);
            queries.extend(q);
            pool.extend(p);
        }
        write_atomic(&dir.join("queries.jsonl"), to_jsonl(&queries).as_bytes())?;
        write_atomic(&dir.join("pool.jsonl"), to_jsonl(&pool).as_bytes())?;
        Ok(())
    })
}

fn read_records(path: &Path) -> Result<Vec<Record>, PipelineError> {
    read_codexglue(path, true)
        .map(|(records, _)| records)
        .map_err(|e| PipelineError::Artifact {
            path: path.to_owned(),
            message: e.to_string(),
        })
}

fn prompts(config: &RunConfig, books: &mut Books) -> Result<(), PipelineError> {
    let template_text = match &config.prompt.template {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| failed("prompts", format!("{}: {e}", path.display())))?,
        None => crate::prompt::SEED_TEMPLATE.to_owned(),
    };
    let inputs = vec![
        books.file_hash("queries.jsonl")?,
        books.file_hash("pool.jsonl")?,
        section(&config.retrieval),
        section(&config.prompt),
        template_text.clone(),
    ];
    books.stage("prompts", &inputs, &["prompts.jsonl".into()], 0, |dir| {
        let template =
            Template::parse(&template_text, "prompt.template").map_err(|e| failed("prompts", e))?;
        let style = match &config.prompt.style {
            Some(s) => enum_value::<PromptStyle>("prompt.style", s)?,
            None => PromptStyle::Completion,
        };
        let mode = enum_value::<RetrieveMode>("retrieval.mode", &config.retrieval.mode)?;
        let exclude = enum_value("retrieval.exclude", &config.retrieval.exclude)?;
        let pools = by_language(read_records(&dir.join("pool.jsonl"))?);
        let mut out = String::new();
        for (language, queries) in by_language(read_records(&dir.join("queries.jsonl"))?) {
            let pool = pools.get(&language).cloned().unwrap_or_default();
            let fingerprint = hash_strings(&[to_jsonl(&pool)]);
            let search = ExemplarSearch {
                mode,
                k: config.retrieval.k,
                exclude,
                same_file: false,
                index: Some((dir.join(format!("index-{language}")), fingerprint)),
            };
            let hits = crate::retrieve::find_exemplars(&pool, &queries, &search)
                .map_err(|e| failed("prompts", e))?;
            let options = PromptOptions {
                template: &template,
                style,
                budget: config.prompt.max_prompt_tokens,
            };
            out += &crate::retrieve::prompts_jsonl(&pool, &queries, &hits, &options);
        }
        write_atomic(&dir.join("prompts.jsonl"), out.as_bytes())?;
        Ok(())
    })
}

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
    let (max_tokens, stop) = match config.task()? {
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
    ];
    inputs.extend(Measure::ALL.iter().map(|m| templates.hash(*m).to_owned()));
    let rows = read_prompts(&books.dir.join("prompts.jsonl")).map_err(|e| failed("generate", e))?;
    let steps = rows.len() * (1 + usize::from(!reflective.is_empty()));
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
            c.require_logprobs = config.require_logprobs;
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
    let gguf = home.ensure_smollm2().map_err(|e| e.to_string())?;
    // The model name carries the weight layout: the two give different numbers.
    let label = backend_label(config);
    let name = label.strip_prefix("local-").unwrap_or(&label);
    let backend = LocalBackend::load(&gguf, name, &candle_core::Device::Cpu, weights)
        .map_err(|e| e.to_string())?;
    Ok(Box::new(backend))
}

#[cfg(not(feature = "local"))]
fn open_local(_: &BackendConfig, _: &ModelHome) -> Result<Box<dyn Backend>, String> {
    Err("this codecal was built without the `local` feature".into())
}

fn scores(
    config: &RunConfig,
    label: &str,
    home: &ModelHome,
    books: &mut Books,
) -> Result<(), PipelineError> {
    let generations = format!("generations/{label}.jsonl");
    let inputs = vec![
        books.file_hash(&generations)?,
        config.scoring.tokenization.clone(),
        config.scoring.device.clone(),
    ];
    let output = format!("scores/{label}.csv");
    books.stage(
        &format!("score {label}"),
        &inputs,
        std::slice::from_ref(&output),
        0,
        |dir| {
            let pairs = read_jsonl(&dir.join(&generations))?
                .iter()
                .map(|row| crate::score::Pair {
                    id: text_field(row, "id"),
                    reference: text_field(row, "reference"),
                    candidate: text_field(row, "text"),
                })
                .collect::<Vec<_>>();
            let scores = score_pairs(config, home, &pairs)?;
            create_dir(&dir.join("scores"))?;
            write_atomic(
                &dir.join(&output),
                crate::report::scores_csv(&scores).as_bytes(),
            )?;
            Ok(())
        },
    )
}

#[cfg(feature = "onnx")]
fn score_pairs(
    config: &RunConfig,
    home: &ModelHome,
    pairs: &[crate::score::Pair],
) -> Result<Vec<crate::score::PairScores>, PipelineError> {
    use crate::score::{EmbedOptions, OnnxEmbedder, Scorer};
    let tokenization = enum_value("scoring.tokenization", &config.scoring.tokenization)?;
    let device = enum_value("scoring.device", &config.scoring.device)?;
    let files = home
        .ensure_minilm_on(device)
        .map_err(|e| failed("score", e))?;
    let options = EmbedOptions {
        device,
        ..EmbedOptions::default()
    };
    let embedder = OnnxEmbedder::new(&files, &options).map_err(|e| failed("score", e))?;
    Scorer::new(embedder, tokenization)
        .score(pairs, |_, _| {})
        .map_err(|e| failed("score", e))
}

#[cfg(not(feature = "onnx"))]
fn score_pairs(
    _: &RunConfig,
    _: &ModelHome,
    _: &[crate::score::Pair],
) -> Result<Vec<crate::score::PairScores>, PipelineError> {
    Err(failed(
        "score",
        "this codecal was built without the `onnx` feature",
    ))
}

pub(crate) fn read_jsonl(path: &Path) -> Result<Vec<Value>, PipelineError> {
    let error = |message: String| PipelineError::Artifact {
        path: path.to_owned(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| error(e.to_string()))?;
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|e| error(format!("line {}: {e}", i + 1)))
        })
        .collect()
}

pub(crate) fn text_field(row: &Value, key: &str) -> String {
    row.get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

/// Paths, sizes and modification times of the files under `root`: a tree
/// that changed is mined again.
fn tree_fingerprint(root: &Path) -> String {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let path = entry.path();
            match entry.metadata() {
                Ok(m) if m.is_dir() => walk(&path, out),
                Ok(m) => {
                    let modified = m
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
                    out.push(format!("{} {} {:?}", path.display(), m.len(), modified));
                }
                Err(_) => {}
            }
        }
    }
    let mut lines = vec![root.display().to_string()];
    walk(root, &mut lines);
    hash_strings(&lines)
}
