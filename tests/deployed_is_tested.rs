//! Issue "faithful, fourth pass", items 1 and 2: what is validated is what is
//! deployed. `codecal apply` with a saved calibrator, on the very items its
//! cutoffs were tested on, accepts exactly as many as the test counted: on
//! the plain path, with per-group cutoffs (`--by`), with multicalibration,
//! and with a learned combination. Before the fix the combination's cutoffs
//! were tested on its out-of-fold scores, and multicalibrated per-group
//! cutoffs on the out-of-fold multicalibrated confidence, while `apply`
//! computed the all-item fit's, so the counts differed.

mod common;

use std::collections::HashMap;
use std::fmt::Write as _;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use serde_json::Value;

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A number in [0, 1) that depends on the text alone.
fn spread(text: &str) -> f64 {
    let hash = text
        .bytes()
        .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    (hash % 1000) as f64 / 1000.0
}

/// `codecal run` on 90 HumanEval problems against a loopback server that
/// answers two in three with the reference, more confidently, and the rest
/// with `return None`; the run combines the average token probability with
/// the prompt's examples. Then `codecal apply` with the combination's
/// calibrator on the items its cutoffs were tested on (all of them where the
/// report names none) accepts as many as the report says were accepted.
#[test]
fn apply_accepts_on_the_tested_items_what_the_combination_s_test_counted() {
    use common::server::{Server, completion, json};
    let (Some(data), Some(_)) = (
        common::humaneval_file(),
        common::sandbox(Default::default(), Default::default()),
    ) else {
        return;
    };
    let problems = codecal::task::datasets::read_humaneval(&data).unwrap();
    let solutions: HashMap<String, String> = problems
        .iter()
        .map(|p| (p.prompt.clone(), p.reference_answer.clone()))
        .collect();
    let server = Server::start(move |seen, _| {
        let prompt = seen.body["prompt"].as_str().unwrap_or("");
        let (answer, p) = if common::cruxeval_answers_right(prompt) {
            let answer = solutions.get(prompt).cloned().unwrap_or_default();
            (answer, 0.45 + 0.5 * spread(prompt))
        } else {
            ("    return None\n".to_owned(), 0.3 + 0.5 * spread(prompt))
        };
        json(200, &completion(&[(&answer, p)]))
    });
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("combined.toml");
    std::fs::write(
        &config,
        format!(
            "name = \"combined\"\nruns_dir = \"{runs}\"\ntask = \"synthesis\"\n\n\
             [dataset]\nname = \"humaneval\"\nproblems = 90\nseed = 11\n\n\
             [[backends]]\nkind = \"openai\"\nbase_url = \"{url}\"\nmodel = \"m\"\nretry_base_ms = 10\n\n\
             [calibration]\nconfidence = [\"average_token_probability\", \"spec_examples\"]\n\
             combine = [\"average_token_probability\", \"spec_examples\"]\n\
             target_precision = [0.7, 0.8]\nfolds = 3\nbootstrap = 20\n",
            runs = dir.path().join("runs").display(),
            url = server.base_url,
        ),
    )
    .unwrap();
    let out = common::codecal(&["run", "--config", config.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = dir.path().join("runs/combined");
    let generations = lines(&run.join("generations/openai-m.jsonl"));
    let examples = lines(&run.join("examples/openai-m.jsonl"));
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(
            run.join("calibration/humaneval/openai-m/combination/metrics.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let tested: Vec<usize> = match report.get("tested_items") {
        Some(items) => serde_json::from_value(items.clone()).unwrap(),
        None => (0..generations.len()).collect(),
    };
    assert_eq!(
        report["cutoffs"]["items"].as_u64(),
        Some(tested.len() as u64)
    );
    // No Platt rescaling on top: in the combination's own folds it would
    // learn from fits that saw each test fold's labels.
    assert!(report["rescaled"].is_null(), "{}", report["rescaled"]);
    // Each tested item's measures, as a user would hand them to apply.
    let mut input = String::new();
    for &i in &tested {
        let (generation, example) = (&generations[i], &examples[i]);
        assert_eq!(generation["id"], example["id"]);
        let mut confidence = generation["confidence"].as_object().unwrap().clone();
        confidence.extend(example["confidence"].as_object().unwrap().clone());
        input += &(serde_json::json!({"id": generation["id"], "confidence": confidence})
            .to_string()
            + "\n");
    }
    let items = dir.path().join("tested.jsonl");
    std::fs::write(&items, input).unwrap();
    let calibrator = run.join("calibrators/humaneval/openai-m/combination.json");
    let mut certified = 0;
    for (k, cutoff) in report["cutoffs"]["accept"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let decided = dir.path().join(format!("decided-{k}.jsonl"));
        let target = cutoff["target_precision"].as_f64().unwrap().to_string();
        let out = common::codecal(&[
            "apply",
            "--calibrator",
            calibrator.to_str().unwrap(),
            items.to_str().unwrap(),
            "--target-precision",
            &target,
            "--out",
            decided.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let accepted = lines(&decided)
            .iter()
            .filter(|r| r["decision"] == "accept")
            .count();
        certified += usize::from(!cutoff["cutoff"].is_null());
        assert_eq!(
            accepted as u64,
            cutoff["decided"].as_u64().unwrap(),
            "at precision {target}: apply accepted {accepted} of the {} tested items, the test \
             counted {}",
            tested.len(),
            cutoff["decided"]
        );
    }
    assert!(certified > 0, "no target certified: {}", report["cutoffs"]);
}

/// 1,500 items in three languages, over-confident in "a" and under-confident
/// in "b" (as `tests/multicalibration_cli.rs` makes them), as CSV lines.
fn three_languages() -> Vec<String> {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    (0..1500)
        .map(|i| {
            let z: f64 = rng.random_range(-2.5..2.5);
            let shift = [1.0, -1.0, 0.0][i % 3];
            let confidence = 1.0 / (1.0 + (-(z + shift)).exp());
            let correct = rng.random::<f64>() < 1.0 / (1.0 + (-z).exp());
            let length = rng.random_range(5..400);
            let language = ["a", "b", "c"][i % 3];
            format!(
                "x{i},{confidence:.6},{},{language},{length}",
                u8::from(correct)
            )
        })
        .collect()
}

/// `calibrate --save --json` with `method`, then `apply` on the items the
/// report says the cutoffs were tested on (all where it names none): in each
/// language, as many accepted at precision 0.7 as the test counted, and in
/// all, as many as the pooled test counted where there are no groups.
fn apply_on_tested_items_matches(dir: &std::path::Path, method: &[&str], by: bool) {
    let lines = three_languages();
    let header = "id,confidence,correct,language,length\n";
    let items = dir.join("items.csv");
    std::fs::write(&items, header.to_owned() + &lines.join("\n") + "\n").unwrap();
    let saved = dir.join("calibrator.json");
    let mut args = vec![
        "calibrate",
        items.to_str().unwrap(),
        "--target-precision",
        "0.7",
        "--bootstrap",
        "0",
        "--json",
        "--save",
        saved.to_str().unwrap(),
    ];
    if by {
        args.extend(["--by", "language"]);
    }
    args.extend(method);
    let out = common::codecal(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tested: Vec<usize> = match report.get("tested_items") {
        Some(items) => serde_json::from_value(items.clone()).unwrap(),
        None => (0..lines.len()).collect(),
    };
    let mut subset = header.to_owned();
    for &i in &tested {
        writeln!(subset, "{}", lines[i]).unwrap();
    }
    let subset_path = dir.join("tested.csv");
    std::fs::write(&subset_path, subset).unwrap();
    let out = common::codecal(&[
        "apply",
        "--calibrator",
        saved.to_str().unwrap(),
        subset_path.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut accepted: HashMap<String, u64> = HashMap::new();
    for line in text.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        if cells.last() == Some(&"accept") {
            *accepted.entry(cells[3].to_owned()).or_default() += 1;
        }
    }
    let cutoffs = &report["cutoffs"];
    let expected: Vec<(String, u64)> = if by {
        cutoffs["groups"]["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                let name = g["group"].as_str().unwrap().to_owned();
                (name, g["accept"][0]["decided"].as_u64().unwrap())
            })
            .collect()
    } else {
        let all = cutoffs["accept"][0]["decided"].as_u64().unwrap();
        vec![("all".to_owned(), all)]
    };
    if !by {
        let total = accepted.values().sum();
        accepted = HashMap::from([("all".to_owned(), total)]);
    }
    assert!(
        expected.iter().any(|(_, n)| *n > 0),
        "nothing accepted: {cutoffs}"
    );
    for (group, decided) in expected {
        let got = accepted.get(&group).copied().unwrap_or(0);
        assert_eq!(
            got, decided,
            "{method:?} group {group}: apply accepted {got} of the tested items, the test counted {decided}"
        );
    }
}

#[test]
fn apply_accepts_what_calibrate_tested_on_the_plain_path() {
    let dir = tempfile::tempdir().unwrap();
    apply_on_tested_items_matches(dir.path(), &["--method", "platt"], false);
}

#[test]
fn apply_accepts_what_calibrate_tested_in_each_group_with_by() {
    let dir = tempfile::tempdir().unwrap();
    apply_on_tested_items_matches(dir.path(), &["--method", "platt"], true);
}

#[test]
fn apply_accepts_what_calibrate_tested_in_each_group_when_multicalibrated() {
    let dir = tempfile::tempdir().unwrap();
    let method = [
        "--method",
        "multicalibration",
        "--group-features",
        "language,length",
    ];
    apply_on_tested_items_matches(dir.path(), &method, true);
}
