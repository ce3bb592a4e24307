//! `codecal run`: every stage from a corpus to a report, in one run
//! directory, resumable.
//!
//! Stages: records → sample (queries and pool per language) → prompts (BM25
//! exemplars) → generations (one file per backend, through the response
//! cache in the run directory) → scores → labels → calibration → report.
//! Each stage's inputs (its config section and the hashes of the artifacts
//! it reads) are hashed; a stage whose hash is in the manifest with its
//! artifacts present is skipped, so a changed config re-runs only what it
//! affects and an interrupted run continues where it stopped. Artifacts are
//! written whole (temporary file, then rename). What a stage computes lives
//! in its own module (`corpus`, `retrieve`, `generate`, `score`,
//! `calibrate`); this module only wires them and keeps the books.

mod artifacts;
mod calibration;
mod cells;
pub mod config;
mod config_check;
mod config_measures;
mod decisions;
mod embedding;
mod generation;
mod merge;
mod multicalibration;
mod own_code;
mod run_report;
mod sampled;
pub mod shard;
mod sources;
mod summarize;
mod tables;
mod tasks;

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::artifact::{WriteError, create_dir, write_atomic};
use crate::manifest::read_manifest;
pub use crate::manifest::{Manifest, StageRecord};
pub use artifacts::ArtifactError;
pub use config::{BackendConfig, ConfigError, MAX_PARALLEL, MAX_SAMPLES, RunConfig};
pub use generation::{OpenBackendError, open_backend, open_backends};
pub use merge::{MergeError, merge};
pub use own_code::{
    OwnCodeOptions, OwnCodeOutcome, TrustedSummary, default_calibrator, summarize_own_code,
};
pub use shard::Shard;

/// The embedded default: the local Python standard library,
/// Qwen2.5-Coder-0.5B-Instruct, MiniLM.
pub const DEFAULT_CONFIG: &str = include_str!("../../configs/default.toml");

/// What the caller sees of a run's progress.
pub enum Progress<'a> {
    /// A stage starts, with its number of steps (0 when unknown).
    Start {
        stage: &'a str,
        steps: u64,
    },
    Step,
    /// The stage ended; `skipped` when its artifacts were reused.
    Finish {
        stage: &'a str,
        seconds: f64,
        skipped: bool,
    },
    /// Something the run does differently from what its config asked, and
    /// goes on: e.g. a fallback where a tool is not installed.
    Warning(&'a str),
}

/// How to treat an existing run directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Refuse to touch it.
    Refuse,
    /// Continue it: unchanged stages are reused.
    Resume,
    /// Delete it and start over.
    Fresh,
}

#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{0} already holds a run; pass --resume to continue it or --fresh to start over")]
    Exists(PathBuf),
    #[error(
        "{0} is not empty and holds no codecal run (no manifest.json): \
         choose a new --out, or empty it first"
    )]
    Foreign(PathBuf),
    #[error(
        "{0}: --fresh deletes only a run directory codecal wrote, and its manifest.json \
         is not codecal's record of a run of this name; remove it yourself if you mean to"
    )]
    NotARun(PathBuf),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("{path}: {source}")]
    Artifact {
        path: PathBuf,
        source: artifacts::ArtifactError,
    },
    /// A stage failed; `source` is the library's typed error where there is one.
    #[error("stage {stage}: {source}")]
    Stage {
        stage: String,
        source: artifacts::StageCause,
    },
    #[error(transparent)]
    Merge(#[from] MergeError),
}

/// Per-stage wall time of a finished run.
#[derive(Clone, Debug, PartialEq)]
pub struct StageTime {
    pub stage: String,
    pub seconds: f64,
    pub skipped: bool,
}

/// A finished run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    pub dir: PathBuf,
    pub stages: Vec<StageTime>,
    pub report: PathBuf,
}

/// Runs `config` into `runs_dir/name`.
pub fn run(
    config: &RunConfig,
    existing: Existing,
    on_progress: &(dyn Fn(Progress) + Sync),
) -> Result<RunSummary, PipelineError> {
    config.check()?;
    run_in(config, existing, Mode::Whole, on_progress)
}

/// Runs the expensive stages of `config` (generation, scoring, judging) on
/// the items `shard` owns, into `runs_dir/name`, and stops before
/// calibration: the directory is one piece for `merge`. Its `shard.json`,
/// written last, says which piece and of which config.
pub fn run_shard(
    config: &RunConfig,
    shard: Shard,
    existing: Existing,
    on_progress: &(dyn Fn(Progress) + Sync),
) -> Result<RunSummary, PipelineError> {
    config.check()?;
    let summary = run_in(config, existing, Mode::Shard(shard), on_progress)?;
    let manifest = read_manifest(&summary.dir.join("manifest.json")).unwrap_or_default();
    let item_outputs = manifest
        .stages
        .values()
        .filter(|record| record.per_item)
        .flat_map(|record| record.outputs.iter().cloned())
        .collect();
    let ids = shard::prompt_ids(&summary.dir)?;
    let record = shard::ShardRecord {
        config_hash: shard::config_hash(config),
        shard,
        items: ids.iter().filter(|id| shard.owns(id)).count(),
        item_outputs,
    };
    shard::write_record(&summary.dir, &record)?;
    Ok(RunSummary {
        report: summary.dir.join(shard::SHARD_FILE),
        ..summary
    })
}

/// How a run treats its stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Every stage, on every item.
    Whole,
    /// The per-item stages on one shard's items, and no calibration.
    Shard(Shard),
    /// A merged directory: a stage whose outputs are all there already
    /// (assembled from the shards) is recorded as done without running.
    Adopt,
}

/// Runs `config` (already checked) into `runs_dir/name`.
pub(crate) fn run_in(
    config: &RunConfig,
    existing: Existing,
    mode: Mode,
    on_progress: &(dyn Fn(Progress) + Sync),
) -> Result<RunSummary, PipelineError> {
    let dir = config.runs_dir.join(&config.name);
    let manifest_path = dir.join("manifest.json");
    prepare_dir(&dir, config, existing, mode)?;
    create_dir(&dir)?;
    let manifest = read_manifest(&manifest_path).unwrap_or_default();
    let mut books = Books {
        dir: dir.clone(),
        manifest,
        times: Vec::new(),
        on_progress,
        shard: match mode {
            Mode::Shard(shard) => Some(shard),
            _ => None,
        },
        adopt: mode == Mode::Adopt,
    };
    books.manifest.codecal_version = env!("CARGO_PKG_VERSION").to_owned();
    books.manifest.set_config(config);
    match config.task() {
        crate::task::TaskKind::Summarize => summarize::run(config, &mut books)?,
        _ => tasks::run(config, &mut books)?,
    }
    // The models are installed on first use, during the stages, so their
    // hashes are known only now.
    books.manifest.models = crate::models::installed_hashes();
    books.save_manifest()?;
    Ok(RunSummary {
        report: dir.join("report.md"),
        dir,
        stages: books.times,
    })
}

/// Makes `dir` ready for the run: a directory codecal did not write is
/// never written into (a merge's own, just filled, excepted), and `Fresh`
/// deletes only a directory whose manifest is codecal's record of a run of
/// this name.
fn prepare_dir(
    dir: &Path,
    config: &RunConfig,
    existing: Existing,
    mode: Mode,
) -> Result<(), PipelineError> {
    let manifest_path = dir.join("manifest.json");
    if !manifest_path.exists() {
        let holds_files = dir
            .read_dir()
            .is_ok_and(|mut entries| entries.next().is_some());
        if holds_files && mode != Mode::Adopt {
            return Err(PipelineError::Foreign(dir.to_owned()));
        }
        return Ok(());
    }
    match existing {
        Existing::Refuse => Err(PipelineError::Exists(dir.to_owned())),
        Existing::Resume => Ok(()),
        Existing::Fresh => {
            let ours = read_manifest(&manifest_path).is_some_and(|manifest| {
                !manifest.codecal_version.is_empty()
                    && manifest.recorded_name() == Some(config.name.as_str())
            });
            if !ours {
                return Err(PipelineError::NotARun(dir.to_owned()));
            }
            std::fs::remove_dir_all(dir).map_err(|e| PipelineError::Artifact {
                path: dir.to_owned(),
                source: artifacts::ArtifactError::Remove(e),
            })
        }
    }
}

/// The run directory's bookkeeping: which stages ran on which inputs.
pub(crate) struct Books<'a> {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub times: Vec<StageTime>,
    pub on_progress: &'a (dyn Fn(Progress) + Sync),
    /// The shard whose items the per-item stages do, if the run is one.
    pub shard: Option<Shard>,
    /// A stage not in the manifest whose outputs exist is recorded as done.
    pub adopt: bool,
}

impl Books<'_> {
    /// Runs `build` unless the manifest shows `stage` done on the same
    /// `inputs` with every output present. `build` writes the outputs (paths
    /// relative to the run directory) and gets the step count's progress.
    pub fn stage(
        &mut self,
        stage: &str,
        inputs: &[String],
        outputs: &[String],
        steps: u64,
        build: impl FnOnce(&Path) -> Result<(), PipelineError>,
    ) -> Result<(), PipelineError> {
        self.run_stage(stage, inputs, outputs, steps, false, build)
    }

    /// [`Books::stage`] for a stage whose outputs hold a row per item, in the
    /// prompts' order: in a shard, a row per item the shard owns.
    pub fn item_stage(
        &mut self,
        stage: &str,
        inputs: &[String],
        outputs: &[String],
        steps: u64,
        build: impl FnOnce(&Path) -> Result<(), PipelineError>,
    ) -> Result<(), PipelineError> {
        self.run_stage(stage, inputs, outputs, steps, true, build)
    }

    fn run_stage(
        &mut self,
        stage: &str,
        inputs: &[String],
        outputs: &[String],
        steps: u64,
        per_item: bool,
        build: impl FnOnce(&Path) -> Result<(), PipelineError>,
    ) -> Result<(), PipelineError> {
        let input_hash = hash_strings(inputs);
        let present = outputs.iter().all(|o| self.dir.join(o).exists());
        let recorded = self.manifest.stages.get(stage);
        let done = recorded.is_some_and(|record| record.input_hash == input_hash && present);
        if done || (self.adopt && recorded.is_none() && present) {
            if !done {
                self.record(stage, input_hash, outputs, 0.0, per_item)?;
            }
            self.finished(stage, 0.0, true);
            return Ok(());
        }
        (self.on_progress)(Progress::Start { stage, steps });
        let start = Instant::now();
        build(&self.dir)?;
        let seconds = start.elapsed().as_secs_f64();
        self.record(stage, input_hash, outputs, seconds, per_item)?;
        self.finished(stage, seconds, false);
        Ok(())
    }

    /// Enters a finished stage in the manifest and saves it.
    fn record(
        &mut self,
        stage: &str,
        input_hash: String,
        outputs: &[String],
        seconds: f64,
        per_item: bool,
    ) -> Result<(), PipelineError> {
        let record = StageRecord {
            input_hash,
            outputs: outputs.to_vec(),
            seconds,
            per_item,
        };
        self.manifest.stages.insert(stage.to_owned(), record);
        self.save_manifest()
    }

    /// Writes `manifest.json` whole (temporary file, then rename).
    fn save_manifest(&self) -> Result<(), PipelineError> {
        write_atomic(
            &self.dir.join("manifest.json"),
            self.manifest.to_json().as_bytes(),
        )?;
        Ok(())
    }

    /// Tells the caller a stage ended and keeps its time for the summary.
    fn finished(&mut self, stage: &str, seconds: f64, skipped: bool) {
        (self.on_progress)(Progress::Finish {
            stage,
            seconds,
            skipped,
        });
        self.times.push(StageTime {
            stage: stage.to_owned(),
            seconds,
            skipped,
        });
    }

    /// sha256 of an artifact, for the inputs of the stages that read it.
    pub fn file_hash(&self, relative: &str) -> Result<String, PipelineError> {
        file_sha256(&self.dir.join(relative))
    }
}

/// sha256 of a file's bytes.
pub(crate) fn file_sha256(path: &Path) -> Result<String, PipelineError> {
    let bytes = std::fs::read(path).map_err(|e| PipelineError::Artifact {
        path: path.to_owned(),
        source: e.into(),
    })?;
    Ok(crate::digest::sha256_hex(&bytes))
}

/// One hash of several strings; each is length-prefixed, so ["ab", "c"] and
/// ["a", "bc"] differ.
pub(crate) fn hash_strings(parts: &[String]) -> String {
    let mut bytes = Vec::new();
    for part in parts {
        bytes.extend((part.len() as u64).to_le_bytes());
        bytes.extend(part.as_bytes());
    }
    crate::digest::sha256_hex(&bytes)
}
