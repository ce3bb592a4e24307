//! The monitor stage: new labelled items, in arrival order, checked against
//! a deployed calibrator's accept rule with the anytime-valid test of
//! `calibrate::monitor`. The calibrator decides which items are accepted,
//! exactly as `apply` would; the labels say which of those were mistakes.
//! What the test is and why it may be looked at after every item is
//! `calibrate::monitor`'s; printing and the exit code are the CLI's.

use std::path::Path;

use serde::Serialize;

use crate::apply::{ApplyError, calibrator_measure, decide_rows, measure_values};
use crate::calibrate::Decision;
use crate::calibrate::calibrator::Calibrator;
use crate::calibrate::data::{DataError, label};
use crate::calibrate::monitor::{Checkpoint, monitor, precision_bound};
use crate::table::{Format, Table};

/// What to check.
#[derive(Clone, Debug, PartialEq)]
pub struct MonitorOptions {
    /// The measure's column; must be the calibrator's own measure.
    pub confidence: Option<String>,
    /// The label column (0/1 or true/false).
    pub correct: String,
    /// Which saved accept cutoff, by target precision; the first when `None`.
    pub target_precision: Option<f64>,
    /// The chance of a false alarm over the whole stream, in (0, 1).
    pub delta: f64,
    pub format: Option<Format>,
}

/// Why the stream could not be checked.
#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    #[error(transparent)]
    Apply(#[from] ApplyError),
    #[error(transparent)]
    Data(#[from] DataError),
    #[error("--delta must be in (0, 1), got {0}")]
    Delta(f64),
    #[error(
        "the calibrator has no accept cutoff at precision {0}, so nothing is accepted to monitor"
    )]
    NoCutoff(f64),
}

/// The test's state after each accepted item, with the rows they came from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MonitorReport {
    pub target_precision: f64,
    pub delta: f64,
    pub rows: usize,
    /// The input line of each accepted item.
    pub lines: Vec<u64>,
    pub checkpoints: Vec<Checkpoint>,
}

impl MonitorReport {
    /// The first accepted item at which the alarm was raised.
    pub fn alarm_at(&self) -> Option<usize> {
        self.checkpoints.iter().position(|c| c.alarm)
    }

    /// The upper bound on precision at checkpoint `i`.
    pub fn bound_at(&self, i: usize) -> f64 {
        let c = &self.checkpoints[i];
        precision_bound(c.accepted, c.mistakes, self.delta)
    }
}

/// Reads `input`, decides each row with `calibrator` and tests the accepted
/// rows' precision in file order.
pub fn monitor_file(
    calibrator: &Calibrator,
    input: &Path,
    options: &MonitorOptions,
) -> Result<MonitorReport, MonitorError> {
    if !(options.delta > 0.0 && options.delta < 1.0) {
        return Err(MonitorError::Delta(options.delta));
    }
    let measure = calibrator_measure(calibrator, options.confidence.as_deref())?;
    let accept = calibrator
        .accept_cutoff(options.target_precision)
        .map_err(ApplyError::from)?;
    let target = accept.target_precision;
    if accept.cutoff.is_none() && calibrator.cutoffs.groups.is_none() {
        return Err(MonitorError::NoCutoff(target));
    }
    let table = Table::read(input, options.format).map_err(ApplyError::from)?;
    crate::apply::check_model(calibrator, &table)?;
    let confidences = measure_values(&table, &measure)?;
    let labels = table.column(&options.correct).map_err(ApplyError::from)?;
    let decided = decide_rows(calibrator, &table, &confidences, Some(target))?;
    let mut lines = Vec::new();
    let mut mistakes = Vec::new();
    for (row, applied) in decided.iter().enumerate() {
        let correct = label(&labels, row)?;
        if applied.decision == Decision::Accept {
            lines.push(labels.location(row).line);
            mistakes.push(!correct);
        }
    }
    Ok(MonitorReport {
        target_precision: target,
        delta: options.delta,
        rows: table.len(),
        lines,
        checkpoints: monitor(&mistakes, 1.0 - target, options.delta),
    })
}
