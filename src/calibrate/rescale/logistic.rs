//! Platt scaling and temperature scaling: a one-feature logistic regression.
//!
//! The feature is logit(p) (Platt, temperature) or ln(p) (`platt-ln`, the
//! wording of seed 000). The fit matches scikit-learn's `LogisticRegression()`
//! defaults: L2 penalty 1/(2C)·slope² with C = 1, intercept not penalized.
//!
//! Why not linfa-logistic: it minimizes with L-BFGS to a gradient tolerance,
//! which agrees with scikit-learn's optimum only to about 1e-4, and it
//! allocates ndarray matrices per fit. A two-parameter convex problem is
//! solved exactly by Newton's method in a handful of passes over the data,
//! which is both the 1e-6 agreement the tests demand and the speed the
//! 1,000,000-row benchmark needs.

use serde::Serialize;

/// Probabilities are clipped to [CLIP, 1 - CLIP] before the logit or log.
pub const CLIP: f64 = 1e-12;

/// The transform of a confidence that the regression sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Feature {
    /// ln(p / (1 - p))
    Logit,
    /// ln(p)
    Ln,
}

impl Feature {
    pub fn apply(self, p: f64) -> f64 {
        let p = p.clamp(CLIP, 1.0 - CLIP);
        match self {
            Feature::Logit => (p / (1.0 - p)).ln(),
            Feature::Ln => p.ln(),
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
#[derive(Clone, Debug, PartialEq, Serialize)]
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
            tolerance: 1e-10,
        }
    }

    /// Temperature scaling: slope on logit(p) only, no intercept.
    pub fn temperature() -> PlattParams {
        Platt::params().fit_intercept(false)
    }

    pub fn predict(&self, p: f64) -> f64 {
        sigmoid(self.slope * self.feature.apply(p) + self.intercept)
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

    /// Newton stops when no parameter moves by more than this.
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = tolerance;
        self
    }

    pub fn check(self) -> Result<PlattValidParams, ParamError> {
        if self.max_iter == 0 {
            return Err(ParamError::MaxIter(self.max_iter));
        }
        if let Some(c) = self.inverse_penalty {
            if !(c.is_finite() && c > 0.0) {
                return Err(ParamError::InversePenalty(c));
            }
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
        let params = &self.0;
        check_training_set(confidences, labels)?;
        let x: Vec<f64> = confidences
            .iter()
            .map(|&p| params.feature.apply(p))
            .collect();
        let ridge = params.inverse_penalty.map_or(0.0, |c| 1.0 / c);
        if ridge == 0.0 && separable(&x, labels, params.fit_intercept) {
            return Err(FitError::Separable);
        }
        let objective = Objective {
            x: &x,
            y: labels,
            ridge,
        };
        let (slope, intercept) = newton(
            &objective,
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

/// Value, gradient and Hessian at one point.
struct Evaluation {
    value: f64,
    gradient: [f64; 2],
    hessian: [[f64; 2]; 2],
}

impl Objective<'_> {
    fn evaluate(&self, slope: f64, intercept: f64) -> Evaluation {
        let (mut value, mut g0, mut g1, mut h00, mut h01, mut h11) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        for (&x, &y) in self.x.iter().zip(self.y) {
            let z = slope * x + intercept;
            // softplus(z) - y z, written so that neither branch overflows.
            let e = (-z.abs()).exp();
            let softplus = z.max(0.0) + e.ln_1p();
            let p = if z >= 0.0 {
                1.0 / (1.0 + e)
            } else {
                e / (1.0 + e)
            };
            let (yf, s) = (if y { 1.0 } else { 0.0 }, p * (1.0 - p));
            value += softplus - yf * z;
            g0 += (p - yf) * x;
            g1 += p - yf;
            h00 += s * x * x;
            h01 += s * x;
            h11 += s;
        }
        Evaluation {
            value: value + 0.5 * self.ridge * slope * slope,
            gradient: [g0 + self.ridge * slope, g1],
            hessian: [[h00 + self.ridge, h01], [h01, h11]],
        }
    }
}

/// Newton's method with step halving; returns (slope, intercept).
fn newton(
    objective: &Objective,
    fit_intercept: bool,
    max_iter: usize,
    tolerance: f64,
) -> Result<(f64, f64), FitError> {
    let (mut slope, mut intercept) = (0.0, 0.0);
    let mut here = objective.evaluate(slope, intercept);
    for _ in 0..max_iter {
        let step = newton_step(&here, fit_intercept);
        if !step.iter().all(|s| s.is_finite()) {
            // A singular Hessian: the fitted probabilities have saturated.
            break;
        }
        let mut scale = 1.0;
        loop {
            let trial = objective.evaluate(slope - scale * step[0], intercept - scale * step[1]);
            // Accept any non-increase: at the optimum the value stops changing in the last bits.
            if trial.value <= here.value || scale < 1e-10 {
                slope -= scale * step[0];
                intercept -= scale * step[1];
                here = trial;
                break;
            }
            scale *= 0.5;
        }
        if (scale * step[0]).abs().max((scale * step[1]).abs()) <= tolerance {
            return Ok((slope, intercept));
        }
    }
    Err(FitError::NotConverged {
        iterations: max_iter,
    })
}

/// H⁻¹ g for the free parameters (the intercept is held at zero when not fitted).
fn newton_step(at: &Evaluation, fit_intercept: bool) -> [f64; 2] {
    let [g0, g1] = at.gradient;
    let [[h00, h01], [_, h11]] = at.hessian;
    if !fit_intercept {
        return [g0 / h00, 0.0];
    }
    let det = h00 * h11 - h01 * h01;
    [(h11 * g0 - h01 * g1) / det, (h00 * g1 - h01 * g0) / det]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::metrics::tests::fixture;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-6, "{a} != {b}");
    }

    fn fit(params: PlattParams) -> Platt {
        let f = fixture();
        params
            .check()
            .unwrap()
            .fit(&f.confidence, &f.correct)
            .unwrap()
    }

    // Expected values: python3 tests/sklearn_expected.py, LogisticRegression(tol=1e-12).
    #[test]
    fn platt_matches_default_logistic_regression() {
        let m = fit(Platt::params());
        close(m.slope, 0.4625889625699462);
        close(m.intercept, -0.18903532879394636);
    }

    #[test]
    fn unpenalized_platt_matches_c_infinity() {
        let m = fit(Platt::params().inverse_penalty(None));
        close(m.slope, 0.48520802056078516);
        close(m.intercept, -0.20327251602326554);
    }

    #[test]
    fn platt_ln_matches_logistic_regression_on_log_p() {
        let m = fit(Platt::params().feature(Feature::Ln));
        close(m.slope, 0.9031587619317243);
        close(m.intercept, 0.595127980307037);
    }

    #[test]
    fn temperature_matches_fit_intercept_false() {
        let m = fit(Platt::temperature());
        close(m.slope, 0.38812734516689157);
        assert_eq!(m.intercept, 0.0);
    }

    #[test]
    fn each_bad_parameter_has_its_error() {
        assert_eq!(
            Platt::params().max_iter(0).check(),
            Err(ParamError::MaxIter(0))
        );
        assert_eq!(
            Platt::params().inverse_penalty(Some(0.0)).check(),
            Err(ParamError::InversePenalty(0.0))
        );
        assert!(matches!(
            Platt::params().inverse_penalty(Some(f64::NAN)).check(),
            Err(ParamError::InversePenalty(_))
        ));
        assert_eq!(
            Platt::params().tolerance(-1.0).check(),
            Err(ParamError::Tolerance(-1.0))
        );
    }

    #[test]
    fn each_bad_training_set_has_its_error() {
        let valid = Platt::params().check().unwrap();
        assert_eq!(valid.fit(&[], &[]), Err(FitError::Empty));
        assert_eq!(
            valid.fit(&[0.5], &[true, false]),
            Err(FitError::LengthMismatch {
                confidences: 1,
                labels: 2
            })
        );
        assert_eq!(
            valid.fit(&[0.5, 0.6], &[true, true]),
            Err(FitError::SingleClass { n: 2 })
        );
        let unpenalized = Platt::params().inverse_penalty(None).check().unwrap();
        assert_eq!(
            unpenalized.fit(&[0.1, 0.2, 0.8, 0.9], &[false, false, true, true]),
            Err(FitError::Separable)
        );
        // Overlapping classes have a finite optimum.
        assert!(
            unpenalized
                .fit(&[0.1, 0.8, 0.2, 0.9], &[false, false, true, true])
                .is_ok()
        );
        assert_eq!(
            Platt::params()
                .max_iter(1)
                .check()
                .unwrap()
                .fit(&[0.1, 0.8, 0.2, 0.9], &[false, false, true, true]),
            Err(FitError::NotConverged { iterations: 1 })
        );
    }

    #[test]
    fn extreme_confidences_are_clipped_not_infinite() {
        let m = Platt::params()
            .check()
            .unwrap()
            .fit(&[0.0, 1.0, 0.5, 0.5], &[false, true, true, false])
            .unwrap();
        assert!(m.slope.is_finite() && m.intercept.is_finite());
        assert!(m.predict(1.0) > 0.5 && m.predict(0.0) < 0.5);
    }
}
