//! The `codecal run` configuration file (TOML) and its checks.
//!
//! Every key is documented in `configs/README.md`. Unknown keys are errors
//! (serde's `deny_unknown_fields`), and [`RunConfig::check`] finds missing
//! files, threshold files for another metric, unknown measure names and
//! unreachable servers before any stage starts, naming the key or file.

use std::path::{Path, PathBuf};

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use super::multicalibration::GROUP_FEATURES;
use crate::calibrate::multical::MulticalibrationParams;
use crate::calibrate::{CvStrategy, Method};
use crate::confidence::TOKEN_MEASURES;
use crate::confidence::reflective::Measure;
use crate::task::TaskKind;

/// The name of seed 000's length baseline among a task's confidence measures.
pub const LENGTH_BASELINE: &str = "length_baseline";
use crate::task::datasets::Dataset;
use crate::thresholds::file::{OperatingPointName, read_threshold};

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
    pub task: String,
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

fn summarize() -> String {
    "summarize".into()
}

impl Default for CorpusConfig {
    fn default() -> Self {
        CorpusConfig {
            source: "python-stdlib".into(),
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
    /// `humaneval`, `mbpp` or `mbpp-sanitized` for `synthesis`; implied by
    /// the other tasks.
    pub name: Option<String>,
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
    pub isolation: String,
    /// Turbulence: independent answers per instance (the paper's 5).
    pub rounds: u32,
    /// Turbulence: the questions to ask (1..=60; all when empty).
    pub questions: Vec<u32>,
    /// Turbulence: the first N instances of each question (all 100 when unset).
    pub instances: Option<u32>,
    /// Turbulence: fuzz inputs per answer (the paper's v1: 100).
    pub fuzz: u32,
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
            isolation: "auto".into(),
            rounds: 5,
            questions: Vec::new(),
            instances: None,
            fuzz: 100,
            oracles: None,
            collection_errors_pass: true,
        }
    }
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

impl PromptConfig {
    /// The template's text: the configured file, or the seed's template.
    pub fn template_text(&self) -> Result<String, String> {
        match &self.template {
            Some(path) => {
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
            }
            None => Ok(crate::prompt::SEED_TEMPLATE.to_owned()),
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BackendConfig {
    /// `local` or `openai`.
    pub kind: String,
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
    /// `local`: `f32`, `f16` or `quantized`.
    pub lm_weights: Option<String>,
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
    pub extra: serde_json::Map<String, serde_json::Value>,
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
    pub reflective: Vec<String>,
    pub template_dir: Option<PathBuf>,
    /// Answers sampled per prompt besides the main one, for confidence
    /// from agreement: 0 (none) or 2 to `MAX_SAMPLES`. Left out of the
    /// stage's inputs at 0, so older runs stay valid.
    #[serde(skip_serializing_if = "is_zero")]
    pub samples: usize,
    /// The temperature the samples are drawn at (above 0, at most 2).
    #[serde(skip_serializing_if = "is_one")]
    pub sample_temperature: f64,
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
    /// Where the embedding model runs: `auto`, `cpu` or `cuda`.
    pub device: String,
}

impl Default for ScoringConfig {
    fn default() -> Self {
        ScoringConfig {
            metric: "sbert_cosine01".into(),
            thresholds: PathBuf::from(DEFAULT_SBERT_THRESHOLDS),
            operating_points: vec![
                "best-f1".into(),
                "high-precision".into(),
                "high-recall".into(),
            ],
            tokenization: "codexglue".into(),
            device: "auto".into(),
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
    pub base: Option<String>,
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
}

/// The name of the learned combination's column.
pub const COMBINATION: &str = "combination";

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
            target_precision: vec![0.8, 0.9, 0.95],
            delta: 0.1,
            reject_precision: None,
            procedure: None,
            min_coverage: None,
            base: None,
            group_features: Vec::new(),
            multicalibration: None,
            combine: Vec::new(),
        }
    }
}

/// `[calibration] method` for multicalibration after `base`.
pub(crate) const MULTICALIBRATION: &str = "multicalibration";

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
        config.dataset.path.as_mut().map(resolve);
        config.dataset.oracles.as_mut().map(resolve);
        resolve(&mut config.scoring.thresholds);
        Ok(config)
    }

    /// Checks everything that can be checked without running a stage.
    pub fn check(&self) -> Result<(), ConfigError> {
        // The run directory is runs_dir/name; `--fresh` may delete it, so
        // the name must never reach outside it or be runs_dir itself.
        let one_component = {
            let mut parts = Path::new(&self.name).components();
            matches!(
                (parts.next(), parts.next()),
                (Some(std::path::Component::Normal(_)), None)
            )
        };
        if !one_component {
            return Err(key_error(
                "name",
                format!(
                    "{:?} must be one path component: not empty, no `/`, not `.` or `..`",
                    self.name
                ),
            ));
        }
        if self.task()? != TaskKind::Summarize {
            return self.check_task();
        }
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
        self.check_scoring()?;
        self.check_generation_and_calibration()
    }

    /// The checks every task shares: backends, measures, calibration.
    fn check_generation_and_calibration(&self) -> Result<(), ConfigError> {
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
            let baseline = name == LENGTH_BASELINE && self.task()? != TaskKind::Summarize;
            if !TOKEN_MEASURES.contains(&name.as_str()) && !baseline {
                return Err(key_error(
                    "calibration.confidence",
                    format!(
                        "unknown measure {name:?} (expected one of: {})",
                        TOKEN_MEASURES.join(", ")
                    ),
                ));
            }
        }
        self.check_rescaling()?;
        self.check_combine()?;
        enum_value::<CvStrategy>("calibration.cv", &self.calibration.cv)?;
        self.check_ranges()
    }

    /// Every measure to combine is one the run calibrates, and there are two.
    fn check_combine(&self) -> Result<(), ConfigError> {
        let combine = &self.calibration.combine;
        if combine.is_empty() {
            return Ok(());
        }
        if self.task()? == TaskKind::Summarize {
            return Err(key_error(
                "calibration.combine",
                "a learned combination is made in task runs only",
            ));
        }
        let mut known: Vec<String> = self
            .calibration
            .confidence
            .iter()
            .chain(&self.generation.reflective)
            .cloned()
            .collect();
        if self.generation.samples > 0 {
            known.extend(crate::confidence::agreement::CODE_MEASURES.map(String::from));
        }
        if let Some(unknown) = combine.iter().find(|m| !known.contains(m)) {
            return Err(key_error(
                "calibration.combine",
                format!(
                    "{unknown:?} is not a measure this run calibrates (it calibrates: {})",
                    known.join(", ")
                ),
            ));
        }
        let mut distinct = combine.clone();
        distinct.sort();
        distinct.dedup();
        if distinct.len() < 2 {
            return Err(key_error(
                "calibration.combine",
                "name at least two different measures",
            ));
        }
        Ok(())
    }

    /// The method (or multicalibration, its base and its group features).
    fn check_rescaling(&self) -> Result<(), ConfigError> {
        let c = &self.calibration;
        if c.method != MULTICALIBRATION {
            enum_value::<Method>("calibration.method", &c.method)?;
            if !c.group_features.is_empty() || c.multicalibration.is_some() {
                return Err(key_error(
                    "calibration.group_features",
                    "group_features and [calibration.multicalibration] need method = \"multicalibration\"",
                ));
            }
            return Ok(());
        }
        let base = enum_value::<Method>("calibration.base", c.base.as_deref().unwrap_or("platt"))?;
        if base == Method::None {
            return Err(key_error(
                "calibration.base",
                "multicalibration starts from a rescaler; none is not one",
            ));
        }
        if let Some(params) = &c.multicalibration {
            params
                .check()
                .map_err(|e| key_error("calibration.multicalibration", e.to_string()))?;
        }
        if c.group_features.is_empty() {
            return Err(key_error(
                "calibration.group_features",
                format!(
                    "multicalibration needs at least one of: {}",
                    GROUP_FEATURES.join(", ")
                ),
            ));
        }
        match c
            .group_features
            .iter()
            .find(|f| !GROUP_FEATURES.contains(&f.as_str()))
        {
            Some(unknown) => Err(key_error(
                "calibration.group_features",
                format!(
                    "unknown feature {unknown:?} (expected one of: {})",
                    GROUP_FEATURES.join(", ")
                ),
            )),
            None => Ok(()),
        }
    }

    /// Every numeric key within its documented range, so that a bad value
    /// fails here, naming the key, and not after the model has run.
    fn check_ranges(&self) -> Result<(), ConfigError> {
        let (g, c) = (&self.generation, &self.calibration);
        let within = |key: &str, ok: bool, range: &str| -> Result<(), ConfigError> {
            if ok {
                Ok(())
            } else {
                Err(key_error(key, format!("must be {range}")))
            }
        };
        within(
            "generation.temperature",
            g.temperature.is_finite() && (0.0..=2.0).contains(&g.temperature),
            "a number from 0 to 2",
        )?;
        within(
            "generation.samples",
            g.samples == 0 || (2..=MAX_SAMPLES).contains(&g.samples),
            &format!(
                "0 or from 2 to {} (agreement needs two samples)",
                MAX_SAMPLES
            ),
        )?;
        within(
            "generation.sample_temperature",
            g.sample_temperature.is_finite()
                && g.sample_temperature > 0.0
                && g.sample_temperature <= 2.0,
            "a number above 0 and at most 2",
        )?;
        if let Some(max_tokens) = g.max_tokens {
            within(
                "generation.max_tokens",
                (1..=32_768).contains(&max_tokens),
                "from 1 to 32768",
            )?;
        }
        within(
            "generation.top_logprobs",
            g.top_logprobs <= 20,
            "at most 20 (the OpenAI API's limit)",
        )?;
        within(
            "calibration.confidence",
            !c.confidence.is_empty() || !g.reflective.is_empty(),
            "at least one measure (or a generation.reflective one)",
        )?;
        within(
            "calibration.folds",
            (2..=100).contains(&c.folds),
            "from 2 to 100",
        )?;
        within(
            "calibration.bins",
            (1..=1000).contains(&c.bins),
            "from 1 to 1000",
        )?;
        within(
            "calibration.bootstrap",
            c.bootstrap <= 100_000,
            "at most 100000 (0 turns the intervals off)",
        )?;
        let open_unit = |x: f64| x > 0.0 && x < 1.0;
        within(
            "calibration.target_precision",
            !c.target_precision.is_empty() && c.target_precision.iter().all(|&t| open_unit(t)),
            "a non-empty list of precisions above 0 and below 1",
        )?;
        within(
            "calibration.delta",
            open_unit(c.delta),
            "above 0 and below 1",
        )?;
        within(
            "calibration.reject_precision",
            c.reject_precision.is_none_or(open_unit),
            "above 0 and below 1",
        )?;
        within(
            "calibration.min_coverage",
            c.min_coverage.is_none_or(open_unit),
            "above 0 and below 1",
        )?;
        let d = &self.dataset;
        if self.task()? != TaskKind::Summarize {
            within(
                "dataset.timeout_s",
                d.timeout_s.is_finite() && d.timeout_s > 0.0 && d.timeout_s <= 3600.0,
                "a number of seconds above 0 and at most 3600",
            )?;
            within("dataset.jobs", (1..=256).contains(&d.jobs), "from 1 to 256")?;
            if let Some(problems) = d.problems {
                within("dataset.problems", problems >= 1, "at least 1")?;
            }
        } else {
            within("corpus.queries", self.corpus.queries >= 1, "at least 1")?;
        }
        Ok(())
    }

    pub fn task(&self) -> Result<TaskKind, ConfigError> {
        enum_value("task", &self.task)
    }

    /// The dataset a task other than `summarize` reads.
    pub fn dataset(&self) -> Result<Dataset, ConfigError> {
        let implied = match self.task()? {
            TaskKind::Summarize => None,
            TaskKind::Synthesis => {
                return match &self.dataset.name {
                    Some(name) => {
                        let dataset = enum_value("dataset.name", name)?;
                        match dataset {
                            Dataset::Humaneval | Dataset::Mbpp | Dataset::MbppSanitized => {
                                Ok(dataset)
                            }
                            _ => Err(key_error(
                                "dataset.name",
                                "synthesis takes humaneval, mbpp or mbpp-sanitized",
                            )),
                        }
                    }
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

    fn check_task(&self) -> Result<(), ConfigError> {
        let dataset = self.dataset()?;
        match (&self.dataset.path, dataset) {
            (Some(path), _) => must_exist("dataset.path", path)?,
            (None, Dataset::Humaneval | Dataset::LineCompletion) => {}
            (None, _) => return Err(key_error("dataset.path", "needed for this dataset")),
        }
        if !(self.dataset.timeout_s > 0.0 && self.dataset.timeout_s <= 3600.0) {
            return Err(key_error(
                "dataset.timeout_s",
                "must be in (0, 3600] seconds",
            ));
        }
        if self.dataset.jobs == 0 {
            return Err(key_error("dataset.jobs", "must be at least 1"));
        }
        if self.dataset.problems == Some(0) {
            return Err(key_error(
                "dataset.problems",
                "must be at least 1, or unset for all",
            ));
        }
        enum_value::<crate::sandbox::IsolationChoice>(
            "dataset.isolation",
            &self.dataset.isolation,
        )?;
        if dataset == Dataset::Turbulence {
            self.check_turbulence()?;
        }
        self.check_generation_and_calibration()
    }

    fn check_turbulence(&self) -> Result<(), ConfigError> {
        let dataset = &self.dataset;
        if !(1..=100).contains(&dataset.rounds) {
            return Err(key_error("dataset.rounds", "must be in 1..=100"));
        }
        if let Some(q) = dataset.questions.iter().find(|q| !(1..=60).contains(*q)) {
            return Err(key_error(
                "dataset.questions",
                format!("{q} is not a Turbulence question (1..=60)"),
            ));
        }
        if dataset.instances == Some(0) {
            return Err(key_error(
                "dataset.instances",
                "must be at least 1, or unset for all",
            ));
        }
        if !(1..=10_000).contains(&dataset.fuzz) {
            return Err(key_error("dataset.fuzz", "must be in 1..=10000"));
        }
        if let Some(dir) = &dataset.oracles {
            must_exist("dataset.oracles", dir)?;
        }
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
        let device = enum_value::<crate::score::Device>("scoring.device", &scoring.device)?;
        crate::models::uses_cuda(device).map_err(|e| key_error("scoring.device", e.to_string()))?;
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
            if let Some(model) = &backend.model {
                crate::models::language_model(model)
                    .map_err(|e| key_error(&format!("{key}.model"), e))?;
            }
            if let Some(weights) = &backend.lm_weights {
                check_weights(&format!("{key}.lm_weights"), weights)?;
            }
            if backend
                .parallel
                .is_some_and(|n| !(1..=MAX_PARALLEL).contains(&n))
            {
                return Err(key_error(
                    &format!("{key}.parallel"),
                    format!("must be from 1 to {MAX_PARALLEL}"),
                ));
            }
            if !backend.extra.is_empty() {
                return Err(key_error(
                    &format!("{key}.extra"),
                    "is sent to a server, so it needs kind = \"openai\"",
                ));
            }
            Ok(())
        }
        "openai" => {
            let url = backend.base_url.as_deref().ok_or_else(|| {
                key_error(&format!("{key}.base_url"), "needed for kind = \"openai\"")
            })?;
            crate::generate::openai::check_base_url(url)
                .map_err(|e| key_error(&format!("{key}.base_url"), e.to_string()))?;
            check_request_limits(key, backend)?;
            if backend.parallel.is_some() {
                return Err(key_error(
                    &format!("{key}.parallel"),
                    "is for kind = \"local\" (a server's requests in flight are `concurrency`)",
                ));
            }
            crate::generate::openai::check_extra_body(&backend.extra)
                .map_err(|e| key_error(&format!("{key}.extra"), e.to_string()))?;
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

/// The `openai` backend's numbers, each within its documented range.
fn check_request_limits(key: &str, backend: &BackendConfig) -> Result<(), ConfigError> {
    let within = |name: &str, ok: bool, range: &str| {
        if ok {
            Ok(())
        } else {
            Err(key_error(
                &format!("{key}.{name}"),
                format!("must be {range}"),
            ))
        }
    };
    within(
        "concurrency",
        (1..=MAX_CONCURRENCY).contains(&backend.concurrency),
        &format!("from 1 to {MAX_CONCURRENCY}"),
    )?;
    within(
        "timeout_s",
        backend.timeout_s > 0.0 && backend.timeout_s <= 3600.0,
        "above 0 and at most 3600",
    )?;
    within("max_retries", backend.max_retries <= 20, "at most 20")?;
    within(
        "retry_base_ms",
        backend.retry_base_ms <= 60_000,
        "at most 60000",
    )?;
    within(
        "max_wait_s",
        backend.max_wait_s > 0.0 && backend.max_wait_s <= 3600.0,
        "above 0 and at most 3600",
    )
}

/// Requests in flight to one server: beyond this, a client only queues.
pub const MAX_CONCURRENCY: usize = 256;

/// Sequences sharing the local backend's decode steps: each holds its own
/// key/value cache (about 50 MB at 1,000 tokens for SmolLM2).
/// The thresholds shipped for `sbert_cosine01`, chosen on human ratings.
pub const DEFAULT_SBERT_THRESHOLDS: &str = "thresholds/sbert-minilm.toml";

pub const MAX_PARALLEL: usize = 64;

/// The most answers `[generation] samples` may ask per prompt.
pub const MAX_SAMPLES: usize = 50;

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
