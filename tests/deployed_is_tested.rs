//! Issue "faithful, fourth pass", items 1 and 2: what is validated is what is
//! deployed. `codecal apply` with a saved calibrator, on the very items its
//! cutoffs were tested on, accepts exactly as many as the test counted.
//! Before the fix the learned combination's cutoffs were tested on its
//! out-of-fold scores while `apply` computed the all-item fit's, so the two
//! counts differed.

mod common;

use std::collections::HashMap;

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
