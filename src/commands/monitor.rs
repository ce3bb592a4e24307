//! `codecal monitor`: check new labelled items against a deployed
//! calibrator's accept rule. The reading, deciding and testing are the
//! library's (`codecal::monitor`); this is flag mapping, the printed table
//! and the exit code (3 on an alarm).

use std::path::PathBuf;

use clap::Args;

use codecal::calibrate::Calibrator;
use codecal::monitor::{MonitorOptions, MonitorReport, monitor_file};
use codecal::report::table::grid_markdown;
use codecal::table::Format;

/// The exit code of a run that raised the alarm.
pub const ALARM_EXIT: i32 = 3;

#[derive(Args)]
pub struct MonitorArgs {
    /// The calibrator file written by `codecal calibrate --save` or `codecal run`.
    #[arg(long)]
    calibrator: PathBuf,
    /// New items with the measure and a label, in arrival order (CSV or JSONL).
    input: PathBuf,
    #[arg(long, value_parser = super::choice::<Format>())]
    format: Option<Format>,
    /// Column holding the measure; must be the calibrator's measure (the default).
    #[arg(long)]
    confidence: Option<String>,
    /// Column holding the label (0/1 or true/false).
    #[arg(long, default_value = "correct")]
    correct: String,
    /// Which saved accept cutoff to check, by target precision; default the first.
    #[arg(long, value_parser = super::finite)]
    target_precision: Option<f64>,
    /// The chance of a false alarm over the whole stream, however often it is run.
    #[arg(long, default_value_t = 0.1, value_parser = super::finite)]
    delta: f64,
    /// Print a row every this many accepted items (and the last, and the alarm).
    #[arg(long, default_value_t = 100, value_parser = super::count_in(1..=1_000_000))]
    every: usize,
}

pub fn run(args: MonitorArgs) -> anyhow::Result<()> {
    let calibrator = Calibrator::load(&args.calibrator)?;
    let options = MonitorOptions {
        confidence: args.confidence,
        correct: args.correct,
        target_precision: args.target_precision,
        delta: args.delta,
        format: args.format,
    };
    let report = monitor_file(&calibrator, &args.input, &options)?;
    print!("{}", table(&report, args.every));
    std::io::Write::flush(&mut std::io::stdout())?;
    if let Some(at) = report.alarm_at() {
        let c = &report.checkpoints[at];
        eprintln!(
            "codecal: alarm: precision among accepted items is below {} (line {}: {} of {} \
             accepted items wrong; e-value {:.1} ≥ 1/δ = {:.1})",
            report.target_precision,
            report.lines[at],
            c.mistakes,
            c.accepted,
            c.e_value,
            1.0 / report.delta
        );
        std::process::exit(ALARM_EXIT);
    }
    Ok(())
}

fn table(report: &MonitorReport, every: usize) -> String {
    let header = [
        "line",
        "accepted",
        "wrong",
        "running precision",
        "precision at most (1 − δ)",
        "e-value",
        "status",
    ];
    let last = report.checkpoints.len().checked_sub(1);
    let alarm = report.alarm_at();
    let rows: Vec<Vec<String>> = report
        .checkpoints
        .iter()
        .enumerate()
        .filter(|&(i, _)| (i + 1) % every == 0 || Some(i) == last || Some(i) == alarm)
        .map(|(i, c)| {
            vec![
                report.lines[i].to_string(),
                c.accepted.to_string(),
                c.mistakes.to_string(),
                format!("{:.4}", c.running_precision),
                format!("{:.4}", report.bound_at(i)),
                if c.e_value < 1e4 {
                    format!("{:.3}", c.e_value)
                } else {
                    format!("{:.2e}", c.e_value)
                },
                (if c.alarm { "ALARM" } else { "holds" }).to_owned(),
            ]
        })
        .collect();
    format!(
        "Monitoring precision ≥ {} among accepted items ({} rows, {} accepted); anytime-valid \
         betting test, false-alarm chance at most δ = {} however often it is run.\n\n{}",
        report.target_precision,
        report.rows,
        report.checkpoints.len(),
        report.delta,
        grid_markdown(&header, &rows)
    )
}
