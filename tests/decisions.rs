//! From calibration to decisions: the saved calibrator round trip through the
//! CLI (`calibrate --save`, then `apply`), `apply`'s refusals, and the
//! Learn-then-Test cutoffs against MAPIE 1.6.0 (`tests/mapie_expected.py`).

use std::path::Path;
use std::process::{Command, Output};

use codecal::calibrate::{Calibrator, CutoffParams};

fn codecal(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args(args)
        .output()
        .expect("codecal runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/calibration_small.csv"
);

#[test]
fn apply_reproduces_the_saved_final_fit_to_1e_12() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("calibrator.json");
    let out = codecal(&[
        "calibrate",
        FIXTURE,
        "--group",
        "repo",
        "--bootstrap",
        "0",
        "--save",
        saved.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let calibrator = Calibrator::load(&saved).unwrap();
    assert_eq!(calibrator.measure, "confidence");
    assert_eq!(calibrator.training.n, 80);
    assert_eq!(calibrator.cutoffs_on, "raw");

    let decided = dir.path().join("decided.csv");
    let out = codecal(&[
        "apply",
        "--calibrator",
        saved.to_str().unwrap(),
        FIXTURE,
        "--out",
        decided.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&decided).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "id,repo,confidence,correct,similarity,calibrated,decision"
    );
    let accept = calibrator.accept_cutoff(None).unwrap();
    let mut rows = 0;
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        let raw: f64 = cells[2].parse().unwrap();
        let calibrated: f64 = cells[5].parse().unwrap();
        let expected = calibrator.apply(raw, accept);
        assert!((calibrated - expected.calibrated).abs() <= 1e-12, "{line}");
        assert_eq!(cells[6], expected.decision.as_str(), "{line}");
        rows += 1;
    }
    assert_eq!(rows, 80);
}

#[test]
fn apply_names_the_measure_column_or_version_it_cannot_use() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("calibrator.json");
    let out = codecal(&[
        "calibrate",
        FIXTURE,
        "--bootstrap",
        "0",
        "--save",
        saved.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let saved = saved.to_str().unwrap();

    let other = codecal(&[
        "apply",
        "--calibrator",
        saved,
        FIXTURE,
        "--confidence",
        "similarity",
    ]);
    assert!(!other.status.success());
    let message = stderr(&other);
    assert!(
        message.contains("--confidence similarity") && message.contains("measure confidence"),
        "{message}"
    );

    let missing = dir.path().join("missing.csv");
    std::fs::write(&missing, "id,score\na,0.5\n").unwrap();
    let out = codecal(&["apply", "--calibrator", saved, missing.to_str().unwrap()]);
    assert!(!out.status.success());
    let message = stderr(&out);
    assert!(
        message.contains("missing.csv") && message.contains("no column confidence"),
        "{message}"
    );

    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "id,confidence\na,0.5\nb,1.5\n").unwrap();
    let out = codecal(&["apply", "--calibrator", saved, bad.to_str().unwrap()]);
    let message = stderr(&out);
    assert!(
        message.contains("bad.csv:3: confidence is 1.5"),
        "{message}"
    );

    let later = dir.path().join("later.json");
    let text = std::fs::read_to_string(saved).unwrap();
    std::fs::write(
        &later,
        text.replace("\"format_version\": 1", "\"format_version\": 7"),
    )
    .unwrap();
    let out = codecal(&["apply", "--calibrator", later.to_str().unwrap(), FIXTURE]);
    let message = stderr(&out);
    assert!(
        message.contains("later.json") && message.contains("format version 7"),
        "{message}"
    );
    assert_eq!(message.lines().count(), 1, "{message}");
}

#[test]
fn apply_keeps_jsonl_rows_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("c.json");
    let out = codecal(&[
        "calibrate",
        FIXTURE,
        "--method",
        "none",
        "--bootstrap",
        "0",
        "--save",
        saved.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let items = dir.path().join("items.jsonl");
    let rows = "{\"id\": \"a\",  \"text\": \"  keep\\tme \", \"confidence\": {\"confidence\": 0.25}}\n{\"id\":\"b\",\"confidence\":{\"confidence\":0.97}}\n";
    std::fs::write(&items, rows).unwrap();
    let out = codecal(&[
        "apply",
        "--calibrator",
        saved.to_str().unwrap(),
        items.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with(
            "{\"id\": \"a\",  \"text\": \"  keep\\tme \", \"confidence\": {\"confidence\": 0.25},\"calibrated\":0.25,"
        ),
        "{text}"
    );
    assert!(lines[1].contains("\"calibrated\":0.97"), "{text}");
}

/// One fixture of `tests/fixtures/ltt_fixtures.json`.
struct Fixture {
    confidence: Vec<f64>,
    correct: Vec<bool>,
}

fn ltt_fixtures() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ltt_fixtures.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn fixture(all: &serde_json::Value, name: &str) -> Fixture {
    let f = &all["fixtures"][name];
    let numbers = |key: &str| -> Vec<f64> {
        f[key]
            .as_array()
            .unwrap_or_else(|| panic!("{name}.{key}"))
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    Fixture {
        confidence: numbers("confidence"),
        correct: numbers("correct").iter().map(|&y| y == 1.0).collect(),
    }
}

/// MAPIE 1.6.0's chosen cutoffs (BinaryClassificationController, precision
/// risk, fixed-sequence testing, δ = 0.1), as `tests/mapie_expected.out`
/// prints them: (fixture, α, MAPIE's cutoff, MAPIE's cutoff once its error
/// count is read as k instead of ceil(n·r̂)).
const MAPIE: [(&str, f64, Option<f64>, Option<f64>); 12] = [
    ("calibrated_500", 0.2, Some(0.41000000000000003), Some(0.39)),
    ("calibrated_500", 0.1, Some(0.86), Some(0.86)),
    ("calibrated_500", 0.05, None, None),
    ("calibrated_2000", 0.2, Some(0.17), Some(0.17)),
    ("calibrated_2000", 0.1, Some(0.79), Some(0.79)),
    ("calibrated_2000", 0.05, None, Some(0.9400000000000001)),
    ("weak_1000", 0.2, None, None),
    ("weak_1000", 0.1, None, None),
    ("weak_1000", 0.05, None, None),
    ("edges_1000", 0.2, Some(0.0), Some(0.0)),
    ("edges_1000", 0.1, None, None),
    ("edges_1000", 0.05, None, None),
];

/// codecal and MAPIE choose the same accepted set wherever MAPIE counts the
/// errors exactly. Two of MAPIE's answers differ, both from its rounding:
/// it reads k as ceil(n·(1 − (n−k)/n)), which is k + 1 when the float lands a
/// hair above k, so its p-value is larger and its walk stops early
/// (calibrated_500 at α = 0.2 stops at 0.40 instead of 0.37; calibrated_2000
/// at α = 0.05 fails 0.99 with 2 errors counted for 1 of 67). The cutoffs are
/// compared by the items they accept: among cutoffs accepting the same items
/// MAPIE reports the strictest, codecal the loosest.
#[test]
fn cutoffs_agree_with_mapie_wherever_mapie_counts_errors_exactly() {
    let all = ltt_fixtures();
    let accepted =
        |f: &Fixture, t: Option<f64>| t.map(|t| f.confidence.iter().filter(|&&p| p >= t).count());
    for (name, alpha, mapie, mapie_exact) in MAPIE {
        let f = fixture(&all, name);
        // MAPIE's walk stops at a cutoff too small to pass; codecal's
        // default passes over it, and so accepts at least as many items.
        let params = CutoffParams {
            target_precisions: vec![1.0 - alpha],
            delta: 0.1,
            pass_over_small: false,
            quantile_candidates: false,
            ..CutoffParams::default()
        };
        let cutoffs = params.fit(&f.confidence, &f.correct).unwrap();
        let ours = &cutoffs.accept[0];
        let passing = CutoffParams {
            pass_over_small: true,
            ..params.clone()
        }
        .fit(&f.confidence, &f.correct)
        .unwrap();
        assert!(
            passing.accept[0].decided >= ours.decided,
            "{name} α={alpha}: passing over small cutoffs accepted fewer items"
        );
        let ours_accepted = ours.cutoff.map(|_| ours.decided);
        println!(
            "{name} α={alpha}: codecal t={:?} n={:?}; MAPIE t={mapie:?} n={:?}; exact count t={mapie_exact:?} n={:?}",
            ours.cutoff,
            ours_accepted,
            accepted(&f, mapie),
            accepted(&f, mapie_exact)
        );
        assert_eq!(ours_accepted, accepted(&f, mapie_exact), "{name} α={alpha}");
        let rounding = matches!(
            (name, alpha),
            ("calibrated_500", 0.2) | ("calibrated_2000", 0.05)
        );
        if !rounding {
            assert_eq!(ours_accepted, accepted(&f, mapie), "{name} α={alpha}");
        }
        if let Some(bound) = ours.mistake_bound {
            assert!(bound <= alpha, "{name}: bound {bound} above α {alpha}");
        }
    }
}

/// (confidence, correct) of tests/fixtures/calibration_small.csv.
fn calibration_small() -> (Vec<f64>, Vec<bool>) {
    let text = std::fs::read_to_string(FIXTURE).unwrap();
    text.lines()
        .skip(1)
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            (cells[2].parse::<f64>().unwrap(), cells[3] == "1")
        })
        .unzip()
}

/// A fixture's name, confidences, labels and expected numbers.
type Case<'a> = (&'a str, &'a [f64], &'a [bool], [f64; 6]);

/// Expected values: `tests/selective_expected.py` (an independent numpy
/// implementation, checked there against exact fractions and, for ties,
/// against 200,000 random tie-breaking orders); (AURC, E-AURC, AUGRC,
/// coverage at precision 0.8, 0.9, 0.95).
#[test]
fn selective_metrics_match_the_reference_script_to_1e_12() {
    use codecal::calibrate::{BinSpec, Binning, Sample};
    let (confidence, correct) = calibration_small();
    let rounded: Vec<f64> = confidence
        .iter()
        .map(|c| (c * 10.0 + 0.5).floor() / 10.0)
        .collect();
    let all = ltt_fixtures();
    let f = fixture(&all, "calibrated_500");
    let cases: [Case; 3] = [
        (
            "calibration_small",
            &confidence,
            &correct,
            [
                0.39042790451223475,
                0.250764552468253,
                0.20203125,
                0.0625,
                0.0,
                0.0,
            ],
        ),
        (
            "calibration_small rounded to 0.1",
            &rounded,
            &correct,
            [
                0.4044975975865082,
                0.26483424554252655,
                0.20671875,
                0.0,
                0.0,
                0.0,
            ],
        ),
        (
            "calibrated_500",
            &f.confidence,
            &f.correct,
            [
                0.07792907766513349,
                0.06047898058928007,
                0.054152,
                1.0,
                0.68,
                0.36,
            ],
        ),
    ];
    let bins = BinSpec {
        count: 10,
        binning: Binning::EqualWidth,
    };
    for (name, confidence, correct, expected) in cases {
        let m = Sample::new(confidence, correct, None, bins).metrics(None);
        let ours = [
            m.aurc,
            m.e_aurc,
            m.augrc,
            m.coverage_at_p80,
            m.coverage_at_p90,
            m.coverage_at_p95,
        ];
        for (o, e) in ours.iter().zip(expected) {
            assert!((o - e).abs() <= 1e-12, "{name}: {ours:?} vs {expected:?}");
        }
    }
}
