//! `codecal thresholds` on the Haque et al. (ICPC 2022) human ratings in
//! ../shared/data/haque2022-similarity/, against the summarization seed's numbers.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The ratings file, or None (with the reason printed) where shared data is absent.
fn ratings() -> Option<PathBuf> {
    common::shared_data("haque2022-similarity/final_megafile.csv")
}

fn thresholds_json(args: &[&str]) -> Vec<Value> {
    let path = ratings().expect("checked by the caller");
    let out = Command::new(env!("CARGO_BIN_EXE_codecal"))
        .arg("thresholds")
        .arg("--ratings")
        .arg(&path)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn metric<'a>(all: &'a [Value], name: &str) -> &'a Value {
    all.iter()
        .find(|m| m["metric"] == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

fn close(value: &Value, expected: f64, tolerance: f64) {
    let v = value.as_f64().unwrap();
    assert!((v - expected).abs() <= tolerance, "{v} vs {expected}");
}

// The summarization seed's Table II: AUC against the human labels.
#[test]
fn haque_columns_give_the_seed_table_ii_auc() {
    if ratings().is_none() {
        return;
    }
    let all = thresholds_json(&[
        "--no-text-metrics",
        "--column",
        "b1",
        "--column",
        "rbert",
        "--column",
        "iS_cosine",
        "--cosine-column",
        "sb_cosine",
        "--bootstrap",
        "0",
    ]);
    for (name, auc) in [
        ("sb_cosine", 0.903),
        ("b1", 0.862),
        ("rbert", 0.864),
        ("iS_cosine", 0.839),
    ] {
        close(&metric(&all, name)["auc"], auc, 0.001);
    }
    let cosine01 = metric(&all, "sb_cosine01");
    assert_eq!(cosine01["n"], 210);
    assert_eq!(cosine01["positives"], 48);
    // Exact search on (x+1)/2 of Haque's sb_cosine.
    for (point, [t, p, r]) in [
        ("best_f1", [0.8937, 0.702, 0.688]),
        ("high_precision", [0.9745, 0.941, 0.333]),
        ("high_recall", [0.8050, 0.500, 0.917]),
    ] {
        close(&cosine01[point]["threshold"], t, 0.001);
        close(&cosine01[point]["precision"], p, 0.001);
        close(&cosine01[point]["recall"], r, 0.001);
    }
    close(&cosine01["best_f1"]["f1"], 0.695, 0.001);
}

// The seed's replication notebook: 0.88 / 0.97 / 0.80 on a 0.01 grid.
#[test]
fn grid_search_lands_near_the_seed_notebook() {
    if ratings().is_none() {
        return;
    }
    let all = thresholds_json(&[
        "--no-text-metrics",
        "--cosine-column",
        "sb_cosine",
        "--metric",
        "sb_cosine01",
        "--grid",
        "0.01",
        "--bootstrap",
        "0",
    ]);
    let m = metric(&all, "sb_cosine01");
    for (point, t) in [
        ("best_f1", 0.88),
        ("high_precision", 0.97),
        ("high_recall", 0.80),
    ] {
        close(&m[point]["threshold"], t, 0.01 + 1e-9);
    }
}

#[test]
fn codecal_bleu1_has_the_auc_of_the_b1_column() {
    if ratings().is_none() {
        return;
    }
    let all = thresholds_json(&[
        "--no-model",
        "--tokenize",
        "whitespace",
        "--column",
        "b1",
        "--metric",
        "bleu1",
        "--metric",
        "b1",
        "--bootstrap",
        "0",
    ]);
    let (ours, theirs) = (&metric(&all, "bleu1")["auc"], &metric(&all, "b1")["auc"]);
    close(ours, theirs.as_f64().unwrap(), 1e-12);
}

/// `key = value` lines of a TOML file, numbers parsed.
fn toml_values(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.split_once(" = "))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

#[test]
fn committed_threshold_files_are_reproduced_by_their_commands() {
    if ratings().is_none() {
        return;
    }
    if common::model_files().is_none() {
        return;
    }
    let committed = root().join("thresholds");
    let files: Vec<PathBuf> = std::fs::read_dir(&committed)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    assert!(
        files.len() >= 3,
        "sbert, bleu1 and rouge1-p files are committed"
    );
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let values = toml_values(&text);
        let command = values
            .iter()
            .find(|(k, _)| k == "command")
            .unwrap()
            .1
            .trim_matches('"')
            .to_owned();
        let out = tempfile::tempdir().unwrap();
        let mut args: Vec<String> = command
            .split_whitespace()
            .skip(1)
            .map(str::to_owned)
            .collect();
        let at = args.iter().position(|a| a == "--out").unwrap();
        args[at + 1] = out.path().display().to_string();
        let run = Command::new(env!("CARGO_BIN_EXE_codecal"))
            .args(&args)
            .current_dir(root())
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let again = std::fs::read_to_string(out.path().join(file.file_name().unwrap())).unwrap();
        let fresh = toml_values(&again);
        assert_eq!(values.len(), fresh.len(), "{}", file.display());
        for ((key, want), (_, got)) in values.iter().zip(&fresh) {
            if key == "command" {
                continue;
            }
            let numbers = |s: &str| -> Vec<f64> {
                s.trim_matches(|c| c == '[' || c == ']')
                    .split(", ")
                    .filter_map(|x| x.parse().ok())
                    .collect()
            };
            let (a, b) = (numbers(want), numbers(got));
            if a.is_empty() {
                assert_eq!(want, got, "{}: {key}", file.display());
            } else {
                assert_eq!(a.len(), b.len());
                for (x, y) in a.iter().zip(&b) {
                    assert!(
                        (x - y).abs() < 1e-4,
                        "{}: {key}: {x} vs {y}",
                        file.display()
                    );
                }
            }
        }
    }
}

/// The summarization seed's Fig. 8: the few-shot verbalized prompt's shots
/// come from Haque et al.'s ratings, not invented. Each shot of the built-in
/// template is a (reference, generated) pair that all three raters of the
/// generated comment scored with the shot's rating.
#[test]
fn few_shot_verbalized_examples_are_haque_ratings() {
    let Some(path) = common::shared_data("haque2022-similarity/ratings_by_function.csv") else {
        return;
    };
    let template =
        std::fs::read_to_string(root().join("templates/reflective/verbalized-1-4-fewshot.txt"))
            .unwrap();
    let lines: Vec<&str> = template.lines().collect();
    let mut shots = Vec::new();
    for window in lines.windows(3) {
        if let (Some(reference), Some(generated), Some(rating)) = (
            window[0].strip_prefix("Developer's comment: "),
            window[1].strip_prefix("Proposed comment: "),
            window[2].strip_prefix("Rating: "),
        ) {
            shots.push((reference, generated, rating.parse::<u8>().unwrap()));
        }
    }
    assert_eq!(shots.len(), 4, "Fig. 8 is a 4-shot prompt");
    let mut ratings: Vec<u8> = shots.iter().map(|s| s.2).collect();
    ratings.sort();
    assert_eq!(ratings, [1, 2, 3, 4], "one shot per rating");
    let mut reader = csv::Reader::from_path(&path).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    for (reference, generated, rating) in shots {
        let row = rows
            .iter()
            .find(|r| &r[column("reference")] == reference && &r[column("generated")] == generated)
            .unwrap_or_else(|| panic!("{reference:?} / {generated:?} is not in the ratings"));
        for rater in ["sim_baseline_1", "sim_baseline_2", "sim_baseline_3"] {
            assert_eq!(
                row[column(rater)].parse::<u8>().unwrap(),
                rating,
                "{reference:?}"
            );
        }
    }
}
