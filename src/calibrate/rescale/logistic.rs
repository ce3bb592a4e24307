//! Platt scaling and temperature scaling: a one-feature logistic regression.
//!
//! The feature is logit(p) (Platt, temperature; the summarization seed's
//! `platt_scale.py`), ln(p) (`platt-ln`, the wording of seed 000) or p itself
//! (`platt-p`, "Open the Oyster"'s Eq. 4, sigmoid(A·p + B)). The fit matches scikit-learn's `LogisticRegression()`
//! defaults: L2 penalty 1/(2C)·slope² with C = 1, intercept not penalized.
//!
//! Why not linfa-logistic: it minimizes with L-BFGS to a gradient tolerance,
//! which agrees with scikit-learn's optimum only to about 1e-4, and it
//! allocates ndarray matrices per fit. A two-parameter convex problem is
//! solved exactly by Newton's method in a handful of passes over the data,
//! which is both the 1e-6 agreement the tests demand and the speed the
//! 1,000,000-row benchmark needs.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Probabilities are clipped to [CLIP, 1 - CLIP] before the logit or log.
pub const CLIP: f64 = 1e-12;

/// The transform of a confidence that the regression sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Feature {
    /// ln(p / (1 - p))
    Logit,
    /// ln(p)
    Ln,
    /// p itself, unclipped.
    P,
}

impl Feature {
    pub fn apply(self, p: f64) -> f64 {
        let clipped = p.clamp(CLIP, 1.0 - CLIP);
        match self {
            Feature::Logit => (clipped / (1.0 - clipped)).ln(),
            Feature::Ln => clipped.ln(),
            Feature::P => p,
        }
    }
}

/// Unchecked parameters of a [`Platt`] fit. Build with [`Platt::params`].
#[derive(Clone, Debug, PartialEq)]
pub struct PlattParams {
    feature: Feature,
    fit_intercept: bool,
    /// Inverse penalty strength C; `None` fits the unpenalized maximum likelihood.
    inverse_penalty: Option<f64>,
    max_iter: usize,
    tolerance: f64,
}

/// Parameters that passed [`PlattParams::check`]; fitting cannot fail on them.
#[derive(Clone, Debug, PartialEq)]
pub struct PlattValidParams(PlattParams);

/// A bad parameter value, named.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum ParamError {
    #[error("max_iter must be at least 1, got {0}")]
    MaxIter(usize),
    #[error("the inverse penalty strength C must be positive and finite, got {0}")]
    InversePenalty(f64),
    #[error("the tolerance must be positive and finite, got {0}")]
    Tolerance(f64),
}

/// Why a fit found no model.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error("no items to fit on")]
    Empty,
    #[error("{confidences} confidences but {labels} labels")]
    LengthMismatch { confidences: usize, labels: usize },
    #[error("all {n} training items are in one class")]
    SingleClass { n: usize },
    #[error(
        "the classes are separated by confidence alone, so the unpenalized fit has no finite optimum; keep the penalty"
    )]
    Separable,
    #[error("no convergence after {iterations} Newton steps")]
    NotConverged { iterations: usize },
}

/// A fitted logistic rescaler: P(correct) = sigmoid(slope · feature(p) + intercept).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Platt {
    pub feature: Feature,
    pub slope: f64,
    pub intercept: f64,
}

impl Platt {
    /// Platt scaling on logit(p) with scikit-learn's default penalty (C = 1).
    pub fn params() -> PlattParams {
        PlattParams {
            feature: Feature::Logit,
            fit_intercept: true,
            inverse_penalty: Some(1.0),
            max_iter: 100,
            tolerance: 1e-7,
        }
    }

    /// Temperature scaling: slope on logit(p) only, no intercept.
    pub fn temperature() -> PlattParams {
        Platt::params().fit_intercept(false)
    }

    pub fn predict(&self, p: f64) -> f64 {
        self.predict_feature(self.feature.apply(p))
    }

    /// The prediction from the confidence's feature, computed beforehand.
    pub fn predict_feature(&self, x: f64) -> f64 {
        sigmoid(self.slope * x + self.intercept)
    }
}

impl PlattParams {
    pub fn feature(mut self, feature: Feature) -> Self {
        self.feature = feature;
        self
    }

    pub fn fit_intercept(mut self, fit_intercept: bool) -> Self {
        self.fit_intercept = fit_intercept;
        self
    }

    /// `Some(C)` penalizes the slope by slope²/(2C); `None` removes the penalty.
    pub fn inverse_penalty(mut self, c: Option<f64>) -> Self {
        self.inverse_penalty = c;
        self
    }

    pub fn max_iter(mut self, max_iter: usize) -> Self {
        self.max_iter = max_iter;
        self
    }

    /// Newton stops once its next step moves no parameter by more than this, and
    /// takes that step: convergence is quadratic, so the remaining error is of the
    /// order of the step squared (1e-14 at the default 1e-7).
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = tolerance;
        self
    }

    pub fn check(self) -> Result<PlattValidParams, ParamError> {
        if self.max_iter == 0 {
            return Err(ParamError::MaxIter(self.max_iter));
        }
        if let Some(c) = self.inverse_penalty
            && !(c.is_finite() && c > 0.0)
        {
            return Err(ParamError::InversePenalty(c));
        }
        if !(self.tolerance.is_finite() && self.tolerance > 0.0) {
            return Err(ParamError::Tolerance(self.tolerance));
        }
        Ok(PlattValidParams(self))
    }
}

impl PlattValidParams {
    /// Fits on confidences and labels by damped Newton steps from zero.
    pub fn fit(&self, confidences: &[f64], labels: &[bool]) -> Result<Platt, FitError> {
        check_training_set(confidences, labels)?;
        self.fit_features(&self.features(confidences), labels)
    }

    /// The feature of each confidence (over the cores): what the fit and
    /// [`Platt::predict_feature`] take.
    pub fn features(&self, confidences: &[f64]) -> Vec<f64> {
        let feature = self.0.feature;
        confidences
            .par_iter()
            .with_min_len(1 << 14)
            .map(|&p| feature.apply(p))
            .collect()
    }

    /// Fits on [`features`](Self::features) computed beforehand:
    /// cross-validation computes them once for every fold.
    pub fn fit_features(&self, x: &[f64], labels: &[bool]) -> Result<Platt, FitError> {
        let params = &self.0;
        check_training_set(x, labels)?;
        let ridge = params.inverse_penalty.map_or(0.0, |c| 1.0 / c);
        if ridge == 0.0 && separable(x, labels, params.fit_intercept) {
            return Err(FitError::Separable);
        }
        let objective = Objective {
            x,
            y: labels,
            ridge,
        };
        let start = warm_start(&objective, params.fit_intercept, params.tolerance);
        let (slope, intercept) = newton(
            &objective,
            start,
            params.fit_intercept,
            params.max_iter,
            params.tolerance,
        )?;
        Ok(Platt {
            feature: params.feature,
            slope,
            intercept,
        })
    }
}

/// The checks every rescaler makes of its training set.
pub(crate) fn check_training_set(confidences: &[f64], labels: &[bool]) -> Result<(), FitError> {
    if confidences.len() != labels.len() {
        return Err(FitError::LengthMismatch {
            confidences: confidences.len(),
            labels: labels.len(),
        });
    }
    if confidences.is_empty() {
        return Err(FitError::Empty);
    }
    if labels.iter().all(|&y| y == labels[0]) {
        return Err(FitError::SingleClass { n: labels.len() });
    }
    Ok(())
}

/// Whether some slope (and intercept) puts every positive above every negative,
/// in which case the unpenalized likelihood keeps rising as the slope grows.
fn separable(x: &[f64], labels: &[bool], fit_intercept: bool) -> bool {
    let range = |class: bool| {
        let values = x
            .iter()
            .zip(labels)
            .filter(|(_, y)| **y == class)
            .map(|(x, _)| *x);
        values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        })
    };
    let ((pos_lo, pos_hi), (neg_lo, neg_hi)) = (range(true), range(false));
    if fit_intercept {
        neg_hi <= pos_lo || pos_hi <= neg_lo
    } else {
        (neg_hi <= 0.0 && pos_lo >= 0.0) || (pos_hi <= 0.0 && neg_lo >= 0.0)
    }
}

pub(crate) fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// Penalized negative log-likelihood of (slope, intercept) with its derivatives.
struct Objective<'a> {
    x: &'a [f64],
    y: &'a [bool],
    ridge: f64,
}

/// Gradient and Hessian at one point.
struct Derivatives {
    gradient: [f64; 2],
    hessian: [[f64; 2]; 2],
}

impl Objective<'_> {
    /// The objective's value: one logarithm per item, so computed only when needed.
    fn value(&self, slope: f64, intercept: f64) -> f64 {
        let mut value = 0.0;
        for (&x, &y) in self.x.iter().zip(self.y) {
            let z = slope * x + intercept;
            // softplus(z) - y z, written so that neither branch overflows. ln(1 + e)
            // rather than ln_1p(e): the value only steers the line search, the
            // absolute error stays below 1e-16 per term, and ln is much cheaper.
            let softplus = z.max(0.0) + (1.0 + (-z.abs()).exp()).ln();
            value += softplus - if y { z } else { 0.0 };
        }
        value + 0.5 * self.ridge * slope * slope
    }

    /// A lower bound on value(from) − value(to), from the derivatives at
    /// `to` alone: Taylor's expansion of each item's loss about `to`, its
    /// cubic term bounded by the quadratic one (|σ'''| ≤ σ''), its quartic
    /// remainder by |σ''''| ≤ 1/8, and the sums' rounding by the worst-case
    /// bound of n additions. Positive means `to` is certainly lower, so the
    /// line search need not compute either value (one exp and one ln per
    /// item each). Near the optimum, where steps are short, it nearly always
    /// is; far from it the bound is loose and the values decide.
    fn certain_drop(
        &self,
        from: (f64, f64),
        to: (f64, f64),
        at_to: &Derivatives,
        largest_x: f64,
    ) -> f64 {
        let (a, b) = (from.0 - to.0, from.1 - to.1);
        let n = self.x.len() as f64;
        let largest_dz = a.abs() * largest_x + b.abs();
        // The unpenalized sums: Σ (p − y) x, Σ (p − y), Σ p(1 − p) x^k at `to`.
        let g0 = at_to.gradient[0] - self.ridge * to.0;
        let g1 = at_to.gradient[1];
        let [[h00, h01], [_, h11]] = at_to.hessian;
        let h00 = h00 - self.ridge;
        let linear = a * g0 + b * g1;
        let quadratic = a * a * h00 + 2.0 * a * b * h01 + b * b * h11;
        let remainder = n * largest_dz.powi(4) / 192.0;
        let rounding = n * n * f64::EPSILON * (largest_dz + largest_dz * largest_dz);
        let penalty = 0.5 * self.ridge * (from.0 * from.0 - to.0 * to.0);
        linear + 0.5 * quadratic * (1.0 - largest_dz / 3.0) - remainder - rounding + penalty
    }

    fn derivatives(&self, slope: f64, intercept: f64) -> Derivatives {
        let (mut g0, mut g1, mut h00, mut h01, mut h11) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for (&x, &y) in self.x.iter().zip(self.y) {
            let z = slope * x + intercept;
            let e = (-z.abs()).exp();
            let p = if z >= 0.0 {
                1.0 / (1.0 + e)
            } else {
                e / (1.0 + e)
            };
            let (residual, s) = (p - if y { 1.0 } else { 0.0 }, p * (1.0 - p));
            g0 += residual * x;
            g1 += residual;
            h00 += s * x * x;
            h01 += s * x;
            h11 += s;
        }
        Derivatives {
            gradient: [g0 + self.ridge * slope, g1],
            hessian: [[h00 + self.ridge, h01], [h01, h11]],
        }
    }
}

/// Above this many items, Newton first runs on an evenly strided subsample.
const WARM_START_ITEMS: usize = 20_000;

/// A starting point near the optimum: the fit on a strided subsample of a large
/// training set, so that the passes over all items are the last two or three
/// Newton steps rather than all six or seven. The optimum itself is unchanged:
/// the full-data iteration decides convergence. Zero for small sets, or when the
/// subsample has one class or no finite optimum.
fn warm_start(objective: &Objective, fit_intercept: bool, tolerance: f64) -> (f64, f64) {
    let n = objective.x.len();
    if n <= 2 * WARM_START_ITEMS {
        return (0.0, 0.0);
    }
    let stride = n / WARM_START_ITEMS;
    let x: Vec<f64> = objective.x.iter().step_by(stride).copied().collect();
    let y: Vec<bool> = objective.y.iter().step_by(stride).copied().collect();
    let subsample = Objective {
        x: &x,
        y: &y,
        // The penalty is weighed against n items; scale it with the sample.
        ridge: objective.ridge * x.len() as f64 / n as f64,
    };
    let solvable = y.iter().any(|&v| v) && y.iter().any(|&v| !v);
    if !solvable || (subsample.ridge == 0.0 && separable(&x, &y, fit_intercept)) {
        return (0.0, 0.0);
    }
    newton(&subsample, (0.0, 0.0), fit_intercept, 100, tolerance).unwrap_or((0.0, 0.0))
}

/// Newton's method with step halving from `start`; returns (slope, intercept).
fn newton(
    objective: &Objective,
    start: (f64, f64),
    fit_intercept: bool,
    max_iter: usize,
    tolerance: f64,
) -> Result<(f64, f64), FitError> {
    let (mut slope, mut intercept) = start;
    let mut here = objective.derivatives(slope, intercept);
    // The value at the current point, once some step has needed it.
    let mut here_value: Option<f64> = None;
    let largest_x = objective.x.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    for _ in 0..max_iter {
        let step = newton_step(&here, fit_intercept);
        if !step.iter().all(|s| s.is_finite()) {
            break; // A singular Hessian: the fitted probabilities have saturated.
        }
        if step[0].abs().max(step[1].abs()) <= tolerance {
            // Newton converges quadratically: a step this small lands on the optimum.
            return Ok((slope - step[0], intercept - step[1]));
        }
        let mut scale = 1.0;
        loop {
            let (s, b) = (slope - scale * step[0], intercept - scale * step[1]);
            let trial = objective.derivatives(s, b);
            // Along the step the objective is convex and falls at the start. If it
            // still falls at the trial point, it is lower there: accept without
            // computing it. Past the minimum along the step, compare values; a sum of
            // n terms is exact only to about 1e-12 relative, so within that counts
            // as no increase (halving on rounding noise costs a pass per halving).
            let falling = trial.gradient[0] * step[0] + trial.gradient[1] * step[1] >= 0.0;
            let drop = objective.certain_drop((slope, intercept), (s, b), &trial, largest_x);
            let accepted = if falling || drop > 0.0 {
                Some(None)
            } else {
                let current = *here_value.get_or_insert_with(|| objective.value(slope, intercept));
                let value = objective.value(s, b);
                (value <= current + 1e-12 * current.abs().max(1.0)).then_some(Some(value))
            };
            if let Some(value) = accepted {
                (slope, intercept, here, here_value) = (s, b, trial, value);
                break;
            }
            scale *= 0.5;
            if scale < 1e-10 {
                return Err(FitError::NotConverged {
                    iterations: max_iter,
                });
            }
        }
    }
    Err(FitError::NotConverged {
        iterations: max_iter,
    })
}

/// H⁻¹ g for the free parameters (the intercept is held at zero when not fitted).
fn newton_step(at: &Derivatives, fit_intercept: bool) -> [f64; 2] {
    let [g0, g1] = at.gradient;
    let [[h00, h01], [_, h11]] = at.hessian;
    if !fit_intercept {
        return [g0 / h00, 0.0];
    }
    let det = h00 * h11 - h01 * h01;
    [(h11 * g0 - h01 * g1) / det, (h00 * g1 - h01 * g0) / det]
}

#[cfg(test)]
mod tests;
