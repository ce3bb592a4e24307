//! The `codecal run` configuration file (TOML); its checks are in
//! `config_check`.
//!
//! Every key is documented in `configs/README.md`. Unknown keys are errors
//! (serde's `deny_unknown_fields`), and [`RunConfig::check`] finds missing
//! files, threshold files for another metric, unknown measure names and
//! unreachable servers before any stage starts, naming the key or file.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::calibrate::multical::MulticalibrationParams;
use crate::task::TaskKind;
use crate::thresholds::file::OperatingPointName;

/// The name of seed 000's length baseline among a task's confidence measures.
pub const LENGTH_BASELINE: &str = "length_baseline";
use crate::task::datasets::Dataset;

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// The run directory's name under `runs_dir`.
    pub name: String,
    #[serde(default = "default_runs_dir")]
    pub runs_dir: PathBuf,
    /// `summarize` (the default), `synthesis`, `line-completion`,
    /// `cruxeval-output` or `cruxeval-input`.
    #[serde(default = "summarize")]
    pub task: TaskKind,
    /// The problems of a task other than `summarize`.
    #[serde(default)]
    pub dataset: DatasetConfig,
    #[serde(default)]
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

fn summarize() -> TaskKind {
    TaskKind::Summarize
}

impl Default for CorpusConfig {
    fn default() -> Self {
        CorpusConfig {
            source: CorpusSource::PythonStdlib,
            dir: None,
            language: None,
            repo_depth: 1,
            paths: Vec::new(),
            queries: 100,
            seed: 0,
        }
    }
}

/// Where a task's problems come from and how its answers are judged.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct DatasetConfig {
    /// `humaneval`, `mbpp`, `mbpp-sanitized` or `mbpp-docstring` for `synthesis`; implied by
    /// the other tasks.
    pub name: Option<Dataset>,
    /// The dataset's file (line completion: a Python source tree). Default:
    /// HumanEval as the set-up installs it; the Python standard library for
    /// line completion.
    pub path: Option<PathBuf>,
    /// A seeded sample of this many problems; all of them when unset.
    pub problems: Option<usize>,
    pub seed: u64,
    /// Wall-clock limit of each sandboxed program.
    pub timeout_s: f64,
    /// Sandboxed programs at once.
    pub jobs: usize,
    /// `auto`, `bubblewrap` or `unshare` (`netns`, its former name).
    pub isolation: crate::sandbox::IsolationChoice,
    /// Turbulence: independent answers per instance (the paper's 5).
    pub rounds: u32,
    /// Turbulence: the questions to ask (1..=60; all when empty).
    pub questions: Vec<u32>,
    /// Turbulence: the first N instances of each question (all 100 when unset).
    pub instances: Option<u32>,
    /// Turbulence: fuzz inputs per answer (the paper's v1: 100).
    pub fuzz: u32,
    /// Turbulence: seconds the answer may run in all, its fixed tests and
    /// fuzz calls included (the upstream harness's 7 s per answer).
    pub answer_seconds: f64,
    /// Turbulence: `pylint` (the paper's static check) or `symtable`
    /// (undefined names only).
    pub static_check: crate::task::turbulence::StaticCheck,
    /// Turbulence: an upstream checkout's `Source_Code/` to judge with
    /// instead of codecal's own oracles.
    pub oracles: Option<PathBuf>,
    /// Turbulence with upstream oracles: a test file that does not compile
    /// passes, as the upstream harness lets it (false: it fails the answer).
    pub collection_errors_pass: bool,
}

impl Default for DatasetConfig {
    fn default() -> Self {
        DatasetConfig {
            name: None,
            path: None,
            problems: None,
            seed: 0,
            timeout_s: 3.0,
            jobs: 2,
            isolation: crate::sandbox::IsolationChoice::Auto,
            rounds: 5,
            questions: Vec::new(),
            instances: None,
            fuzz: 100,
            answer_seconds: 7.0,
            static_check: Default::default(),
            oracles: None,
            collection_errors_pass: true,
        }
    }
}

/// What answers a `[[backends]]` entry's prompts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// The local model on this machine (installed on first use).
    Local,
    /// An OpenAI-compatible HTTP server.
    Openai,
}

crate::choices!(BackendKind { Local => "local", Openai => "openai" });

/// Where a summarization run's functions come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CorpusSource {
    /// Mined from the local Python's standard library.
    PythonStdlib,
    /// Mined from a source tree (`corpus.dir`).
    Mine,
    /// CodeXGLUE code-to-text JSONL files (`corpus.paths`).
    Codexglue,
}

crate::choices!(CorpusSource { PythonStdlib => "python-stdlib", Mine => "mine", Codexglue => "codexglue" });

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CorpusConfig {
    /// `python-stdlib` (mined from the local Python), `mine` (a directory) or `codexglue` (JSONL files).
    pub source: CorpusSource,
    /// `mine`: the source tree.
    pub dir: Option<PathBuf>,
    /// `mine`: `python` or `java`.
    pub language: Option<crate::corpus::mine::Language>,
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
    pub mode: crate::retrieve::RetrieveMode,
    pub k: usize,
    /// `same-repo` or `self` (only the query itself).
    pub exclude: crate::retrieve::Exclude,
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        RetrievalConfig {
            mode: crate::retrieve::RetrieveMode::RankBm25,
            k: 3,
            exclude: crate::retrieve::Exclude::SameRepo,
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct PromptConfig {
    /// A template file with [exemplar] and [query] blocks; default the seed's.
    pub template: Option<PathBuf>,
    /// `completion` or `chat`.
    pub style: Option<crate::prompt::PromptStyle>,
    /// Estimated-token budget (characters / 4).
    pub max_prompt_tokens: Option<usize>,
    /// Summaries: each exemplar's and the query's code followed by ASAP's
    /// static-analysis facts (seed 001's Table V setting).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub asap: bool,
}

impl PromptConfig {
    /// The template's text: the configured file, or the seed's template.
    pub fn template_text(&self) -> Result<String, ConfigError> {
        match &self.template {
            Some(path) => std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                path: path.clone(),
                source,
            }),
            None => Ok(crate::prompt::SEED_TEMPLATE.to_owned()),
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BackendConfig {
    /// `local` or `openai`.
    pub kind: BackendKind,
    /// `openai`: the served model's name. `local`: which model to run, by
    /// name (`crate::models::LANGUAGE_MODELS`; default SmolLM2-135M).
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
    /// The longest single wait between attempts, `Retry-After` included
    /// (`openai`); a longer `Retry-After` fails the request.
    #[serde(default = "max_wait")]
    pub max_wait_s: f64,
    /// `local`: `f32`, `f16`, `quantized` or `mixed` (default `f32`); a
    /// wrong value is refused when the config is read, naming the key.
    pub lm_weights: Option<crate::generate::weights::Weights>,
    /// `local`: prompts in flight at once, sharing each decode step, 1 to
    /// 64; default from the cores and memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<usize>,
    /// A reply without log-probabilities is an error (`openai`).
    #[serde(default = "yes")]
    pub require_logprobs: bool,
    /// Server-specific fields merged into every request (`openai`), e.g.
    /// `extra = { repeat_penalty = 1.0 }` for llama.cpp's server.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: crate::generate::openai::ExtraBody,
    /// `openai`: entries with the same pool name (and model) are one
    /// backend spread over their endpoints (`generate::pool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct GenerationConfig {
    /// Default: the task's (100 for summaries, as the seed).
    pub max_tokens: Option<usize>,
    pub temperature: f64,
    /// Default: the task's (a newline for summaries, as the seed).
    pub stop: Option<Vec<String>>,
    pub top_logprobs: usize,
    pub seed: u64,
    pub first_k: Option<usize>,
    /// Reflective measures to ask for (names as `codecal generate --reflective`).
    pub reflective: Vec<crate::confidence::reflective::Measure>,
    pub template_dir: Option<PathBuf>,
    /// Answers sampled per prompt besides the main one, for confidence
    /// from agreement: 0 (none) or 2 to `MAX_SAMPLES`. Left out of the
    /// stage's inputs at 0, so older runs stay valid.
    #[serde(skip_serializing_if = "is_zero")]
    pub samples: usize,
    /// The temperature the samples are drawn at (above 0, at most 2).
    #[serde(skip_serializing_if = "is_one")]
    pub sample_temperature: f64,
    /// Tests the model writes per synthesis problem from its prompt alone,
    /// for `model_tests` and `dual_agreement`: 0 (none) to `MAX_TESTS`.
    /// Left out of the stage's inputs at 0, so older runs stay valid.
    #[serde(skip_serializing_if = "is_zero")]
    pub tests: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_one(t: &f64) -> bool {
    *t == 1.0
}

impl Default for GenerationConfig {
    fn default() -> Self {
        let params = crate::generate::Params::default();
        GenerationConfig {
            max_tokens: None,
            temperature: params.temperature,
            stop: None,
            top_logprobs: params.top_logprobs,
            seed: params.seed,
            first_k: None,
            reflective: Vec::new(),
            template_dir: None,
            samples: 0,
            sample_temperature: 1.0,
            tests: 0,
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
    pub operating_points: Vec<OperatingPointName>,
    /// Tokenization of the lexical metrics: `codexglue` or `whitespace`.
    pub tokenization: crate::score::Tokenization,
    /// Where the embedding model runs: `auto`, `cpu` or `cuda`.
    pub device: crate::score::Device,
}

impl Default for ScoringConfig {
    fn default() -> Self {
        ScoringConfig {
            metric: "sbert_cosine01".into(),
            thresholds: PathBuf::from(DEFAULT_SBERT_THRESHOLDS),
            operating_points: vec![
                OperatingPointName::BestF1,
                OperatingPointName::HighPrecision,
                OperatingPointName::HighRecall,
            ],
            tokenization: crate::score::Tokenization::Codexglue,
            device: crate::score::Device::Auto,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CalibrationConfig {
    /// Intrinsic measures to calibrate (see `confidence::TOKEN_MEASURES`).
    pub confidence: Vec<String>,
    pub method: crate::calibrate::MethodChoice,
    pub cv: crate::calibrate::CvStrategy,
    pub folds: usize,
    pub bins: usize,
    pub bootstrap: usize,
    pub seed: u64,
    /// Precisions among accepted items the decision cutoffs aim for.
    pub target_precision: Vec<f64>,
    /// The chance a cutoff's guarantee may fail.
    pub delta: f64,
    /// Target error rate among rejected items, as a precision; none: reject nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reject_precision: Option<f64>,
    /// How the candidate cutoffs are tested; none: the default procedure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub procedure: Option<crate::calibrate::Procedure>,
    /// The least share of items an accept cutoff must accept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_coverage: Option<f64>,
    /// With `method = "multicalibration"`: the base rescaler (default platt).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<crate::calibrate::Method>,
    /// With `method = "multicalibration"`: the columns whose groups are
    /// calibrated (see `multicalibration::GROUP_FEATURES`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub group_features: Vec<String>,
    /// With `method = "multicalibration"`: its settings
    /// (`[calibration.multicalibration]`, each key optional).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multicalibration: Option<MulticalibrationParams>,
    /// Measures to combine into one learned confidence (`combination`):
    /// logistic regression on them, out of fold in the calibration's own
    /// folds (a task run; at least two of the run's measures).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub combine: Vec<String>,
    /// Fixed rules named before the labels (`[[calibration.rules]]`: name,
    /// measure, at_least), each certified by one exact binomial test per
    /// target (a task run).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<crate::calibrate::cutoffs::rule::FixedRule>,
}

/// The name of the learned combination's column.
pub const COMBINATION: &str = "combination";

impl Default for CalibrationConfig {
    fn default() -> Self {
        CalibrationConfig {
            confidence: vec!["average_token_probability".into()],
            method: crate::calibrate::MethodChoice::Rescale(crate::calibrate::Method::Platt),
            cv: crate::calibrate::CvStrategy::Group,
            folds: 5,
            bins: 10,
            bootstrap: 1000,
            seed: 0,
            target_precision: vec![0.8, 0.9, 0.95],
            delta: 0.1,
            reject_precision: None,
            procedure: None,
            min_coverage: None,
            base: None,
            group_features: Vec::new(),
            multicalibration: None,
            combine: Vec::new(),
            rules: Vec::new(),
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
fn max_wait() -> f64 {
    crate::generate::openai::DEFAULT_MAX_WAIT_S as f64
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

pub(super) fn key_error(key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::Key {
        key: key.to_owned(),
        message: message.into(),
    }
}

/// A TOML error at byte `at` of `text`: its line and, where the line sets
/// a key, the key with its table (`line 12: calibration.method: ...`).
fn located_message(text: &str, at: usize, message: &str) -> String {
    let before = &text[..at.min(text.len())];
    let line = before.lines().count().max(1);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    // Named only when the error points at the value of a `key = value`
    // line (a missing field points at its whole table).
    let column = at.saturating_sub(line_start);
    let key = text[line_start..]
        .lines()
        .next()
        .and_then(|l| l.split_once('='))
        .filter(|(key, _)| column > key.len())
        .map(|(key, _)| key.trim())
        .filter(|key| !key.is_empty() && !key.starts_with('#'));
    let table = before[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim());
    match (table, key) {
        (Some(table), Some(key)) => format!("line {line}: {table}.{key}: {message}"),
        (None, Some(key)) => format!("line {line}: {key}: {message}"),
        _ => format!("line {line}: {message}"),
    }
}

impl RunConfig {
    /// Reads a config file; its relative paths are taken from the file's directory.
    /// The embedded default (`configs/default.toml`), its paths relative to
    /// its place in the repository.
    pub fn embedded_default() -> Result<RunConfig, ConfigError> {
        RunConfig::parse(
            super::DEFAULT_CONFIG,
            Path::new("configs/default.toml (built in)"),
            Path::new("configs"),
        )
    }

    pub fn read(path: &Path) -> Result<RunConfig, ConfigError> {
        let text = crate::artifact::read_regular_text(path, crate::artifact::JSON_CAP_BYTES)
            .map_err(|source| ConfigError::Read {
                path: path.to_owned(),
                source,
            })?;
        let base = path.parent().unwrap_or(Path::new("."));
        RunConfig::parse(&text, path, base)
    }

    /// Parses config text; `source` names it in errors and relative paths
    /// are joined to `base` (`runs_dir` stays relative to the working directory).
    pub fn parse(text: &str, source: &Path, base: &Path) -> Result<RunConfig, ConfigError> {
        let mut config: RunConfig = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: source.to_owned(),
            message: match e.span() {
                Some(span) => located_message(text, span.start, e.message()),
                None => e.message().to_owned(),
            },
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
        config.dataset.path.as_mut().map(resolve);
        config.dataset.oracles.as_mut().map(resolve);
        resolve(&mut config.scoring.thresholds);
        Ok(config)
    }

    pub fn task(&self) -> TaskKind {
        self.task
    }

    /// The dataset a task other than `summarize` reads.
    pub fn dataset(&self) -> Result<Dataset, ConfigError> {
        let implied = match self.task {
            TaskKind::Summarize => None,
            TaskKind::Synthesis => {
                return match self.dataset.name {
                    Some(dataset) => match dataset {
                        Dataset::Humaneval
                        | Dataset::Mbpp
                        | Dataset::MbppSanitized
                        | Dataset::MbppDocstring => Ok(dataset),
                        _ => Err(key_error(
                            "dataset.name",
                            "synthesis takes humaneval, mbpp, mbpp-sanitized or mbpp-docstring",
                        )),
                    },
                    None => Ok(Dataset::Humaneval),
                };
            }
            TaskKind::LineCompletion => Some(Dataset::LineCompletion),
            TaskKind::CruxevalOutput => Some(Dataset::CruxevalOutput),
            TaskKind::CruxevalInput => Some(Dataset::CruxevalInput),
            TaskKind::RevalCoverage => Some(Dataset::RevalCoverage),
            TaskKind::RevalState => Some(Dataset::RevalState),
            TaskKind::RevalPath => Some(Dataset::RevalPath),
            TaskKind::RevalOutput => Some(Dataset::RevalOutput),
            TaskKind::Turbulence => Some(Dataset::Turbulence),
        };
        implied.ok_or_else(|| key_error("task", "summarize reads a corpus, not a dataset"))
    }
}

/// The thresholds shipped for `sbert_cosine01`, chosen on human ratings.
pub const DEFAULT_SBERT_THRESHOLDS: &str = "thresholds/sbert-minilm.toml";

pub use super::config_check::{MAX_CONCURRENCY, MAX_PARALLEL, MAX_SAMPLES, MAX_TESTS};

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
