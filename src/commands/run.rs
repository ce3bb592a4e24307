//! `codecal run`: the whole pipeline from a config file (or the embedded
//! default), with one progress bar per stage and a timing summary.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use clap::Args;

use codecal::pipeline::{Existing, Progress, RunConfig, Shard};

use super::progress::StageProgress;

#[derive(Args)]
pub struct RunArgs {
    /// The run's TOML config (see configs/README.md); default: the embedded
    /// configs/default.toml (the local Python standard library, Qwen2.5-Coder-0.5B-Instruct, MiniLM).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Continue an existing run directory: unchanged stages are reused and
    /// generation resumes through its cache.
    #[arg(long, conflicts_with = "fresh")]
    resume: bool,
    /// Delete an existing run directory first.
    #[arg(long)]
    fresh: bool,
    /// Put the run directory here instead of the config's runs_dir/name.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Run only shard I of N (I from 0): generation, scoring and judging on
    /// the items whose id hashes to I mod N, and no calibration; `codecal
    /// merge` joins the N shard directories.
    #[arg(long, value_name = "I/N", value_parser = shard)]
    shard: Option<Shard>,
}

fn shard(text: &str) -> Result<Shard, String> {
    Shard::parse(text).map_err(|e| e.to_string())
}

pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let mut config = match &args.config {
        Some(path) => RunConfig::read(path)?,
        None => RunConfig::embedded_default()?,
    };
    if let Some(out) = &args.out {
        config.runs_dir = out.parent().map(Path::to_path_buf).unwrap_or_default();
        config.name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| config.name.clone());
    }
    let existing = match (args.resume, args.fresh) {
        (true, _) => Existing::Resume,
        (_, true) => Existing::Fresh,
        _ => Existing::Refuse,
    };
    let summary = match args.shard {
        Some(shard) => codecal::pipeline::run_shard(&config, shard, existing, &stage_printer())?,
        None => codecal::pipeline::run(&config, existing, &stage_printer())?,
    };
    let total: f64 = summary.stages.iter().map(|s| s.seconds).sum();
    eprintln!(
        "codecal: run finished in {total:.1} s: {}",
        summary.report.display()
    );
    if args.shard.is_none() {
        print!("{}", std::fs::read_to_string(&summary.report)?);
    }
    Ok(())
}

/// One progress bar per stage, and a line when it ends.
pub fn stage_printer() -> impl Fn(Progress) + Sync {
    let current: Mutex<Option<StageProgress>> = Mutex::new(None);
    move |event: Progress| {
        let mut current = current.lock().unwrap_or_else(|p| p.into_inner());
        match event {
            Progress::Start { stage, steps } => *current = Some(StageProgress::new(stage, steps)),
            Progress::Step => {
                if let Some(progress) = current.as_ref() {
                    progress.step();
                }
            }
            Progress::Finish {
                stage,
                seconds,
                skipped,
            } => {
                if let Some(progress) = current.take() {
                    progress.finish();
                }
                if skipped {
                    eprintln!("codecal: {stage}: unchanged, reused");
                } else {
                    eprintln!("codecal: {stage}: {seconds:.1} s");
                }
            }
            Progress::Warning(text) => eprintln!("codecal: warning: {text}"),
        }
    }
}
