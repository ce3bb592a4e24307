//! The checks of a run config: everything that can be found wrong before a
//! stage runs (a missing file, a threshold file for another metric, an
//! unknown measure, a number out of range, an unreachable server), each
//! named by its key. Not the config's shape (`config`).

use std::path::Path;

use super::config::*;
use super::multicalibration::GROUP_FEATURES;
use crate::calibrate::{Method, MethodChoice};
use crate::task::TaskKind;
use crate::task::datasets::Dataset;
use crate::thresholds::file::read_threshold;

/// Requests in flight to one server: beyond this, a client only queues.
pub const MAX_CONCURRENCY: usize = 256;

/// Sequences sharing the local backend's decode steps: each holds its own
/// key/value cache (at 1,000 tokens about 25 MB for Qwen2.5-Coder-0.5B, 50
/// MB for SmolLM2).
pub const MAX_PARALLEL: usize = 64;

/// The most answers `[generation] samples` may ask per prompt.
pub const MAX_SAMPLES: usize = 50;

/// The most tests `[generation] tests` may ask per prompt.
pub const MAX_TESTS: usize = 20;

impl RunConfig {
    /// Checks everything that can be checked without running a stage, the
    /// servers included (each answers; each pool endpoint serves its model).
    pub fn check(&self) -> Result<(), ConfigError> {
        self.check_with(true)
    }

    /// [`RunConfig::check`] without asking any server: for a merge, which
    /// generates nothing and may run where no server can be reached.
    pub fn check_offline(&self) -> Result<(), ConfigError> {
        self.check_with(false)
    }

    fn check_with(&self, servers: bool) -> Result<(), ConfigError> {
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
        if self.task() != TaskKind::Summarize {
            return self.check_task(servers);
        }
        self.check_corpus()?;
        if self.retrieval.k == 0 {
            return Err(key_error("retrieval.k", "must be at least 1"));
        }
        if let Some(template) = &self.prompt.template {
            must_exist("prompt.template", template)?;
        }
        self.check_scoring()?;
        self.check_generation_and_calibration(servers)
    }

    /// The checks every task shares: backends, measures, calibration.
    fn check_generation_and_calibration(&self, servers: bool) -> Result<(), ConfigError> {
        if self.backends.is_empty() {
            return Err(key_error(
                "backends",
                "name at least one [[backends]] entry",
            ));
        }
        for (i, backend) in self.backends.iter().enumerate() {
            check_backend(&format!("backends[{i}]"), backend, servers)?;
        }
        super::generation::check_generators(self)?;
        self.check_measures()?;
        self.check_rescaling()?;
        self.check_combine()?;
        self.check_rules()?;
        self.check_ranges()
    }

    /// The method (or multicalibration, its base and its group features).
    fn check_rescaling(&self) -> Result<(), ConfigError> {
        let c = &self.calibration;
        if c.method != MethodChoice::Multicalibration {
            if !c.group_features.is_empty() || c.multicalibration.is_some() {
                return Err(key_error(
                    "calibration.group_features",
                    "group_features and [calibration.multicalibration] need method = \"multicalibration\"",
                ));
            }
            return Ok(());
        }
        let base = c.base.unwrap_or(Method::Platt);
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
            "generation.tests",
            g.tests <= MAX_TESTS,
            &format!("from 0 to {MAX_TESTS}"),
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
        if self.prompt.asap && self.task() != TaskKind::Summarize {
            return Err(key_error(
                "prompt.asap",
                "ASAP's facts are for summaries (task = \"summarize\") only",
            ));
        }
        if self.task() != TaskKind::Summarize {
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

    fn check_task(&self, servers: bool) -> Result<(), ConfigError> {
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
        if dataset == Dataset::Turbulence {
            self.check_turbulence()?;
        }
        self.check_generation_and_calibration(servers)
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
        if !(dataset.answer_seconds.is_finite()
            && dataset.answer_seconds > 0.0
            && dataset.answer_seconds <= 3600.0)
        {
            return Err(key_error(
                "dataset.answer_seconds",
                "must be in (0, 3600] seconds",
            ));
        }
        if let Some(dir) = &dataset.oracles {
            must_exist("dataset.oracles", dir)?;
        }
        Ok(())
    }

    fn check_corpus(&self) -> Result<(), ConfigError> {
        let corpus = &self.corpus;
        match corpus.source {
            CorpusSource::PythonStdlib => Ok(()),
            CorpusSource::Mine => {
                let dir = corpus.dir.as_ref().ok_or_else(|| {
                    key_error("corpus.dir", "needed when corpus.source = \"mine\"")
                })?;
                must_exist("corpus.dir", dir)?;
                match corpus.language {
                    Some(_) => Ok(()),
                    None => Err(key_error(
                        "corpus.language",
                        "needed when corpus.source = \"mine\" (python or java)",
                    )),
                }
            }
            CorpusSource::Codexglue => {
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
        }
    }

    fn check_scoring(&self) -> Result<(), ConfigError> {
        let scoring = &self.scoring;
        must_exist("scoring.thresholds", &scoring.thresholds)?;
        crate::models::uses_cuda(scoring.device)
            .map_err(|e| key_error("scoring.device", e.to_string()))?;
        if scoring.operating_points.is_empty() {
            return Err(key_error("scoring.operating_points", "name at least one"));
        }
        for &point in &scoring.operating_points {
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

fn check_backend(key: &str, backend: &BackendConfig, servers: bool) -> Result<(), ConfigError> {
    if backend.pool.is_some() && backend.kind != BackendKind::Openai {
        return Err(key_error(
            &format!("{key}.pool"),
            "is for kind = \"openai\" (endpoints of one served model)",
        ));
    }
    match backend.kind {
        BackendKind::Local => {
            if let Some(model) = &backend.model {
                crate::models::language_model(model)
                    .map_err(|e| key_error(&format!("{key}.model"), e.to_string()))?;
            }
            if backend.lm_weights.is_some() && !cfg!(feature = "local") {
                return Err(key_error(
                    &format!("{key}.lm_weights"),
                    "this codecal was built without the `local` feature",
                ));
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
        BackendKind::Openai => {
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
            if let Some(var) = &backend.api_key_env
                && std::env::var(var).map_or(true, |v| v.is_empty())
            {
                return Err(key_error(
                    &format!("{key}.api_key_env"),
                    format!("the variable {var} is not set"),
                ));
            }
            if !servers {
                return Ok(());
            }
            if backend.pool.is_some() {
                let config = super::generation::openai_config(backend)
                    .map_err(|e| key_error(key, e.to_string()))?;
                return crate::generate::pool::check_endpoint(&config)
                    .map(|_| ())
                    .map_err(|e| key_error(&format!("{key}.base_url"), e.to_string()));
            }
            reachable(url).map_err(|why| {
                key_error(
                    &format!("{key}.base_url"),
                    format!("{url} cannot be reached: {why}"),
                )
            })
        }
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

/// Any HTTP answer from `{url}/models` means the server is there.
fn reachable(url: &str) -> Result<(), ureq::Error> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(std::time::Duration::from_secs(10)))
        .build()
        .into();
    agent
        .get(format!("{}/models", url.trim_end_matches('/')))
        .call()
        .map(|_| ())
}
