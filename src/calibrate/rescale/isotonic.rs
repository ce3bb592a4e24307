//! Isotonic regression by pool-adjacent-violators, as scikit-learn's
//! `IsotonicRegression(out_of_bounds="clip")`: tied confidences are pooled
//! first, predictions interpolate linearly between the fitted points and are
//! clipped to the fitted range outside it.
//!
//! Written here rather than taken from linfa-linear: the engine needs exactly
//! scikit-learn's prediction rule (the test below holds it to 1e-9), and the
//! algorithm is a few dozen lines, not worth an ndarray stack of its own.

use serde::{Deserialize, Serialize};

use super::logistic::{FitError, check_training_set};

/// A fitted non-decreasing step-and-ramp map from confidence to P(correct).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Isotonic {
    /// Distinct training confidences, ascending.
    pub x: Vec<f64>,
    /// Fitted values at `x`, non-decreasing.
    pub y: Vec<f64>,
}

/// Parameters of an isotonic fit (there are none to set yet).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IsotonicParams;

impl Isotonic {
    pub fn params() -> IsotonicParams {
        IsotonicParams
    }

    pub fn predict(&self, p: f64) -> f64 {
        let last = self.x.len() - 1;
        if p <= self.x[0] {
            return self.y[0];
        }
        if p >= self.x[last] {
            return self.y[last];
        }
        let right = self.x.partition_point(|&x| x < p);
        let (x0, x1, y0, y1) = (
            self.x[right - 1],
            self.x[right],
            self.y[right - 1],
            self.y[right],
        );
        y0 + (y1 - y0) * (p - x0) / (x1 - x0)
    }
}

impl IsotonicParams {
    pub fn fit(&self, confidences: &[f64], labels: &[bool]) -> Result<Isotonic, FitError> {
        check_training_set(confidences, labels)?;
        let mut order: Vec<usize> = (0..confidences.len()).collect();
        order.sort_by(|&a, &b| confidences[a].total_cmp(&confidences[b]));
        // Pool ties: one point per distinct confidence, weighted by its count.
        let mut points: Vec<(f64, f64, f64)> = Vec::new(); // (x, mean y, weight)
        for run in order.chunk_by(|&a, &b| confidences[a] == confidences[b]) {
            let positives = run.iter().filter(|&&i| labels[i]).count() as f64;
            let weight = run.len() as f64;
            points.push((confidences[run[0]], positives / weight, weight));
        }
        let fitted = pool_adjacent_violators(points.iter().map(|&(_, y, w)| (y, w)));
        Ok(Isotonic {
            x: points.iter().map(|p| p.0).collect(),
            y: fitted,
        })
    }
}

/// The non-decreasing fit of weighted values, one fitted value per input.
fn pool_adjacent_violators(values: impl Iterator<Item = (f64, f64)>) -> Vec<f64> {
    // Each block: (mean, total weight, number of inputs it covers).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::new();
    for (y, w) in values {
        let mut block = (y, w, 1);
        while let Some(&(mean, weight, len)) = blocks.last() {
            if mean < block.0 {
                break;
            }
            blocks.pop();
            let total = weight + block.1;
            block = (
                (mean * weight + block.0 * block.1) / total,
                total,
                len + block.2,
            );
        }
        blocks.push(block);
    }
    blocks
        .iter()
        .flat_map(|&(mean, _, len)| std::iter::repeat_n(mean, len))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::metrics::tests::fixture;

    // Expected values: python3 tests/sklearn_expected.py,
    // IsotonicRegression(out_of_bounds="clip").predict(queries).
    #[test]
    fn matches_scikit_learn_isotonic_regression() {
        let f = fixture();
        let model = Isotonic::params().fit(&f.confidence, &f.correct).unwrap();
        let queries = [0.0, 0.3, 0.55, 0.7, 0.77, 0.85, 0.93, 1.0];
        let expected = [
            0.0,
            0.21428571428571427,
            0.4666666666666667,
            0.5706092616303882,
            0.5833333333333334,
            0.7222222222222222,
            0.8,
            0.8,
        ];
        for (q, e) in queries.iter().zip(expected) {
            assert!((model.predict(*q) - e).abs() < 1e-9, "at {q}");
        }
    }

    #[test]
    fn fit_is_monotone_and_pools_violators() {
        let model = Isotonic::params()
            .fit(&[0.1, 0.2, 0.3, 0.4], &[true, false, false, true])
            .unwrap();
        assert_eq!(model.y, vec![1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 1.0]);
        assert!((model.predict(0.35) - (1.0 / 3.0 + 0.5 * (2.0 / 3.0))).abs() < 1e-12);
    }

    #[test]
    fn single_class_is_an_error() {
        assert_eq!(
            Isotonic::params().fit(&[0.1, 0.2], &[false, false]),
            Err(FitError::SingleClass { n: 2 })
        );
    }
}
