//! `codecal calibrate` beside its scikit-learn baseline (benches/sklearn_calibrate.py),
//! same machine, same run, same input file:
//!
//! - 1,000,000 rows, 5-fold Platt scaling, no bootstrap;
//! - 100,000 rows, 5-fold Platt scaling, 1,000 bootstrap resamples;
//! - smooth ECE with 1,000 bootstrap resamples on 100,000 rows, beside
//!   relplot 1.0.3 (benches/relplot_smece.py); codecal computes every other
//!   metric on each resample as well, so its time is an upper bound.
//!
//! Both commands are timed end to end (process start, CSV parse, fits, metrics).
//! Before any time is reported the outputs are checked to agree: raw metrics to
//! 1e-9, rescaled Brier to 1e-3 and the fold slopes' mean to 1e-2 (the two tools
//! shuffle their k folds with different generators). Results go to stdout and to
//! target/bench-results/calibrate.json.
//!
//! Run: cargo bench --bench calibrate

#[path = "common/mod.rs"]
mod common;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

const REPEATS: usize = 3;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = common::baseline_python(
        root,
        "bench-venv",
        "requirements.txt",
        "sklearn, scipy, numpy, relplot",
    );
    let work = tempfile::tempdir().expect("temp dir");
    let mut results = Vec::new();
    for (rows, bootstrap) in [(1_000_000, 0), (100_000, 1000)] {
        let csv = work.path().join(format!("bench-{rows}.csv"));
        write_synthetic(&csv, rows, 42);
        results.push(compare(root, &python, &csv, rows, bootstrap));
        if bootstrap > 0 {
            results.push(compare_smooth(root, &python, &csv, rows, bootstrap));
        }
    }
    let out_dir = root.join("target/bench-results");
    std::fs::create_dir_all(&out_dir).expect("results dir");
    let report = json!({ "bench": "calibrate", "machine_cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1), "cases": results });
    let path = out_dir.join("calibrate.json");
    std::fs::write(&path, serde_json::to_string_pretty(&report).unwrap()).expect("results file");
    println!("results written to {}", path.display());
}

/// Items from 2,000 repositories; confidence over-confident by a logistic link.
fn write_synthetic(path: &Path, rows: usize, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut text = String::with_capacity(rows * 28);
    text.push_str("repo,confidence,correct\n");
    for _ in 0..rows {
        let repo = rng.random_range(0..2000);
        let z: f64 = rng.random_range(-3.0..3.0);
        let confidence = 1.0 / (1.0 + (-(1.5 + z)).exp());
        let correct = rng.random::<f64>() < 1.0 / (1.0 + (-(0.8 * z - 0.3)).exp());
        text.push_str(&format!("r{repo},{confidence:.6},{}\n", u8::from(correct)));
    }
    std::fs::write(path, text).expect("bench input");
}

fn compare(root: &Path, python: &Path, csv: &Path, rows: usize, bootstrap: usize) -> Value {
    let b = bootstrap.to_string();
    let codecal_args = [
        "calibrate",
        csv.to_str().unwrap(),
        "--cv",
        "kfold",
        "--folds",
        "5",
        "--bootstrap",
        &b,
        "--json",
    ];
    let script = root.join("benches/sklearn_calibrate.py");
    let sklearn_args = [
        script.to_str().unwrap(),
        csv.to_str().unwrap(),
        "--bootstrap",
        &b,
    ];
    let (codecal_s, ours) = best_of(Path::new(env!("CARGO_BIN_EXE_codecal")), &codecal_args);
    let (sklearn_s, theirs) = best_of(python, &sklearn_args);
    check_agreement(&ours, &theirs);
    let ratio = sklearn_s / codecal_s;
    println!(
        "calibrate {rows} rows, 5-fold Platt, bootstrap {bootstrap}: codecal {codecal_s:.3} s, \
         scikit-learn {sklearn_s:.3} s, ratio {ratio:.1}x (best of {REPEATS})"
    );
    json!({ "rows": rows, "folds": 5, "bootstrap": bootstrap, "codecal_s": codecal_s,
            "sklearn_s": sklearn_s, "ratio": ratio, "repeats": REPEATS })
}

/// Smooth ECE with `bootstrap` resamples: codecal beside relplot, once each
/// (relplot takes about 0.1 s per resample on 100,000 rows).
fn compare_smooth(root: &Path, python: &Path, csv: &Path, rows: usize, bootstrap: usize) -> Value {
    let b = bootstrap.to_string();
    let codecal_args = [
        "calibrate",
        csv.to_str().unwrap(),
        "--method",
        "none",
        "--bootstrap",
        &b,
        "--json",
    ];
    let script = root.join("benches/relplot_smece.py");
    let relplot_args = [
        script.to_str().unwrap(),
        csv.to_str().unwrap(),
        "--bootstrap",
        &b,
    ];
    let (codecal_s, ours) = timed(Path::new(env!("CARGO_BIN_EXE_codecal")), &codecal_args, 1);
    let (relplot_s, theirs) = timed(python, &relplot_args, 1);
    let (a, b) = (
        ours["raw"]["smooth_ece"].as_f64().unwrap(),
        theirs["smooth_ece"].as_f64().unwrap(),
    );
    assert!(
        (a - b).abs() < 1e-9,
        "smooth ECE: codecal {a} vs relplot {b}"
    );
    let ratio = relplot_s / codecal_s;
    println!(
        "smooth ECE on {rows} rows, bootstrap {bootstrap}: codecal {codecal_s:.3} s (all metrics), \
         relplot {relplot_s:.3} s, ratio {ratio:.1}x (one run each); smECE {a:.6} both, \
         95% interval codecal {:?} relplot {:?}",
        ours["raw"]["ci"]["smooth_ece"], theirs["ci"]
    );
    json!({ "rows": rows, "bootstrap": bootstrap, "metric": "smooth_ece", "codecal_s": codecal_s,
            "relplot_s": relplot_s, "ratio": ratio, "repeats": 1 })
}

/// The fastest of REPEATS runs, and the JSON the last run printed.
fn best_of(program: &Path, args: &[&str]) -> (f64, Value) {
    timed(program, args, REPEATS)
}

/// The fastest of `repeats` runs, and the JSON the last run printed.
fn timed(program: &Path, args: &[&str], repeats: usize) -> (f64, Value) {
    let mut best = f64::INFINITY;
    let mut output = Value::Null;
    for _ in 0..repeats {
        let start = Instant::now();
        let out = Command::new(program)
            .args(args)
            .output()
            .expect("benchmark command runs");
        best = best.min(start.elapsed().as_secs_f64());
        assert!(
            out.status.success(),
            "{} failed: {}",
            program.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        output = serde_json::from_slice(&out.stdout).expect("JSON output");
    }
    (best, output)
}

fn check_agreement(ours: &Value, theirs: &Value) {
    for key in [
        "base_rate",
        "brier",
        "skill_score",
        "auroc",
        "log_loss",
        "ece",
        "mce",
        "oyster_ece",
        "performance_score",
    ] {
        let (a, b) = (
            ours["raw"][key].as_f64().unwrap(),
            theirs["raw"][key].as_f64().unwrap(),
        );
        assert!(
            (a - b).abs() < 1e-9,
            "raw {key}: codecal {a} vs scikit-learn {b}"
        );
    }
    let (a, b) = (
        ours["rescaled"]["brier"].as_f64().unwrap(),
        theirs["rescaled"]["brier"].as_f64().unwrap(),
    );
    assert!(
        (a - b).abs() < 1e-3,
        "rescaled brier: codecal {a} vs scikit-learn {b}"
    );
    let our_slopes: Vec<f64> = ours["rescaler"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["slope"].as_f64().unwrap())
        .collect();
    let their_slopes: Vec<f64> = theirs["slopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_f64().unwrap())
        .collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    assert!(
        (mean(&our_slopes) - mean(&their_slopes)).abs() < 1e-2,
        "Platt slopes {our_slopes:?} vs {their_slopes:?}"
    );
}
