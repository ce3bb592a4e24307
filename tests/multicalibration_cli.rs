//! Multicalibration through the CLI: `calibrate --method multicalibration
//! --group-features ... --save`, then `apply`, which reproduces the
//! calibrated confidences to 1e-12 and refuses items whose group features
//! are missing, naming the column.

mod common;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Output;

use codecal::calibrate::Calibrator;
use codecal::calibrate::multical::FeatureValue;
use common::codecal;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// 3,000 items, over-confident in language "a", under-confident in "b".
fn write_items(path: &Path) {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut text = "id,confidence,correct,language,length\n".to_owned();
    for i in 0..3000 {
        let z: f64 = rng.random_range(-2.5..2.5);
        let language = ["a", "b", "c"][i % 3];
        let shift = [1.0, -1.0, 0.0][i % 3];
        let confidence = 1.0 / (1.0 + (-(z + shift)).exp());
        let correct = rng.random::<f64>() < 1.0 / (1.0 + (-z).exp());
        let length = rng.random_range(5..400);
        writeln!(
            text,
            "x{i},{confidence:.6},{},{language},{length}",
            u8::from(correct)
        )
        .unwrap();
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn apply_reproduces_multicalibrated_confidences_and_refuses_missing_features() {
    let dir = tempfile::tempdir().unwrap();
    let items = dir.path().join("items.csv");
    write_items(&items);
    let saved = dir.path().join("calibrator.json");
    let out = codecal(&[
        "calibrate",
        items.to_str().unwrap(),
        "--method",
        "multicalibration",
        "--group-features",
        "language,length",
        "--bootstrap",
        "100",
        "--save",
        saved.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("### Multicalibration (after Platt"),
        "{report}"
    );
    assert!(report.contains("language = a"), "{report}");

    let calibrator = Calibrator::load(&saved).unwrap();
    let fit = calibrator.multicalibration.as_ref().expect("patches saved");
    assert!(!fit.patches.is_empty());
    let names: Vec<&str> = fit.feature_names().collect();
    assert_eq!(names, ["language", "length"]);

    let out = codecal(&[
        "apply",
        "--calibrator",
        saved.to_str().unwrap(),
        items.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut differs = 0;
    for line in text.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let p: f64 = cells[1].parse().unwrap();
        let values = [FeatureValue::Text(cells[3]), FeatureValue::Text(cells[4])];
        let expected = calibrator.calibrate_in_groups(p, &values);
        let written: f64 = cells[5].parse().unwrap();
        assert!((written - expected).abs() <= 1e-12, "{line}: {expected}");
        differs += usize::from((expected - calibrator.calibrate(p)).abs() > 1e-6);
    }
    assert!(differs > 500, "only {differs} items moved by the patches");

    let without = dir.path().join("without.csv");
    let lines: Vec<String> = std::fs::read_to_string(&items)
        .unwrap()
        .lines()
        .map(|l| l.rsplitn(3, ',').last().unwrap().to_owned() + "," + l.rsplit(',').next().unwrap())
        .collect();
    std::fs::write(&without, lines.join("\n") + "\n").unwrap();
    let out = codecal(&[
        "apply",
        "--calibrator",
        saved.to_str().unwrap(),
        without.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("no column language") && err.contains("multicalibration"),
        "{err}"
    );

    // An encoder saved with unsorted levels, or no name, is refused naming
    // it: the lookup would have moved items between groups silently.
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    let broken = dir.path().join("broken.json");
    for (edit, key) in [
        ("levels", "multicalibration.encoders[0]"),
        ("name", "multicalibration.encoders[0].name"),
    ] {
        let mut v = value.clone();
        let encoder = &mut v["multicalibration"]["encoders"][0];
        match edit {
            "levels" => encoder["levels"].as_array_mut().unwrap().reverse(),
            _ => encoder["name"] = "".into(),
        }
        std::fs::write(&broken, v.to_string()).unwrap();
        let out = codecal(&[
            "apply",
            "--calibrator",
            broken.to_str().unwrap(),
            items.to_str().unwrap(),
        ]);
        let err = stderr(&out);
        assert!(!out.status.success() && err.contains(key), "{edit}: {err}");
    }

    // A numeric feature's cell that is not a finite number is refused,
    // naming the line and column: it fell silently in the lowest bin (NaN,
    // -inf) or in no group (text).
    for bad in ["NaN", "-inf", "abc"] {
        let tampered = dir.path().join("tampered.csv");
        let text = std::fs::read_to_string(&items).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let cells: Vec<&str> = lines[7].split(',').collect();
        lines[7] = format!("{},{bad}", cells[..4].join(","));
        std::fs::write(&tampered, lines.join("\n") + "\n").unwrap();
        let out = codecal(&[
            "apply",
            "--calibrator",
            saved.to_str().unwrap(),
            tampered.to_str().unwrap(),
        ]);
        let err = stderr(&out);
        assert!(!out.status.success(), "{bad} accepted");
        assert!(
            err.contains(":8:") && err.contains("length") && err.contains(bad),
            "{bad}: {err}"
        );
    }
}

#[test]
fn group_features_without_multicalibration_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let items = dir.path().join("items.csv");
    write_items(&items);
    let items = items.to_str().unwrap();
    for (args, expected) in [
        (
            &["--group-features", "language"][..],
            "--group-features needs --method multicalibration",
        ),
        (&["--method", "multicalibration"], "needs --group-features"),
        (
            &["--method", "multicalibration", "--group-features", "nosuch"],
            "nosuch",
        ),
        (
            &[
                "--method",
                "multicalibration",
                "--group-features",
                "language",
                "--mc-depth",
                "9",
            ],
            "depth must be 1 to 4",
        ),
    ] {
        let out = codecal(&[&["calibrate", items][..], args].concat());
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(
            stderr(&out).contains(expected),
            "{args:?}: {}",
            stderr(&out)
        );
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    }
}

/// Issue "multicalibration", item 4: with `--by`, a multicalibrated
/// calibrator's per-group cutoffs compare the multicalibrated confidence
/// (since issue "faithful, fourth pass", tested on items the saved map was
/// not fitted on: `cutoffs_on = "held-out-calibrated"`), and `apply`
/// compares each item's multicalibrated confidence with its group's cutoff;
/// a Platt calibrator keeps them on the raw confidence.
#[test]
fn per_group_cutoffs_follow_the_multicalibrated_confidence() {
    let dir = tempfile::tempdir().unwrap();
    let items = dir.path().join("items.csv");
    write_items(&items);
    let save = |method: &[&str], name: &str| {
        let saved = dir.path().join(name);
        let mut args = vec![
            "calibrate",
            items.to_str().unwrap(),
            "--by",
            "language",
            "--target-precision",
            "0.7",
            "--bootstrap",
            "0",
            "--save",
            saved.to_str().unwrap(),
        ];
        args.extend(method);
        let out = codecal(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        saved
    };
    let platt = Calibrator::load(&save(&["--method", "platt"], "platt.json")).unwrap();
    assert_eq!(platt.cutoffs_on, "raw");
    let saved = save(
        &[
            "--method",
            "multicalibration",
            "--group-features",
            "language,length",
        ],
        "multicalibrated.json",
    );
    let calibrator = Calibrator::load(&saved).unwrap();
    assert_eq!(calibrator.cutoffs_on, "held-out-calibrated");
    let by = calibrator
        .cutoffs
        .groups
        .as_ref()
        .expect("per-group cutoffs");
    assert_eq!(by.column, "language");
    let out = codecal(&[
        "apply",
        "--calibrator",
        saved.to_str().unwrap(),
        items.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut accepted = 0;
    for line in text.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let calibrated: f64 = cells[5].parse().unwrap();
        let group = by.group(cells[3]).expect("every language has its cutoffs");
        let expected = match group.accept.first().and_then(|c| c.cutoff) {
            Some(t) if calibrated >= t => "accept",
            _ => "review",
        };
        assert_eq!(cells[6], expected, "{line}");
        accepted += usize::from(expected == "accept");
    }
    assert!(accepted > 100, "only {accepted} accepted");
}
