//! `codecal apply`: decide on new items with a saved calibrator. The reading,
//! rescaling and deciding are the library's (`codecal::apply`); this is flag
//! mapping and output.

use std::path::PathBuf;

use clap::Args;

use codecal::apply::{ApplyOptions, apply_file};
use codecal::artifact::{refuse_unsafe_outputs, write_atomic};
use codecal::calibrate::Calibrator;
use codecal::table::Format;

#[derive(Args)]
pub struct ApplyArgs {
    /// The calibrator file written by `codecal calibrate --save` or `codecal run`.
    #[arg(long)]
    calibrator: PathBuf,
    /// Items carrying the measure (CSV with a header, or JSONL such as
    /// `codecal generate` output).
    input: PathBuf,
    /// Input format; by default taken from the extension (.csv, .jsonl).
    #[arg(long, value_parser = super::choice::<Format>())]
    format: Option<Format>,
    /// Column (or `confidence`/`reflective` key) holding the measure; must be
    /// the calibrator's measure, which is the default.
    #[arg(long)]
    confidence: Option<String>,
    /// Which saved accept cutoff decides, by its target precision; default the
    /// calibrator's first.
    #[arg(long, value_parser = super::finite)]
    target_precision: Option<f64>,
    /// Write here (atomically) instead of to stdout.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(args: ApplyArgs) -> anyhow::Result<()> {
    if let Some(out) = &args.out {
        refuse_unsafe_outputs(&[out], &[&args.input, &args.calibrator])?;
    }
    let calibrator = Calibrator::load(&args.calibrator)?;
    let options = ApplyOptions {
        confidence: args.confidence,
        target_precision: args.target_precision,
        format: args.format,
    };
    let text = apply_file(&calibrator, &args.input, &options)?;
    match &args.out {
        Some(out) => write_atomic(out, text.as_bytes())?,
        None => print!("{text}"),
    }
    Ok(())
}
