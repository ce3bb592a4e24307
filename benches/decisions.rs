//! The acceptance procedures' validity and power, beside MAPIE 1.6 and the
//! oracle, on the same seeded calibration sets (issue "decisions with power").
//!
//! For each population of `calibrate::cutoffs::simulation` (Beta(3, 2)
//! confidences; calibrated, overconfident, underconfident) and each of
//! codecal's procedures: the share of draws whose chosen cutoff has
//! population precision below the target (validity: at most δ plus three
//! standard errors), and the mean population coverage beside the oracle's
//! (power). MAPIE's four fwer_methods run on the very same sets
//! (benches/mapie_decisions.py in target/ref-venv), scored by the same
//! closed forms. Results go to stdout and target/bench-results/decisions.json.
//!
//! Run: cargo bench --bench decisions   (CODECAL_BENCH_DRAWS=N to change 400)

#[path = "common/mod.rs"]
mod common;

use std::path::Path;
use std::process::Command;

use codecal::calibrate::CutoffParams;
use codecal::calibrate::cutoffs::Procedure;
use codecal::calibrate::cutoffs::procedures::LEARN_FRACTION;
use codecal::calibrate::cutoffs::simulation::{Population, draw_set, simulate};
use serde_json::{Value, json};

const N: usize = 5_000;
/// HumanEval's 164 problems: a second, codecal-only table at this size.
const SMALL_N: usize = 164;
const TARGET: f64 = 0.9;
const DELTA: f64 = 0.1;
const SEED: u64 = 2026;
/// MAPIE is slow per set; it runs on the first MAPIE_DRAWS draws.
const MAPIE_DRAWS: usize = 100;

fn main() {
    let draws: usize = std::env::var("CODECAL_BENCH_DRAWS")
        .ok()
        .and_then(|d| d.parse().ok())
        .unwrap_or(400);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = common::baseline_python(root, "ref-venv", "requirements.txt", "mapie, scipy");
    println!(
        "n = {N}, target precision {TARGET}, δ = {DELTA}, {draws} draws per population \
         (MAPIE: the first {MAPIE_DRAWS})\n"
    );
    println!(
        "| population | procedure | draws | failure rate (allowed) | mean coverage | share of oracle |"
    );
    println!("|---|---|---|---|---|---|");
    let mut rows = Vec::new();
    let mut kept = Vec::new();
    for population in Population::ALL {
        let oracle = population.oracle(TARGET).map_or(0.0, |o| o.1);
        rows.extend(codecal_rows(population, N, draws));
        let from_mapie = mapie(&python, population);
        kept.push(json!({ "population": population.name(), "cutoffs": from_mapie.iter().cloned().collect::<serde_json::Map<_, _>>() }));
        for (method, cutoffs) in from_mapie {
            let cutoffs: Vec<Option<f64>> = cutoffs
                .as_array()
                .expect("a list")
                .iter()
                .map(Value::as_f64)
                .collect();
            let chosen: Vec<f64> = cutoffs.iter().flatten().copied().collect();
            let failures = chosen
                .iter()
                .filter(|&&t| population.precision(t) < TARGET)
                .count();
            // + 0.0: an empty f64 sum is −0.
            let coverage = chosen.iter().map(|&t| population.coverage(t)).sum::<f64>()
                / cutoffs.len() as f64
                + 0.0;
            rows.push(row(
                population,
                &format!("MAPIE 1.6 {method}"),
                cutoffs.len(),
                failures,
                coverage,
                oracle,
            ));
        }
        rows.push(row(population, "oracle", 1, 0, oracle, oracle));
    }
    // HumanEval's size, where one early failure can end a walk: codecal's
    // procedures only (MAPIE's cutoffs are kept for N alone).
    println!("\nn = {SMALL_N} (HumanEval's size), {draws} draws per population\n");
    println!(
        "| population | procedure | draws | failure rate (allowed) | mean coverage | share of oracle |"
    );
    println!("|---|---|---|---|---|---|");
    let mut small = Vec::new();
    for population in Population::ALL {
        small.extend(codecal_rows(population, SMALL_N, draws));
    }
    let out_dir = root.join("target/bench-results");
    std::fs::create_dir_all(&out_dir).expect("results dir");
    let path = out_dir.join("decisions.json");
    let report = json!({
        "bench": "decisions", "n": N, "target": TARGET, "delta": DELTA, "rows": rows,
        "small": { "n": SMALL_N, "rows": small },
    });
    std::fs::write(&path, serde_json::to_string_pretty(&report).unwrap()).expect("results file");
    println!("\nresults written to {}", path.display());
    // MAPIE's cutoffs on the first sets, for tests/decisions.rs's power check.
    let fixture = root.join("tests/fixtures/mapie_power.json");
    let doc = json!({
        "about": "MAPIE 1.6 best_predict_param per fwer_method on simulation::draw_set(population, 5000, 2026, i), i < 100; written by cargo bench --bench decisions",
        "n": N, "seed": SEED, "target": TARGET, "delta": DELTA, "populations": kept,
    });
    std::fs::write(&fixture, serde_json::to_string(&doc).unwrap() + "\n").expect("fixture");
    println!("MAPIE's cutoffs kept in {}", fixture.display());
}

/// Each of codecal's procedures on `draws` seeded sets of `n` items: a row
/// each, printed.
fn codecal_rows(population: Population, n: usize, draws: usize) -> Vec<Value> {
    let oracle = population.oracle(TARGET).map_or(0.0, |o| o.1);
    Procedure::ALL
        .into_iter()
        .map(|procedure| {
            let params = CutoffParams {
                target_precisions: vec![TARGET],
                delta: DELTA,
                procedure,
                ..CutoffParams::default()
            };
            let outcome = simulate(population, &params, n, draws, SEED);
            row(
                population,
                &format!("codecal {}", procedure.as_str()),
                draws,
                outcome.failures,
                outcome.mean_coverage,
                oracle,
            )
        })
        .collect()
}

fn row(
    population: Population,
    procedure: &str,
    draws: usize,
    failures: usize,
    coverage: f64,
    oracle: f64,
) -> Value {
    let rate = failures as f64 / draws as f64;
    let allowed = DELTA + 3.0 * (DELTA * (1.0 - DELTA) / draws as f64).sqrt();
    println!(
        "| {} | {procedure} | {draws} | {rate:.3} ({allowed:.3}) | {coverage:.4} | {:.0}% |",
        population.name(),
        100.0 * coverage / oracle
    );
    json!({
        "population": population.name(), "procedure": procedure, "draws": draws,
        "failure_rate": rate, "allowed": allowed, "mean_coverage": coverage,
        "share_of_oracle": coverage / oracle,
    })
}

/// MAPIE's chosen cutoff per set and fwer_method, on the bench's own sets.
fn mapie(python: &Path, population: Population) -> Vec<(String, Value)> {
    let sets: Vec<Value> = (0..MAPIE_DRAWS)
        .map(|index| {
            let (c, y) = draw_set(population, N, SEED, index);
            let y: Vec<u8> = y.into_iter().map(u8::from).collect();
            json!({ "c": c, "y": y })
        })
        .collect();
    let input = tempfile::NamedTempFile::new().expect("temp file");
    let doc =
        json!({ "target": TARGET, "delta": DELTA, "learn_fraction": LEARN_FRACTION, "sets": sets });
    std::fs::write(input.path(), doc.to_string()).expect("sets file");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/mapie_decisions.py");
    let output = Command::new(python)
        .arg(script)
        .arg(input.path())
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "mapie_decisions.py failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let parsed: serde_json::Map<String, Value> =
        serde_json::from_slice(&output.stdout).expect("MAPIE's JSON");
    parsed.into_iter().collect()
}
