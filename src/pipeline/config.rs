//! The `codecal run` configuration file (TOML) and its checks.
//!
//! Every key is documented in `configs/README.md`. Unknown keys are errors
//! (serde's `deny_unknown_fields`), and [`RunConfig::check`] finds missing
//! files, threshold files for another metric, unknown measure names and
//! unreachable servers before any stage starts, naming the key or file.

use std::path::{Path, PathBuf};

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use crate::calibrate::{CvStrategy, Method};
use crate::confidence::TOKEN_MEASURES;
use crate::confidence::reflective::Measure;
use crate::thresholds::file::{OperatingPointName, read_threshold};

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// The run directory's name under `runs_dir`.
    pub name: String,
    #[serde(default = "default_runs_dir")]
    pub runs_dir: PathBuf,
    pub corpus: CorpusConfig,
    #[serde(default)]
    pub retrieval: RetrievalConfig,
    #[serde(default)]
    pub prompt: PromptConfig,
    pub backends: Vec<BackendConfig>,
    #[serde(default)]
    pub generation: GenerationConfig,
    #[serde(default)]
    pub scoring: ScoringConfig,
    #[serde(default)]
    pub calibration: CalibrationConfig,
}

fn default_runs_dir() -> PathBuf {
    PathBuf::from("runs")
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CorpusConfig {
    /// `python-stdlib` (mined from the local Python), `mine` (a directory) or `codexglue` (JSONL files).
    pub source: String,
    /// `mine`: the source tree.
    pub dir: Option<PathBuf>,
    /// `mine`: `python` or `java`.
    pub language: Option<String>,
    /// `mine` and `python-stdlib`: path components that make a record's repo.
    #[serde(default = "one")]
    pub repo_depth: usize,
    /// `codexglue`: the JSONL files (plain or .gz), read and deduplicated by url.
    #[serde(default)]
    pub paths: Vec<PathBuf>,
    /// Query functions drawn per language; the rest of that language is the BM25 pool.
    #[serde(default = "hundred")]
    pub queries: usize,
    #[serde(default)]
    pub seed: u64,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetrievalConfig {
    /// `rank-bm25` (the seed's exact BM25) or `tantivy`.
    pub mode: String,
    pub k: usize,
    /// `same-repo` or `none`.
    pub exclude: String,
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        RetrievalConfig {
            mode: "rank-bm25".into(),
            k: 3,
            exclude: "same-repo".into(),
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct PromptConfig {
    /// A template file with [exemplar] and [query] blocks; default the seed's.
    pub template: Option<PathBuf>,
    /// `completion` or `chat`.
    pub style: Option<String>,
    /// Estimated-token budget (characters / 4).
    pub max_prompt_tokens: Option<usize>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BackendConfig {
    /// `local` or `openai`.
    pub kind: String,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
    #[serde(default = "eight")]
    pub concurrency: usize,
    #[serde(default = "timeout")]
    pub timeout_s: f64,
    #[serde(default = "six")]
    pub max_retries: usize,
    #[serde(default = "thousand")]
    pub retry_base_ms: u64,
    /// `local`: `f32`, `f16` or `quantized`.
    pub lm_weights: Option<String>,
    /// A reply without log-probabilities is an error (`openai`).
    #[serde(default = "yes")]
    pub require_logprobs: bool,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct GenerationConfig {
    pub max_tokens: usize,
    pub temperature: f64,
    pub stop: Vec<String>,
    pub top_logprobs: usize,
    pub seed: u64,
    pub first_k: Option<usize>,
    /// Reflective measures to ask for (names as `codecal generate --reflective`).
    pub reflective: Vec<String>,
    pub template_dir: Option<PathBuf>,
}

impl Default for GenerationConfig {
    fn default() -> Self {
        let params = crate::generate::Params::default();
        GenerationConfig {
            max_tokens: params.max_tokens,
            temperature: params.temperature,
            stop: params.stop,
            top_logprobs: params.top_logprobs,
            seed: params.seed,
            first_k: None,
            reflective: Vec::new(),
            template_dir: None,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScoringConfig {
    /// The similarity metric that decides correctness (a `codecal score` column).
    pub metric: String,
    /// The thresholds file for that metric (written by `codecal thresholds`).
    pub thresholds: PathBuf,
    pub operating_points: Vec<String>,
    /// Tokenization of the lexical metrics: `codexglue` or `whitespace`.
    pub tokenization: String,
}

impl Default for ScoringConfig {
    fn default() -> Self {
        ScoringConfig {
            metric: "sbert_cosine01".into(),
            thresholds: PathBuf::from("thresholds/sbert-minilm.toml"),
            operating_points: vec![
                "best-f1".into(),
                "high-precision".into(),
                "high-recall".into(),
            ],
            tokenization: "codexglue".into(),
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CalibrationConfig {
    /// Intrinsic measures to calibrate (see `confidence::TOKEN_MEASURES`).
    pub confidence: Vec<String>,
    pub method: String,
    pub cv: String,
    pub folds: usize,
    pub bins: usize,
    pub bootstrap: usize,
    pub seed: u64,
}

impl Default for CalibrationConfig {
    fn default() -> Self {
        CalibrationConfig {
            confidence: vec!["average_token_probability".into()],
            method: "platt".into(),
            cv: "group".into(),
            folds: 5,
            bins: 10,
            bootstrap: 1000,
            seed: 0,
        }
    }
}

fn yes() -> bool {
    true
}
fn one() -> usize {
    1
}
fn hundred() -> usize {
    100
}
fn eight() -> usize {
    8
}
fn six() -> usize {
    6
}
fn thousand() -> u64 {
    1000
}
fn timeout() -> f64 {
    120.0
}

/// A configuration that cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{key}: {message}")]
    Key { key: String, message: String },
}

fn key_error(key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::Key {
        key: key.to_owned(),
        message: message.into(),
    }
}

/// Parses a value of a clap enum, naming the key and the accepted values.
pub fn enum_value<T: ValueEnum>(key: &str, value: &str) -> Result<T, ConfigError> {
    T::from_str(value, true).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_owned()))
            .collect();
        key_error(
            key,
            format!(
                "unknown value {value:?} (expected one of: {})",
                names.join(", ")
            ),
        )
    })
}

impl RunConfig {
    /// Reads a config file; its relative paths are taken from the file's directory.
    pub fn read(path: &Path) -> Result<RunConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        RunConfig::parse(&text, path, base)
    }

    /// Parses config text; `source` names it in errors and relative paths
    /// are joined to `base` (`runs_dir` stays relative to the working directory).
    pub fn parse(text: &str, source: &Path, base: &Path) -> Result<RunConfig, ConfigError> {
        let mut config: RunConfig = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|span| text[..span.start.min(text.len())].lines().count().max(1));
            ConfigError::Parse {
                path: source.to_owned(),
                message: match line {
                    Some(line) => format!("line {line}: {}", e.message()),
                    None => e.message().to_owned(),
                },
            }
        })?;
        let resolve = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        };
        config.corpus.dir.as_mut().map(resolve);
        config.corpus.paths.iter_mut().for_each(resolve);
        config.prompt.template.as_mut().map(resolve);
        config.generation.template_dir.as_mut().map(resolve);
        resolve(&mut config.scoring.thresholds);
        Ok(config)
    }

    /// Checks everything that can be checked without running a stage.
    pub fn check(&self) -> Result<(), ConfigError> {
        self.check_corpus()?;
        enum_value::<crate::retrieve::RetrieveMode>("retrieval.mode", &self.retrieval.mode)?;
        enum_value::<crate::retrieve::Exclude>("retrieval.exclude", &self.retrieval.exclude)?;
        if self.retrieval.k == 0 {
            return Err(key_error("retrieval.k", "must be at least 1"));
        }
        if let Some(style) = &self.prompt.style {
            enum_value::<crate::prompt::PromptStyle>("prompt.style", style)?;
        }
        if let Some(template) = &self.prompt.template {
            must_exist("prompt.template", template)?;
        }
        if self.backends.is_empty() {
            return Err(key_error(
                "backends",
                "name at least one [[backends]] entry",
            ));
        }
        for (i, backend) in self.backends.iter().enumerate() {
            check_backend(&format!("backends[{i}]"), backend)?;
        }
        for name in &self.generation.reflective {
            enum_value::<Measure>("generation.reflective", name)?;
        }
        for name in &self.calibration.confidence {
            if !TOKEN_MEASURES.contains(&name.as_str()) {
                return Err(key_error(
                    "calibration.confidence",
                    format!(
                        "unknown measure {name:?} (expected one of: {})",
                        TOKEN_MEASURES.join(", ")
                    ),
                ));
            }
        }
        self.check_scoring()?;
        enum_value::<Method>("calibration.method", &self.calibration.method)?;
        enum_value::<CvStrategy>("calibration.cv", &self.calibration.cv)?;
        Ok(())
    }

    fn check_corpus(&self) -> Result<(), ConfigError> {
        let corpus = &self.corpus;
        match corpus.source.as_str() {
            "python-stdlib" => Ok(()),
            "mine" => {
                let dir = corpus.dir.as_ref().ok_or_else(|| {
                    key_error("corpus.dir", "needed when corpus.source = \"mine\"")
                })?;
                must_exist("corpus.dir", dir)?;
                let language = corpus.language.as_deref().unwrap_or("");
                enum_value::<crate::corpus::mine::Language>("corpus.language", language).map(|_| ())
            }
            "codexglue" => {
                if corpus.paths.is_empty() {
                    return Err(key_error(
                        "corpus.paths",
                        "needed when corpus.source = \"codexglue\"",
                    ));
                }
                corpus
                    .paths
                    .iter()
                    .try_for_each(|p| must_exist("corpus.paths", p))
            }
            other => Err(key_error(
                "corpus.source",
                format!("unknown value {other:?} (expected python-stdlib, mine or codexglue)"),
            )),
        }
    }

    fn check_scoring(&self) -> Result<(), ConfigError> {
        let scoring = &self.scoring;
        must_exist("scoring.thresholds", &scoring.thresholds)?;
        enum_value::<crate::score::Tokenization>("scoring.tokenization", &scoring.tokenization)?;
        if scoring.operating_points.is_empty() {
            return Err(key_error("scoring.operating_points", "name at least one"));
        }
        for point in &scoring.operating_points {
            let point = enum_value::<OperatingPointName>("scoring.operating_points", point)?;
            let found = read_threshold(&scoring.thresholds, point)
                .map_err(|e| key_error("scoring.thresholds", e.to_string()))?;
            if found.metric != scoring.metric {
                return Err(key_error(
                    "scoring.thresholds",
                    format!(
                        "{} holds thresholds for {}, but scoring.metric is {}",
                        scoring.thresholds.display(),
                        found.metric,
                        scoring.metric
                    ),
                ));
            }
        }
        Ok(())
    }
}

fn must_exist(key: &str, path: &Path) -> Result<(), ConfigError> {
    if path.exists() {
        Ok(())
    } else {
        Err(key_error(
            key,
            format!("{}: no such file or directory", path.display()),
        ))
    }
}

fn check_backend(key: &str, backend: &BackendConfig) -> Result<(), ConfigError> {
    match backend.kind.as_str() {
        "local" => {
            if let Some(weights) = &backend.lm_weights {
                check_weights(&format!("{key}.lm_weights"), weights)?;
            }
            Ok(())
        }
        "openai" => {
            let url = backend.base_url.as_deref().ok_or_else(|| {
                key_error(&format!("{key}.base_url"), "needed for kind = \"openai\"")
            })?;
            if backend.model.is_none() {
                return Err(key_error(
                    &format!("{key}.model"),
                    "needed for kind = \"openai\"",
                ));
            }
            if let Some(var) = &backend.api_key_env {
                if std::env::var(var).map_or(true, |v| v.is_empty()) {
                    return Err(key_error(
                        &format!("{key}.api_key_env"),
                        format!("the variable {var} is not set"),
                    ));
                }
            }
            reachable(url).map_err(|why| {
                key_error(
                    &format!("{key}.base_url"),
                    format!("{url} cannot be reached: {why}"),
                )
            })
        }
        other => Err(key_error(
            &format!("{key}.kind"),
            format!("unknown value {other:?} (expected local or openai)"),
        )),
    }
}

#[cfg(feature = "local")]
fn check_weights(key: &str, weights: &str) -> Result<(), ConfigError> {
    enum_value::<crate::generate::local::Weights>(key, weights).map(|_| ())
}

#[cfg(not(feature = "local"))]
fn check_weights(key: &str, _: &str) -> Result<(), ConfigError> {
    Err(key_error(
        key,
        "this codecal was built without the `local` feature",
    ))
}

/// Any HTTP answer from `{url}/models` means the server is there.
fn reachable(url: &str) -> Result<(), String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(std::time::Duration::from_secs(10)))
        .build()
        .into();
    agent
        .get(format!("{}/models", url.trim_end_matches('/')))
        .call()
        .map(|_| ())
        .map_err(|e| e.to_string())
}
