//! The one weighted pass over a sample's items: the runs of tied
//! confidences that hold any weight, and the weighted sums of the pointwise
//! metrics, taken run by run.
//!
//! Every item of a run has one confidence, so a run's weight and its weight
//! of errors determine every pointwise term (Brier, log loss, |f − y|,
//! Spiegelhalter's sums) and every ranking metric (AUROC, AURC, CORP, the
//! equal-mass bins). A bootstrap resample then costs one pass over its
//! weights and passes over the runs, whatever the number of metrics.
//!
//! Not here: the metrics themselves (`metrics`, `selective`, `decompose`,
//! `tests_of_fit`).

/// A run of tied confidences: its confidence, total weight and weight of errors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Run {
    pub confidence: f64,
    pub weight: f64,
    pub errors: f64,
}

impl Run {
    /// The weight of correct items.
    pub fn right(&self) -> f64 {
        self.weight - self.errors
    }
}

/// Tie runs from highest to lowest confidence. `ascending` orders the items
/// by confidence, lowest first; `w` is each item's weight.
pub fn runs_descending(
    ascending: &[usize],
    confidence: &[f64],
    correct: &[bool],
    w: &impl Fn(usize) -> f64,
) -> Vec<Run> {
    let mut runs: Vec<Run> = ascending
        .chunk_by(|&a, &b| confidence[a] == confidence[b])
        .map(|run| Run {
            confidence: confidence[run[0]],
            weight: run.iter().map(|&i| w(i)).sum(),
            errors: run.iter().filter(|&&i| !correct[i]).map(|&i| w(i)).sum(),
        })
        .filter(|run| run.weight > 0.0)
        .collect();
    runs.reverse();
    runs
}

/// Weighted sums over all items.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    pub weight: f64,
    pub right: f64,
    pub confidence: f64,
    /// Σ w (f − y)².
    pub brier: f64,
    /// Σ w |f − y|.
    pub absolute: f64,
    /// Σ w · (−ln of the clipped probability given to the outcome).
    pub log_loss: f64,
    /// Σ w (y − f)(1 − 2f), Spiegelhalter's numerator.
    pub spiegelhalter_numerator: f64,
    /// Σ w (1 − 2f)² f(1 − f), Spiegelhalter's variance.
    pub spiegelhalter_variance: f64,
}

impl Totals {
    /// Adds `run`, whose outcome log-loss terms are `log_right` (for y = 1)
    /// and `log_wrong` (for y = 0).
    pub fn add(&mut self, run: &Run, log_right: f64, log_wrong: f64) {
        let (p, right, errors) = (run.confidence, run.right(), run.errors);
        let tilt = 1.0 - 2.0 * p;
        self.weight += run.weight;
        self.right += right;
        self.confidence += run.weight * p;
        self.brier += right * (1.0 - p) * (1.0 - p) + errors * p * p;
        self.absolute += right * (1.0 - p) + errors * p;
        self.log_loss += right * log_right + errors * log_wrong;
        self.spiegelhalter_numerator += tilt * (right * (1.0 - p) - errors * p);
        self.spiegelhalter_variance += run.weight * tilt * tilt * p * (1.0 - p);
    }
}
