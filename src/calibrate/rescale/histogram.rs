//! Histogram binning (Zadrozny and Elkan): each equal-width confidence bin
//! predicts the success rate of its training items. The bins are the same
//! (lo, hi] bins the ECE uses, so a rescaled confidence never changes bin
//! meaning between fitting and evaluation.

use serde::{Deserialize, Serialize};

use super::logistic::{FitError, check_training_set};
use crate::calibrate::metrics::equal_width_bin;

/// A fitted histogram map. A bin with no training items keeps the raw
/// confidence: there is no evidence there to move it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistogramBinning {
    /// Success rate per bin, `None` where the bin was empty in training.
    pub values: Vec<Option<f64>>,
}

/// Unchecked parameters: the number of bins.
#[derive(Clone, Debug, PartialEq)]
pub struct HistogramParams {
    bins: usize,
}

#[derive(Debug, PartialEq, thiserror::Error)]
pub enum HistogramParamError {
    #[error("histogram binning needs at least 1 bin, got {0}")]
    Bins(usize),
}

/// Parameters that passed [`HistogramParams::check`].
#[derive(Clone, Debug, PartialEq)]
pub struct HistogramValidParams {
    bins: usize,
}

impl HistogramBinning {
    pub fn params() -> HistogramParams {
        HistogramParams { bins: 10 }
    }

    pub fn predict(&self, p: f64) -> f64 {
        self.values[equal_width_bin(p, self.values.len())].unwrap_or(p)
    }
}

impl HistogramParams {
    pub fn bins(mut self, bins: usize) -> Self {
        self.bins = bins;
        self
    }

    pub fn check(self) -> Result<HistogramValidParams, HistogramParamError> {
        if self.bins == 0 {
            return Err(HistogramParamError::Bins(0));
        }
        Ok(HistogramValidParams { bins: self.bins })
    }
}

impl HistogramValidParams {
    pub fn fit(&self, confidences: &[f64], labels: &[bool]) -> Result<HistogramBinning, FitError> {
        check_training_set(confidences, labels)?;
        let mut counts = vec![(0usize, 0usize); self.bins];
        for (&p, &y) in confidences.iter().zip(labels) {
            let bin = &mut counts[equal_width_bin(p, self.bins)];
            bin.0 += 1;
            bin.1 += usize::from(y);
        }
        let values = counts
            .iter()
            .map(|&(n, pos)| (n > 0).then(|| pos as f64 / n as f64))
            .collect();
        Ok(HistogramBinning { values })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_predict_their_success_rate() {
        let model = HistogramBinning::params()
            .bins(2)
            .check()
            .unwrap()
            .fit(&[0.1, 0.2, 0.4, 0.6], &[true, false, false, true])
            .unwrap();
        assert_eq!(model.values, vec![Some(1.0 / 3.0), Some(1.0)]);
        assert_eq!(model.predict(0.5), 1.0 / 3.0);
        assert_eq!(model.predict(0.51), 1.0);
    }

    #[test]
    fn empty_bin_keeps_the_raw_confidence() {
        let model = HistogramBinning::params()
            .bins(10)
            .check()
            .unwrap()
            .fit(&[0.05, 0.95], &[false, true])
            .unwrap();
        assert_eq!(model.predict(0.55), 0.55);
    }

    #[test]
    fn zero_bins_is_rejected() {
        assert_eq!(
            HistogramBinning::params().bins(0).check(),
            Err(HistogramParamError::Bins(0))
        );
    }
}
