//! `codecal calibrate` beside the Python stack a user would otherwise run for
//! the same report, same machine, same run, same input files:
//!
//! - every metric, the baseline being scikit-learn (Platt, Brier, log loss,
//!   AUROC), relplot (smooth ECE), model-diagnostics (CORP), uncertainty-
//!   calibration (debiased L2 CE), MAPIE (Spiegelhalter) and numpy (binned
//!   ECEs, risk–coverage), benches/python_stack_calibrate.py:
//!   - 1,000,000 rows, 5-fold Platt scaling, no bootstrap;
//!   - 100,000 rows, 5-fold Platt scaling, 1,000 bootstrap resamples of
//!     every metric, raw and rescaled;
//! - the older, narrower rows, kept and labelled as such: scikit-learn alone
//!   (four metrics and the binned ECE, benches/sklearn_calibrate.py) on the
//!   same two cases, and relplot's smooth ECE alone with 1,000 resamples
//!   (benches/relplot_smece.py), beside codecal computing every metric.
//!
//! Commands are timed end to end (process start, CSV parse, fits, metrics);
//! codecal's time is the best of three runs, a Python baseline's is one run
//! where it takes minutes. Before any time is reported the outputs are
//! checked to agree: raw metrics to 1e-9, rescaled Brier to 1e-3 and the fold
//! slopes' mean to 1e-2 (the two tools shuffle their k folds with different
//! generators). Results go to stdout and to target/bench-results/calibrate.json.
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
        "sklearn, scipy, numpy, relplot, model_diagnostics, calibration, mapie",
    );
    let work = tempfile::tempdir().expect("temp dir");
    let mut results = Vec::new();
    for (rows, bootstrap) in [(1_000_000, 0), (100_000, 1000)] {
        let csv = work.path().join(format!("bench-{rows}.csv"));
        write_synthetic(&csv, rows, 42);
        for baseline in [Baseline::PythonStack, Baseline::SklearnOnly] {
            results.push(compare(root, &python, &csv, rows, bootstrap, baseline));
        }
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

/// Which Python baseline a case runs.
#[derive(Clone, Copy, PartialEq)]
enum Baseline {
    /// Every metric codecal reports, from the reference packages.
    PythonStack,
    /// The older row: scikit-learn's four metrics and the binned ECE.
    SklearnOnly,
}

/// The raw metrics both baselines compute, checked to 1e-9.
const SKLEARN_KEYS: [&str; 9] = [
    "base_rate",
    "brier",
    "skill_score",
    "auroc",
    "log_loss",
    "ece",
    "mce",
    "oyster_ece",
    "performance_score",
];

/// The further raw metrics of the Python stack, checked to 1e-9 too
/// (Spiegelhalter's p-value is MAPIE's 1 − Φ, which rounds to 0 where
/// codecal's erfc keeps the tail: compared absolutely).
const STACK_KEYS: [&str; 11] = [
    "ece_equal_mass",
    "smooth_ece",
    "corp_mcb",
    "corp_dsc",
    "corp_unc",
    "debiased_l2_ce",
    "spiegelhalter_z",
    "spiegelhalter_p",
    "aurc",
    "e_aurc",
    "augrc",
];

fn compare(
    root: &Path,
    python: &Path,
    csv: &Path,
    rows: usize,
    bootstrap: usize,
    baseline: Baseline,
) -> Value {
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
    let (script, label) = match baseline {
        Baseline::PythonStack => ("benches/python_stack_calibrate.py", "Python stack"),
        Baseline::SklearnOnly => ("benches/sklearn_calibrate.py", "scikit-learn only"),
    };
    let script = root.join(script);
    let python_args = [
        script.to_str().unwrap(),
        csv.to_str().unwrap(),
        "--bootstrap",
        &b,
    ];
    let (codecal_s, ours) = best_of(Path::new(env!("CARGO_BIN_EXE_codecal")), &codecal_args);
    // A baseline that resamples takes minutes: one run.
    let repeats = if bootstrap > 0 { 1 } else { REPEATS };
    let (python_s, theirs) = timed(python, &python_args, repeats);
    let keys: Vec<&str> = match baseline {
        Baseline::PythonStack => SKLEARN_KEYS.iter().chain(&STACK_KEYS).copied().collect(),
        Baseline::SklearnOnly => SKLEARN_KEYS.to_vec(),
    };
    check_agreement(&ours, &theirs, &keys);
    let ratio = python_s / codecal_s;
    println!(
        "calibrate {rows} rows, 5-fold Platt, bootstrap {bootstrap}, against the {label}: \
         codecal {codecal_s:.3} s (best of {REPEATS}), {label} {python_s:.3} s (best of \
         {repeats}), ratio {ratio:.1}x; {} raw metrics agree to 1e-9",
        keys.len()
    );
    json!({ "rows": rows, "folds": 5, "bootstrap": bootstrap, "baseline": label,
            "metrics_checked": keys, "codecal_s": codecal_s, "baseline_s": python_s,
            "ratio": ratio, "codecal_repeats": REPEATS, "baseline_repeats": repeats })
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
         95% interval codecal {} relplot {}",
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

fn check_agreement(ours: &Value, theirs: &Value, keys: &[&str]) {
    for &key in keys {
        let (a, b) = (
            ours["raw"][key].as_f64().unwrap(),
            theirs["raw"][key].as_f64().unwrap(),
        );
        assert!(
            (a - b).abs() < 1e-9,
            "raw {key}: codecal {a} vs the baseline {b}"
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
