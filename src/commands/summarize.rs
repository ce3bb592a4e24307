//! `codecal summarize PATH`: summaries of a developer's own functions, each
//! with a calibrated confidence and a decision. The work is the library's
//! (`codecal::pipeline::summarize_own_code`); this maps flags, finds the
//! default calibrator and prints the table.

use std::path::PathBuf;
use std::sync::OnceLock;

use anyhow::Context;
use clap::Args;

use codecal::calibrate::Calibrator;
use codecal::corpus::mine::Language;
use codecal::pipeline::{OwnCodeOptions, RunConfig, default_calibrator, summarize_own_code};

use super::progress::StageProgress;

#[derive(Args)]
pub struct SummarizeArgs {
    /// The source tree (or one file's directory) whose functions to summarise.
    path: PathBuf,
    /// The functions' language.
    #[arg(long, value_parser = super::choice::<Language>(), default_value_t = Language::Python)]
    language: Language,
    /// A calibrator from `codecal calibrate --save` or `codecal run`; default
    /// the embedded default run's, in runs/default/calibrators/.
    #[arg(long)]
    calibrator: Option<PathBuf>,
    /// The run config whose backend, prompt, retrieval k and decoding to use;
    /// default the embedded configs/default.toml. It must be the one the
    /// calibrator was made with.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Exemplars from this records file (JSONL, as `codecal corpus` writes)
    /// instead of the tree's own documented functions.
    #[arg(long)]
    pool: Option<PathBuf>,
    /// Which of the calibrator's accept cutoffs decides, by its target precision.
    #[arg(long, value_parser = super::finite)]
    target_precision: Option<f64>,
    /// Where the cache, summaries.jsonl and summaries.md go; default
    /// runs/summaries/<the tree's directory name>.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(args: SummarizeArgs) -> anyhow::Result<()> {
    let config = match &args.config {
        Some(path) => RunConfig::read(path)?,
        None => RunConfig::embedded_default()?,
    };
    let calibrator_path = match &args.calibrator {
        Some(path) => path.clone(),
        None => default_calibrator(&config, args.language)
            .filter(|p| p.is_file())
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "no calibrator: pass --calibrator FILE (from `codecal calibrate --save`), or run \
                     `codecal run` first, which writes {}",
                    default_calibrator(&config, args.language)
                        .map_or("runs/default/calibrators/".into(), |p| p.display().to_string())
                )
            })?,
    };
    let calibrator = Calibrator::load(&calibrator_path)?;
    let name = args
        .path
        .canonicalize()
        .with_context(|| format!("{}: cannot read", args.path.display()))?
        .file_name()
        .map_or("tree".into(), |n| n.to_string_lossy().into_owned());
    let options = OwnCodeOptions {
        root: args.path.clone(),
        language: args.language,
        pool: args.pool.clone(),
        calibrator,
        target_precision: args.target_precision,
        out: args
            .out
            .clone()
            .unwrap_or_else(|| config.runs_dir.join("summaries").join(name)),
    };
    anyhow::ensure!(
        !options.out.exists() || options.out.is_dir(),
        "--out {}: must be a directory (summaries.jsonl, summaries.md and the cache go in it), \
         and this is a file",
        options.out.display()
    );
    eprintln!(
        "codecal: calibrator {} (measure {})",
        calibrator_path.display(),
        options.calibrator.measure
    );
    let progress: OnceLock<StageProgress> = OnceLock::new();
    let on_progress = |_done: usize, total: usize| {
        progress
            .get_or_init(|| StageProgress::new("summarize", total as u64))
            .step();
    };
    let outcome = summarize_own_code(&config, &options, &on_progress)?;
    if let Some(progress) = progress.get() {
        progress.finish();
    }
    for (file, reason) in &outcome.skipped_files {
        eprintln!("codecal: skipped {file}: {reason}");
    }
    let summaries = outcome.summaries;
    let count = |d: &str| summaries.iter().filter(|s| s.decision == d).count();
    eprintln!(
        "codecal: {} functions: {} accept, {} review, {} reject; wrote {}",
        summaries.len(),
        count("accept"),
        count("review"),
        count("reject"),
        options.out.join("summaries.jsonl").display()
    );
    print!(
        "{}",
        std::fs::read_to_string(options.out.join("summaries.md")).unwrap_or_default()
    );
    Ok(())
}
