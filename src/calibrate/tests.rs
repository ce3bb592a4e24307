//! The calibration engine's tests: `calibrate` end to end on the fixture, against scikit-learn's numbers.

use super::*;
use crate::calibrate::metrics::tests::fixture;

/// Issue "fidelity, third pass", item 5: items repeated within their
/// group are not new evidence. Repeating every item 5 times narrows an
/// item bootstrap's Brier interval, but not a group bootstrap's, which
/// then is the wider of the two.
#[test]
fn duplicates_within_groups_widen_the_group_interval_over_the_item_one() {
    let f = fixture();
    let repeat = |v: &[f64]| v.iter().flat_map(|&x| [x; 5]).collect::<Vec<_>>();
    let data = CalibrationData {
        confidence: repeat(&f.confidence),
        correct: f.correct.iter().flat_map(|&y| [y; 5]).collect(),
        groups: Some(f.repo.iter().flat_map(|g| vec![g.clone(); 5]).collect()),
        target: None,
        features: Vec::new(),
    };
    let width = |by_group: bool, data: &CalibrationData| {
        let options = CalibrateOptions {
            method: Method::None,
            bootstrap: 2000,
            bootstrap_by_group: by_group,
            ..CalibrateOptions::default()
        };
        let report = calibrate(data, &options).unwrap();
        let [lo, hi] = report.raw.ci["brier"].unwrap();
        hi - lo
    };
    let (item, group) = (width(false, &data), width(true, &data));
    println!("Brier interval width, 5 copies of each item: items {item:.4}, groups {group:.4}");
    assert!(group > 1.5 * item, "group {group} vs item {item}");
}

fn fixture_data() -> CalibrationData {
    let f = fixture();
    CalibrationData {
        confidence: f.confidence,
        correct: f.correct,
        groups: Some(f.repo),
        target: Some(f.similarity),
        features: Vec::new(),
    }
}

// Expected values: python3 tests/sklearn_expected.py — GroupKFold(5) with
// LogisticRegression() per fold, metrics of the pooled out-of-fold predictions.
#[test]
fn group_cv_platt_matches_scikit_learn() {
    let options = CalibrateOptions {
        cv: CvStrategy::Group,
        bootstrap: 0,
        ..CalibrateOptions::default()
    };
    let report = calibrate(&fixture_data(), &options).unwrap();
    let rescaled = report.rescaled.unwrap().metrics;
    assert!((rescaled.brier - 0.2423159351328114).abs() < 1e-6);
    assert!((rescaled.auroc.unwrap() - 0.6315789473684211).abs() < 1e-6);
    assert!((rescaled.ece - 0.06612602802331399).abs() < 1e-6);
    assert!((rescaled.mce - 0.837000166414235).abs() < 1e-6);
    assert_eq!(report.rescaler.len(), 5);
    assert_eq!(report.untested_items, 0);
}

#[test]
fn cv_none_reports_one_fit_on_everything() {
    let options = CalibrateOptions {
        cv: CvStrategy::None,
        bootstrap: 0,
        ..CalibrateOptions::default()
    };
    let report = calibrate(&fixture_data(), &options).unwrap();
    assert_eq!(report.rescaler.len(), 1);
    let Rescaler::Logistic(platt) = &report.rescaler[0].rescaler else {
        panic!("platt expected");
    };
    assert!((platt.slope - 0.4625889625699462).abs() < 1e-6);
}

#[test]
fn same_options_give_the_same_report() {
    let options = CalibrateOptions {
        bootstrap: 100,
        ..CalibrateOptions::default()
    };
    let a = calibrate(&fixture_data(), &options).unwrap();
    let b = calibrate(&fixture_data(), &options).unwrap();
    assert_eq!(a, b);
    assert!(a.raw.ci["brier"].is_some());
}

#[test]
fn unskilled_rescaled_confidences_are_flagged_as_bucket_collapse() {
    // Confidence carries no information: every rescaler collapses to the base rate.
    let n = 400;
    let data = CalibrationData {
        confidence: (0..n)
            .map(|i| 0.5 + 0.4 * ((i * 7919) % 13) as f64 / 13.0)
            .collect(),
        correct: (0..n).map(|i| i % 3 == 0).collect(),
        groups: None,
        target: None,
        features: Vec::new(),
    };
    let options = CalibrateOptions {
        bootstrap: 0,
        ..CalibrateOptions::default()
    };
    let report = calibrate(&data, &options).unwrap();
    assert!(report.bucket_collapse);
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("bucket collapse"))
    );
    let table = crate::report::markdown(&report);
    assert!(table.contains("| ECE ‡ |"), "{table}");
    assert!(table.contains("‡ bucket collapse"), "{table}");
}

#[test]
fn seed_balanced_cv_reports_the_items_it_never_tested() {
    // Groups of 30, 5 and 5 with k = 2: capacity 20, so the group of 30 is never tested.
    let n = 40;
    let data = CalibrationData {
        confidence: (0..n).map(|i| 0.05 + 0.9 * i as f64 / n as f64).collect(),
        correct: (0..n).map(|i| i % 3 != 0).collect(),
        groups: Some(
            (0..n)
                .map(|i| ["a", "b", "c"][usize::from(i >= 30) + usize::from(i >= 35)].to_owned())
                .collect(),
        ),
        target: None,
        features: Vec::new(),
    };
    let options = CalibrateOptions {
        cv: CvStrategy::SeedBalanced,
        folds: 2,
        bootstrap: 0,
        ..CalibrateOptions::default()
    };
    let report = calibrate(&data, &options).unwrap();
    assert_eq!(report.untested_items, 30);
    assert_eq!(report.rescaled.unwrap().metrics.n, 10);
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.starts_with("30 of 40 items were in no test fold"))
    );
}

#[test]
fn group_bootstrap_resamples_whole_groups() {
    // Four repositories of 25: two all correct, two all wrong. Resampling
    // repositories moves the success rate in steps of 1/4; resampling items barely.
    let n = 100;
    let data = CalibrationData {
        confidence: (0..n).map(|i| 0.3 + 0.4 * (i % 7) as f64 / 7.0).collect(),
        correct: (0..n).map(|i| i < 50).collect(),
        groups: Some((0..n).map(|i| format!("repo{}", i / 25)).collect()),
        target: None,
        features: Vec::new(),
    };
    let options = |by_group| CalibrateOptions {
        method: Method::None,
        bootstrap: 500,
        bootstrap_by_group: by_group,
        ..CalibrateOptions::default()
    };
    let width = |by_group| {
        let report = calibrate(&data, &options(by_group)).unwrap();
        let [lo, hi] = report.raw.ci["base_rate"].unwrap();
        hi - lo
    };
    assert!(width(true) >= 0.5, "group bootstrap: {}", width(true));
    assert!(width(false) < 0.25, "item bootstrap: {}", width(false));
    let without_groups = CalibrationData {
        groups: None,
        ..data.clone()
    };
    let err = calibrate(&without_groups, &options(true)).unwrap_err();
    assert!(matches!(err, CalibrateError::BootstrapGroupsRequired));
}

/// Issue "faithful, fourth pass", item 4: group cross-validation over fewer
/// than `FEW_GROUPS` groups says its rescaled numbers say little; over more,
/// or with item folds, it says nothing.
#[test]
fn few_groups_are_warned_of_under_group_cross_validation() {
    let n = 200;
    let data = |groups: usize| CalibrationData {
        confidence: (0..n).map(|i| (i % 50) as f64 / 50.0).collect(),
        correct: (0..n).map(|i| (i * 7) % 10 < 6).collect(),
        groups: Some((0..n).map(|i| format!("g{}", i % groups)).collect()),
        target: None,
        features: Vec::new(),
    };
    let warned = |groups: usize, cv: CvStrategy| {
        let options = CalibrateOptions {
            cv,
            bootstrap: 0,
            ..CalibrateOptions::default()
        };
        let report = calibrate(&data(groups), &options).unwrap();
        report.warnings.iter().any(|w| w.starts_with("few groups"))
    };
    assert!(warned(10, CvStrategy::Group));
    assert!(!warned(25, CvStrategy::Group));
    assert!(!warned(10, CvStrategy::Kfold));
}
