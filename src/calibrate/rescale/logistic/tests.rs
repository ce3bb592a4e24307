//! Tests of the logistic fits against scikit-learn's optimum.

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
fn platt_p_matches_logistic_regression_on_p() {
    // "Open the Oyster", Eq. 4: sigmoid(A·p + B) on the confidence itself.
    let m = fit(Platt::params().feature(Feature::P));
    close(m.slope, 1.2268881862499368);
    close(m.intercept, -0.6704448463472887);
}

#[test]
fn temperature_matches_fit_intercept_false() {
    let m = fit(Platt::temperature());
    close(m.slope, 0.38812734516689157);
    assert_eq!(m.intercept, 0.0);
}

#[test]
fn warm_start_reaches_the_cold_start_optimum() {
    // 60,000 items: above the warm-start size. Deterministic, overlapping classes.
    let n = 60_000;
    let p: Vec<f64> = (0..n)
        .map(|i| 0.02 + 0.96 * ((i * 7919) % n) as f64 / n as f64)
        .collect();
    let y: Vec<bool> = (0..n)
        .map(|i| (i * 104_729) % 100 < (p[i] * 70.0) as usize + 10)
        .collect();
    let x: Vec<f64> = p.iter().map(|&v| Feature::Logit.apply(v)).collect();
    let objective = Objective {
        x: &x,
        y: &y,
        ridge: 1.0,
    };
    let cold = newton(&objective, (0.0, 0.0), true, 100, 1e-10).unwrap();
    let start = warm_start(&objective, true, 1e-10);
    assert_ne!(start, (0.0, 0.0));
    let warm = newton(&objective, start, true, 100, 1e-10).unwrap();
    assert!((cold.0 - warm.0).abs() < 1e-9 && (cold.1 - warm.1).abs() < 1e-9);
}

#[test]
fn the_certain_drop_never_exceeds_the_true_drop() {
    // Pairs of points from far apart to a hair apart, on both sides of the
    // optimum: the bound may be loose, never above the computed difference.
    let n = 5_000;
    let x: Vec<f64> = (0..n)
        .map(|i| -6.0 + 12.0 * ((i * 7919) % n) as f64 / n as f64)
        .collect();
    let y: Vec<bool> = (0..n).map(|i| (i * 104_729) % 100 < 40 + i % 30).collect();
    let objective = Objective {
        x: &x,
        y: &y,
        ridge: 1.0,
    };
    let largest_x = 6.0;
    let mut certain = 0;
    for k in 0..400 {
        let from = (0.3 * (k % 7) as f64 - 0.9, 0.2 * (k % 5) as f64 - 0.4);
        let distance = 10f64.powi(-(k % 8)) * 0.5;
        let to = (from.0 - distance * 0.7, from.1 + distance * 0.3);
        let bound = objective.certain_drop(from, to, &objective.derivatives(to.0, to.1), largest_x);
        let truth = objective.value(from.0, from.1) - objective.value(to.0, to.1);
        assert!(
            bound <= truth + 1e-9 * truth.abs().max(1.0),
            "{from:?} → {to:?}: {bound} > {truth}"
        );
        certain += usize::from(bound > 0.0);
    }
    // It must also be useful: short downhill steps are certified.
    assert!(certain > 100, "only {certain} steps certified");
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
