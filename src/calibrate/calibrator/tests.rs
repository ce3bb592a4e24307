//! Tests of the saved calibrator: round trips, refusals and the checks on
//! a file that was edited or made elsewhere.

use super::*;
use crate::calibrate::metrics::tests::fixture;
use crate::calibrate::{CalibrateOptions, CalibrationData, calibrate};

fn fixture_report(method: Method) -> (CalibrationData, CalibrationReport) {
    let f = fixture();
    let data = CalibrationData {
        confidence: f.confidence,
        correct: f.correct,
        groups: Some(f.repo),
        target: None,
        features: Vec::new(),
    };
    let options = CalibrateOptions {
        method,
        cv: CvStrategy::Group,
        bootstrap: 0,
        ..CalibrateOptions::default()
    };
    let report = calibrate(&data, &options).unwrap();
    (data, report)
}

fn provenance() -> Provenance {
    Provenance {
        measure: "confidence".into(),
        label: LabelDefinition {
            column: "correct".into(),
            ..LabelDefinition::default()
        },
        generator: None,
    }
}

#[test]
fn a_saved_calibrator_reproduces_the_final_fit_for_every_method() {
    for method in [
        Method::Platt,
        Method::PlattP,
        Method::Isotonic,
        Method::Histogram,
    ] {
        let (data, report) = fixture_report(method);
        let final_fit = report.final_fit.clone().unwrap();
        let saved = Calibrator::from_report(&report, provenance());
        let loaded = Calibrator::parse(Path::new("c.json"), &saved.to_json()).unwrap();
        assert_eq!(loaded, saved, "{method:?}");
        for &p in &data.confidence {
            assert!((loaded.calibrate(p) - final_fit.predict(p)).abs() <= 1e-12);
        }
    }
}

#[test]
fn another_format_or_version_is_refused_naming_both() {
    let (_, report) = fixture_report(Method::Platt);
    let json = Calibrator::from_report(&report, provenance()).to_json();
    let later = json.replace("\"format_version\": 1", "\"format_version\": 2");
    let err = Calibrator::parse(Path::new("c.json"), &later).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("c.json"), "{message}");
    assert!(message.contains("version 2"), "{message}");
    assert!(message.contains("reads version 1"), "{message}");
    let other = json.replace(FORMAT, "something-else");
    let message = Calibrator::parse(Path::new("c.json"), &other)
        .unwrap_err()
        .to_string();
    assert!(message.contains("not a codecal calibrator"), "{message}");
}

/// Issue "hardening, second round": a version is reported as the file
/// has it, and hand-edited cutoffs outside their ranges or in the wrong
/// order are refused naming the key.
#[test]
fn odd_versions_and_cutoffs_are_refused_naming_the_key() {
    let (_, report) = fixture_report(Method::Platt);
    let json = Calibrator::from_report(&report, provenance()).to_json();
    for (version, shown) in [
        ("\"1\"", "version \"1\""),
        ("1.5", "version 1.5"),
        ("-1", "version -1"),
    ] {
        let edited = json.replace(
            "\"format_version\": 1",
            &format!("\"format_version\": {version}"),
        );
        let message = Calibrator::parse(Path::new("c.json"), &edited)
            .unwrap_err()
            .to_string();
        assert!(message.contains(shown), "{message}");
    }
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let edit = |key: &str, to: serde_json::Value| {
        let mut v = value.clone();
        *v.pointer_mut(key).unwrap() = to;
        Calibrator::parse(Path::new("c.json"), &v.to_string())
            .unwrap_err()
            .to_string()
    };
    let message = edit("/cutoffs/accept/0/cutoff", serde_json::json!(1.5));
    assert!(
        message.contains("cutoffs.accept[0].cutoff is 1.5"),
        "{message}"
    );
    // A value of the wrong type names its key path, not only "expected usize".
    let message = edit("/cutoffs/accept/0/decided", serde_json::json!(-5));
    assert!(
        message.contains("cutoffs.accept[0].decided") && message.contains("-5"),
        "{message}"
    );
    let message = edit("/cutoffs/accept/0/cutoff", serde_json::json!(-0.5));
    assert!(message.contains("outside [0, 1]"), "{message}");
    let message = edit("/cutoffs/accept/1/target_precision", serde_json::json!(7));
    assert!(
        message.contains("cutoffs.accept[1].target_precision is 7"),
        "{message}"
    );
    let mut v = value.clone();
    v["cutoffs"]["accept"][0]["cutoff"] = serde_json::json!(0.3);
    v["cutoffs"]["reject"] = serde_json::json!({
        "target_precision": 0.9, "cutoff": 0.6, "decided": 1, "mistakes": 0,
        "mistake_bound": null, "coverage": 0.1, "realised_precision": 1.0
    });
    let message = Calibrator::parse(Path::new("c.json"), &v.to_string())
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("cutoffs.accept[0].cutoff 0.3 is below cutoffs.reject.cutoff 0.6"),
        "{message}"
    );
}

/// Issue "hardening, second round": the rescaler must be what the
/// method fits, its values probabilities, an isotonic map monotone, and
/// `cutoffs_on` a known scale; each refusal names the key.
#[test]
fn a_rescaler_that_is_not_the_method_s_or_not_monotone_is_refused() {
    let refusal = |method: Method, edit: &dyn Fn(&mut serde_json::Value)| {
        let (_, report) = fixture_report(method);
        let json = Calibrator::from_report(&report, provenance()).to_json();
        let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
        edit(&mut value);
        Calibrator::parse(Path::new("c.json"), &value.to_string())
            .unwrap_err()
            .to_string()
    };
    let message = refusal(Method::Platt, &|v| v["method"] = "isotonic".into());
    assert!(message.contains("rescaler.kind is logistic"), "{message}");
    let message = refusal(Method::Platt, &|v| v["method"] = "platt-p".into());
    assert!(message.contains("which method"), "{message}");
    let message = refusal(Method::Isotonic, &|v| {
        let y = v["rescaler"]["y"].as_array_mut().unwrap();
        let last = y.len() - 1;
        y[last] = serde_json::json!(0.0);
        y[0] = serde_json::json!(0.5);
    });
    assert!(
        message.contains("an isotonic map never decreases"),
        "{message}"
    );
    let message = refusal(Method::Isotonic, &|v| v["rescaler"]["y"][0] = 1.5.into());
    assert!(message.contains("rescaler.y[0] is 1.5"), "{message}");
    let message = refusal(Method::Histogram, &|v| {
        let values = v["rescaler"]["values"].as_array_mut().unwrap();
        let i = values.iter().position(|x| x.is_number()).unwrap();
        values[i] = serde_json::json!(-0.25);
    });
    assert!(message.contains("not a probability in [0, 1]"), "{message}");
    let message = refusal(Method::Platt, &|v| v["cutoffs_on"] = "sideways".into());
    assert!(message.contains("cutoffs_on is \"sideways\""), "{message}");
    let message = refusal(Method::Platt, &|v| v["rescaler"] = serde_json::Value::Null);
    assert!(message.contains("rescaler is missing"), "{message}");
    // Issue "hardening, third round": δ and repeated targets.
    let message = refusal(Method::Platt, &|v| v["cutoffs"]["delta"] = (-0.1).into());
    assert!(message.contains("cutoffs.delta is -0.1"), "{message}");
    let message = refusal(Method::Platt, &|v| {
        let first = v["cutoffs"]["accept"][0].clone();
        v["cutoffs"]["accept"].as_array_mut().unwrap().push(first);
    });
    assert!(message.contains("repeats cutoffs.accept[0]'s"), "{message}");
    // A learned combination whose fields disagree or cannot be used.
    let combination = serde_json::json!({
        "measures": ["a", "b"], "means": [0.5, 0.5], "scales": [0.2, 0.3],
        "weights": [1.0, 2.0], "intercept": 0.1,
    });
    let with = |edit: &dyn Fn(&mut serde_json::Value)| {
        let combination = combination.clone();
        refusal(Method::Platt, &move |v| {
            v["combination"] = combination.clone();
            edit(&mut v["combination"]);
        })
    };
    let message = with(&|c| c["scales"] = serde_json::json!([0.2]));
    assert!(
        message.contains("combination.scales has 1 values for 2 measures"),
        "{message}"
    );
    let message = with(&|c| c["scales"][1] = 0.0.into());
    assert!(
        message.contains("combination.scales[1] is 0, not above 0"),
        "{message}"
    );
}

#[test]
fn a_broken_table_is_refused_instead_of_panicking_later() {
    let (_, report) = fixture_report(Method::Isotonic);
    let json = Calibrator::from_report(&report, provenance()).to_json();
    let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
    value["rescaler"]["x"] = serde_json::json!([]);
    value["rescaler"]["y"] = serde_json::json!([]);
    let err = Calibrator::parse(Path::new("c.json"), &value.to_string()).unwrap_err();
    assert!(err.to_string().contains("isotonic table"), "{err}");
}
