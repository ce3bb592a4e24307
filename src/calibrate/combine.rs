//! A learned combination of several confidence measures: logistic
//! regression on the measures, each standardised on the training items
//! (scikit-learn's `StandardScaler` then `LogisticRegression(C=1)`: an L2
//! penalty on the weights, none on the intercept), fitted by exact Newton
//! steps. [`out_of_fold`] predicts every item from a fit on the other folds
//! only, so that the combination is compared with single measures on the
//! same footing (issue "confidence from agreement", item 5). [`held_out`]
//! is what a run deploys: one fit on a third of the groups, and the other
//! two thirds scored by exactly that fit, for the decision cutoffs to be
//! tested on (issue "faithful, fourth pass", item 2): an out-of-fold score
//! is not what `apply` computes, and a score from a fit on every item has
//! seen the labels it would be tested against.
//!
//! Not a rescaler of one measure (`rescale`), and it chooses no folds: the
//! caller passes the same `Folds` the calibration uses.

use serde::{Deserialize, Serialize};

use super::CalibrateOptions;
use super::cv::{self, CvError, Folds};
use super::rescale::FitError;

/// Why no combination could be fitted.
#[derive(Debug, thiserror::Error)]
pub enum CombineError {
    #[error(transparent)]
    Folds(#[from] CvError),
    #[error("combining the measures: {0}")]
    Fit(#[from] FitError),
}

/// How the combination is fitted.
#[derive(Clone, Debug, PartialEq)]
pub struct CombineParams {
    /// scikit-learn's `C`: the inverse of the L2 penalty on the weights.
    pub inverse_penalty: f64,
    pub max_iter: usize,
    /// Newton stops when the largest gradient entry is below this.
    pub tolerance: f64,
}

impl Default for CombineParams {
    fn default() -> CombineParams {
        CombineParams {
            inverse_penalty: 1.0,
            max_iter: 100,
            tolerance: 1e-10,
        }
    }
}

/// A fitted combination: P(correct) = σ(b + Σ w_j (x_j - mean_j) / scale_j).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Combination {
    /// The measures, in the order of the other fields.
    pub measures: Vec<String>,
    pub means: Vec<f64>,
    /// Standard deviations (population, as `StandardScaler`); 1 where a
    /// measure does not vary.
    pub scales: Vec<f64>,
    pub weights: Vec<f64>,
    pub intercept: f64,
}

impl Combination {
    /// What makes a saved combination unusable, naming the key (a
    /// hand-edited file; codecal writes none of these): fields of different
    /// lengths, which would silently drop a measure, a scale that is not a
    /// positive number, or a value that is not finite.
    pub fn defect(&self) -> Option<String> {
        let n = self.measures.len();
        if n == 0 {
            return Some("combination.measures is empty".to_owned());
        }
        let fields = [
            ("means", &self.means),
            ("scales", &self.scales),
            ("weights", &self.weights),
        ];
        for (name, values) in fields {
            if values.len() != n {
                return Some(format!(
                    "combination.{name} has {} values for {n} measures",
                    values.len()
                ));
            }
            if let Some(i) = values.iter().position(|v| !v.is_finite()) {
                return Some(format!(
                    "combination.{name}[{i}] is {}, not finite",
                    values[i]
                ));
            }
        }
        if let Some(i) = self.scales.iter().position(|&s| s <= 0.0) {
            return Some(format!(
                "combination.scales[{i}] is {}, not above 0",
                self.scales[i]
            ));
        }
        (!self.intercept.is_finite())
            .then(|| format!("combination.intercept is {}, not finite", self.intercept))
    }

    /// P(correct) for one item's measures, in `measures` order.
    pub fn predict(&self, values: &[f64]) -> f64 {
        let z: f64 = self.intercept
            + values
                .iter()
                .zip(&self.means)
                .zip(&self.scales)
                .zip(&self.weights)
                .map(|(((x, m), s), w)| w * (x - m) / s)
                .sum::<f64>();
        sigmoid(z)
    }
}

fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

impl CombineParams {
    /// Fits on `columns` (one per measure, each with a value per item).
    pub fn fit(
        &self,
        measures: &[String],
        columns: &[Vec<f64>],
        labels: &[bool],
    ) -> Result<Combination, FitError> {
        let rows: Vec<usize> = (0..labels.len()).collect();
        self.fit_rows(measures, columns, labels, &rows)
    }

    fn fit_rows(
        &self,
        measures: &[String],
        columns: &[Vec<f64>],
        labels: &[bool],
        rows: &[usize],
    ) -> Result<Combination, FitError> {
        let y: Vec<bool> = rows.iter().map(|&i| labels[i]).collect();
        if y.is_empty() {
            return Err(FitError::Empty);
        }
        if y.iter().all(|&label| label == y[0]) {
            return Err(FitError::SingleClass { n: y.len() });
        }
        let n = rows.len() as f64;
        let (mut means, mut scales) = (Vec::new(), Vec::new());
        for column in columns {
            let mean = rows.iter().map(|&i| column[i]).sum::<f64>() / n;
            let var = rows
                .iter()
                .map(|&i| (column[i] - mean).powi(2))
                .sum::<f64>()
                / n;
            means.push(mean);
            scales.push(if var > 0.0 { var.sqrt() } else { 1.0 });
        }
        let x: Vec<Vec<f64>> = rows
            .iter()
            .map(|&i| {
                columns
                    .iter()
                    .zip(&means)
                    .zip(&scales)
                    .map(|((c, m), s)| (c[i] - m) / s)
                    .collect()
            })
            .collect();
        let (weights, intercept) = self.newton(&x, &y)?;
        Ok(Combination {
            measures: measures.to_vec(),
            means,
            scales,
            weights,
            intercept,
        })
    }

    /// Newton's method on C·Σ log-loss + ½‖w‖², the intercept last and
    /// unpenalised; the objective is strictly convex, so from zero it
    /// converges in a few steps.
    fn newton(&self, x: &[Vec<f64>], y: &[bool]) -> Result<(Vec<f64>, f64), FitError> {
        let d = x.first().map_or(0, Vec::len);
        let c = self.inverse_penalty;
        let mut beta = vec![0.0; d + 1];
        for _ in 0..self.max_iter {
            let mut gradient = vec![0.0; d + 1];
            let mut hessian = vec![vec![0.0; d + 1]; d + 1];
            for (row, &label) in x.iter().zip(y) {
                // The item's features with the intercept's 1 last.
                let features: Vec<f64> = row.iter().copied().chain([1.0]).collect();
                let z: f64 = features.iter().zip(&beta).map(|(a, b)| a * b).sum();
                let p = sigmoid(z);
                let residual = c * (p - f64::from(u8::from(label)));
                let weight = c * p * (1.0 - p);
                for ((g, h), fj) in gradient.iter_mut().zip(&mut hessian).zip(&features) {
                    *g += residual * fj;
                    for (hk, fk) in h.iter_mut().zip(&features) {
                        *hk += weight * fj * fk;
                    }
                }
            }
            // The penalty, on the weights only.
            for (j, (g, h)) in gradient.iter_mut().zip(&mut hessian).take(d).enumerate() {
                *g += beta[j];
                h[j] += 1.0;
            }
            if gradient.iter().all(|g| g.abs() < self.tolerance) {
                return Ok((beta[..d].to_vec(), beta[d]));
            }
            let step = solve(hessian, gradient).ok_or(FitError::Separable)?;
            for (b, s) in beta.iter_mut().zip(step) {
                *b -= s;
            }
        }
        Err(FitError::NotConverged {
            iterations: self.max_iter,
        })
    }
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting; `None`
/// when `a` is singular.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let (above, below) = a.split_at_mut(col + 1);
        let pivot_row = &above[col];
        for (offset, row) in below.iter_mut().enumerate() {
            let factor = row[col] / pivot_row[col];
            for (r, p) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                *r -= factor * p;
            }
            b[col + 1 + offset] -= factor * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let rest: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - rest) / a[row][row];
    }
    Some(x)
}

/// Every item's combined confidence from a fit on the other folds only
/// (`None` for an item no fold tests). The fit a run deploys is
/// [`held_out`]'s, not one on every item.
pub fn out_of_fold(
    params: &CombineParams,
    measures: &[String],
    columns: &[Vec<f64>],
    labels: &[bool],
    folds: &Folds,
) -> Result<Vec<Option<f64>>, FitError> {
    let n = labels.len();
    let mut predicted = vec![None; n];
    for (f, test) in folds.test.iter().enumerate() {
        let train = folds.train(f, n);
        let fit = params.fit_rows(measures, columns, labels, &train)?;
        for &i in test {
            let values: Vec<f64> = columns.iter().map(|c| c[i]).collect();
            predicted[i] = Some(fit.predict(&values));
        }
    }
    Ok(predicted)
}

/// [`out_of_fold`] in the folds the calibration with `options` uses, so the
/// combination's numbers sit beside the single measures' rescaled ones; an
/// item no fold tests gets the base rate of all items.
pub fn in_calibration_folds(
    measures: &[String],
    columns: &[Vec<f64>],
    labels: &[bool],
    groups: Option<&[String]>,
    options: &CalibrateOptions,
) -> Result<Vec<f64>, CombineError> {
    let folds = cv::split(options.cv, options.folds, labels, groups, options.seed)?;
    let predicted = out_of_fold(&CombineParams::default(), measures, columns, labels, &folds)?;
    let base_rate = labels.iter().filter(|&&y| y).count() as f64 / labels.len().max(1) as f64;
    Ok(predicted
        .into_iter()
        .map(|p| p.unwrap_or(base_rate))
        .collect())
}

/// The deployed combination and the items its cutoffs are tested on.
#[derive(Clone, Debug, PartialEq)]
pub struct HeldOut {
    /// Fitted on the items outside `tested` only.
    pub fit: Combination,
    /// The tested items, ascending.
    pub tested: Vec<usize>,
    /// `fit`'s confidence for each tested item, in `tested`'s order: what
    /// `apply` computes for them.
    pub scores: Vec<f64>,
}

/// Fits the combination on one part of the items (`cv::held_out`: whole
/// groups with `cv = "group"`) and scores the others with that fit.
pub fn held_out(
    measures: &[String],
    columns: &[Vec<f64>],
    labels: &[bool],
    groups: Option<&[String]>,
    options: &CalibrateOptions,
) -> Result<HeldOut, CombineError> {
    let (fitted, tested) = cv::held_out(options.cv, labels, groups, options.seed)?;
    let fit = CombineParams::default().fit_rows(measures, columns, labels, &fitted)?;
    let scores = tested
        .iter()
        .map(|&i| fit.predict(&columns.iter().map(|c| c[i]).collect::<Vec<_>>()))
        .collect();
    Ok(HeldOut {
        fit,
        tested,
        scores,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// scikit-learn 1.x: `make_pipeline(StandardScaler(),
    /// LogisticRegression(C=1.0, tol=1e-12, max_iter=100000))` on these
    /// columns (`tests/sklearn_expected.py`, "combination").
    #[test]
    fn the_fit_is_scikit_learns_standardised_logistic_regression() {
        let a = vec![0.9, 0.8, 0.3, 0.6, 0.2, 0.95, 0.4, 0.7, 0.1, 0.5];
        let b = vec![1.0, 0.6, 0.2, 1.0, 0.4, 0.8, 0.0, 0.2, 0.2, 0.6];
        let y = [
            true, true, false, true, false, true, false, false, false, true,
        ];
        let names = vec!["a".to_owned(), "b".to_owned()];
        let fit = CombineParams::default()
            .fit(&names, &[a.clone(), b.clone()], &y)
            .unwrap();
        let expected_weights = [SKLEARN_WEIGHTS[0], SKLEARN_WEIGHTS[1]];
        for (w, e) in fit.weights.iter().zip(expected_weights) {
            assert!((w - e).abs() < 1e-6, "{w} vs {e}");
        }
        assert!((fit.intercept - SKLEARN_INTERCEPT).abs() < 1e-6);
        let p = fit.predict(&[a[0], b[0]]);
        assert!((p - SKLEARN_FIRST_PROBABILITY).abs() < 1e-6, "{p}");
    }

    const SKLEARN_WEIGHTS: [f64; 2] = [0.7775432111, 1.2570755691];
    const SKLEARN_INTERCEPT: f64 = 0.0689808350;
    const SKLEARN_FIRST_PROBABILITY: f64 = 0.9487030668;

    #[test]
    fn out_of_fold_predictions_never_see_their_own_fold() {
        let n = 20;
        let x: Vec<f64> = (0..n).map(|i| i as f64 / n as f64).collect();
        let y: Vec<bool> = (0..n).map(|i| i % 3 != 0 && i > 5).collect();
        let folds = Folds {
            test: vec![(0..10).collect(), (10..20).collect()],
            in_sample: false,
            untested: 0,
        };
        let names = vec!["x".to_owned()];
        let oof = out_of_fold(
            &CombineParams::default(),
            &names,
            std::slice::from_ref(&x),
            &y,
            &folds,
        )
        .unwrap();
        let first_half = CombineParams::default()
            .fit_rows(
                &names,
                std::slice::from_ref(&x),
                &y,
                &(10..20).collect::<Vec<_>>(),
            )
            .unwrap();
        assert_eq!(oof[3], Some(first_half.predict(&[x[3]])));
    }

    #[test]
    fn the_held_out_fit_never_sees_a_tested_item_and_scores_them_as_deployed() {
        let n = 60;
        let x: Vec<f64> = (0..n).map(|i| ((i * 37) % 60) as f64 / 60.0).collect();
        let y: Vec<bool> = (0..n).map(|i| ((i * 37) % 60) > 25 || i % 7 == 0).collect();
        let groups: Vec<String> = (0..n).map(|i| format!("g{}", i / 2)).collect();
        let names = vec!["x".to_owned()];
        let options = CalibrateOptions {
            cv: cv::CvStrategy::Group,
            ..CalibrateOptions::default()
        };
        let columns = std::slice::from_ref(&x);
        let held = held_out(&names, columns, &y, Some(&groups), &options).unwrap();
        assert!(
            held.tested.len() >= 36 && held.tested.len() <= 42,
            "{}",
            held.tested.len()
        );
        let fitted: Vec<usize> = (0..n).filter(|i| !held.tested.contains(i)).collect();
        // The fit is the fit on the other items alone.
        let refit = CombineParams::default()
            .fit_rows(&names, columns, &y, &fitted)
            .unwrap();
        assert_eq!(held.fit, refit);
        // No group is on both sides.
        for &i in &held.tested {
            assert!(fitted.iter().all(|&j| groups[j] != groups[i]));
        }
        for (&i, &score) in held.tested.iter().zip(&held.scores) {
            assert_eq!(score, held.fit.predict(&[x[i]]));
        }
    }
}
