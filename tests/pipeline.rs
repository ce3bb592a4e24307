//! `codecal run` end to end on a tiny corpus, with a test HTTP backend on
//! loopback (no language model needed; MiniLM scores the summaries): every
//! artifact and table, reuse of unchanged stages, a run killed mid-generation
//! and resumed to the same report, and bad configs rejected up front.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::server::{Reply, Server, completion, json};

const REPOS: [&str; 6] = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];
const VERBS: [(&str, &str); 8] = [
    ("add", "Add the two numbers ."),
    ("remove", "Remove the item from the list ."),
    ("parse", "Parse the configuration file ."),
    ("render", "Render the page as HTML ."),
    ("connect", "Connect to the database server ."),
    ("sort", "Sort the records by date ."),
    ("encode", "Encode the string as UTF-8 bytes ."),
    ("close", "Close the open file handle ."),
];

/// 48 Python records in CodeXGLUE's format: 8 functions in each of 6 repositories.
fn write_corpus(path: &Path) {
    let mut lines = String::new();
    for (r, repo) in REPOS.iter().enumerate() {
        for (v, (verb, summary)) in VERBS.iter().enumerate() {
            let name = format!("{verb}_{repo}_{v}");
            let code =
                format!("def {name}(x, y):\n    result = {verb}(x, y, {r})\n    return result");
            let record = serde_json::json!({
                "repo": format!("org/{repo}"),
                "path": format!("{repo}/mod.py"),
                "func_name": name,
                "language": "python",
                "original_string": code,
                "code": code,
                "code_tokens": code.split_whitespace().collect::<Vec<_>>(),
                "docstring": summary,
                "docstring_tokens": summary.split(' ').collect::<Vec<_>>(),
                "url": format!("https://example.org/{repo}/{name}"),
                "partition": "test",
            });
            lines += &format!("{record}\n");
        }
    }
    std::fs::write(path, lines).unwrap();
}

/// Answers with the right summary, confidently, for even-numbered functions
/// and with a wrong one, unsure, for odd ones, so confidence predicts correctness.
fn answer(seen: &common::server::Seen) -> Reply {
    let prompt = seen.body["prompt"].as_str().unwrap_or("");
    let query = prompt.rsplit("def ").next().unwrap_or("");
    if prompt.contains("Answer True or False") {
        // The judge is surer of the answers that were right.
        let right = !prompt.contains("Proposed comment: The weather");
        let p = if right { 0.8 } else { 0.3 } + (query.len() % 3) as f64 * 0.05;
        let mut reply = completion(&[(" True", p)]);
        reply["choices"][0]["logprobs"]["top_logprobs"] =
            serde_json::json!([{" True": p.ln(), " False": (1.0 - p).ln()}]);
        return json(200, &reply);
    }
    let name = query.split('(').next().unwrap_or("");
    let verb = name.split('_').next().unwrap_or("");
    let index: usize = name
        .rsplit('_')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let right = VERBS
        .iter()
        .find(|(v, _)| *v == verb)
        .map(|(_, s)| *s)
        .unwrap_or("Do it .");
    let noise = (name.len() % 5) as f64 * 0.02;
    let tokens: Vec<(String, f64)> = if index % 2 == 0 {
        right
            .split(' ')
            .map(|w| (format!(" {w}"), 0.85 + noise))
            .collect()
    } else {
        " The weather is nice today ."
            .split(' ')
            .skip(1)
            .map(|w| (format!(" {w}"), 0.35 + noise))
            .collect()
    };
    let tokens: Vec<(&str, f64)> = tokens.iter().map(|(t, p)| (t.as_str(), *p)).collect();
    json(200, &completion(&tokens))
}

fn config(dir: &Path, server: &Server, extra: &str) -> PathBuf {
    let corpus = dir.join("corpus.jsonl");
    write_corpus(&corpus);
    let thresholds = Path::new(env!("CARGO_MANIFEST_DIR")).join("thresholds/sbert-minilm.toml");
    let text = format!(
        r#"name = "tiny"
runs_dir = "{runs}"

[corpus]
source = "codexglue"
paths = ["{corpus}"]
queries = 24
seed = 7

[[backends]]
kind = "openai"
base_url = "{url}"
model = "test-model"
concurrency = 2
retry_base_ms = 10

[scoring]
thresholds = "{thresholds}"

[generation]
reflective = ["ask-true"]

[calibration]
confidence = ["average_token_probability", "minimum_token_probability"]
folds = 3
bootstrap = 50
{extra}"#,
        runs = dir.join("runs").display(),
        corpus = corpus.display(),
        url = server.base_url,
        thresholds = thresholds.display(),
    );
    let path = dir.join("run.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// 0.5 from "0.5 [0.3, 0.7]".
fn leading_number(cell: &str) -> f64 {
    cell.split(' ').next().unwrap().parse().unwrap()
}

fn run_dir(dir: &Path) -> PathBuf {
    dir.join("runs/tiny")
}

#[test]
fn whole_pipeline_writes_every_artifact_and_table_and_reuses_stages() {
    if common::model_files().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(|seen, _| answer(seen));
    let cfg = config(dir.path(), &server, "");
    let out = common::codecal(&["run", "--config", cfg.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = run_dir(dir.path());
    let label = "openai-test-model";
    for artifact in [
        "manifest.json",
        "records.jsonl",
        "queries.jsonl",
        "pool.jsonl",
        "prompts.jsonl",
        "cache.sqlite",
        &format!("generations/{label}.jsonl"),
        &format!("scores/{label}.csv"),
        &format!("labels/{label}.csv"),
        &format!("calibration/python/{label}/average_token_probability/best-f1/metrics.json"),
        &format!(
            "calibration/python/{label}/minimum_token_probability/high-recall/reliability.svg"
        ),
        "report.md",
    ] {
        assert!(run.join(artifact).is_file(), "{artifact} is missing");
    }
    // One calibrator per cell, with the generator it belongs to; it decides on
    // the run's own generation rows (their nested `confidence` object).
    let calibrator = run.join(format!(
        "calibrators/python/{label}/average_token_probability/best-f1.json"
    ));
    let saved = codecal::calibrate::Calibrator::load(&calibrator).unwrap();
    assert_eq!(saved.generator.as_ref().unwrap().model, "test-model");
    assert_eq!(saved.label.operating_point.as_deref(), Some("best-f1"));
    assert_eq!(saved.cutoffs_on, "out-of-fold");
    let generations = run.join(format!("generations/{label}.jsonl"));
    let applied = common::codecal(&[
        "apply",
        "--calibrator",
        calibrator.to_str().unwrap(),
        generations.to_str().unwrap(),
    ]);
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
    let decided = String::from_utf8(applied.stdout).unwrap();
    assert_eq!(decided.lines().count(), 24);
    assert!(decided.lines().all(|l| l.contains("\"decision\":")));
    for table in [
        "table1",
        "table2",
        "table3",
        "table4",
        "table6",
        "table7",
        "decisions",
    ] {
        for ext in ["csv", "tex"] {
            assert!(
                run.join(format!("tables/{table}.{ext}")).is_file(),
                "{table}.{ext}"
            );
        }
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["models"]["all-MiniLM-L6-v2/model.onnx"]
            .as_str()
            .map(str::len),
        Some(64),
        "the manifest records the model files' sha256"
    );
    assert_eq!(manifest["stages"].as_object().unwrap().len(), 6);
    assert_eq!(
        std::fs::read_to_string(run.join("records.jsonl"))
            .unwrap()
            .lines()
            .count(),
        48
    );
    let prompts = std::fs::read_to_string(run.join("prompts.jsonl")).unwrap();
    assert_eq!(prompts.lines().count(), 24);
    // Same-repository exemplars are excluded.
    for line in prompts.lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        let repo = row["repo"].as_str().unwrap().trim_start_matches("org/");
        for exemplar in row["exemplars"].as_array().unwrap() {
            assert!(
                !exemplar["id"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("/{repo}/"))
            );
        }
    }
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    for title in [
        "Table I:",
        "Table II:",
        "Table III:",
        "Table IV:",
        "Table VI:",
        "Table VII:",
        "Decisions:",
        "Calibration beyond the seeds' tables",
        "Calibration by subgroup",
    ] {
        assert!(report.contains(title), "{title} missing from the report");
    }
    assert!(
        report.contains(&format!(
            "[json](calibrators/python/{label}/average_token_probability/best-f1.json)"
        )),
        "the decision table links each calibrator"
    );
    assert!(
        report.contains("0.9155"),
        "Table II quotes the thresholds file's AUC"
    );
    assert!(
        report.contains("Fig. 3") && report.contains("codecal thresholds --ratings"),
        "the report says which command draws the ROC"
    );
    // The even functions get the right summary: about half are correct, and the
    // confident ones are the right ones, so AUROC-like separation shows in rho.
    let table3 = common::csv_rows(&run.join("tables/table3.csv"));
    let average = table3
        .iter()
        .find(|r| r[2] == "average_token_probability")
        .unwrap();
    assert_eq!(average[3], "24", "n");
    let success = leading_number(&average[4]);
    assert!((0.3..=0.7).contains(&success), "success rate {success}");
    let table7 = common::csv_rows(&run.join("tables/table7.csv"));
    assert!(
        table7.iter().any(|r| r[2] == "ask-true" && r[3] == "raw"),
        "{table7:?}"
    );
    let table1 = common::csv_rows(&run.join("tables/table1.csv"));
    let rho = leading_number(&table1[0][3]);
    assert!(rho > 0.5, "confidence tracks similarity: rho {rho}");

    // Leave a copy for the notebook check in .ci/run.
    let keep = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test-runs/tiny");
    let _ = std::fs::remove_dir_all(&keep);
    copy_dir(&run, &keep);

    // A second run reuses every stage and asks the server nothing.
    let requests = server.generation_requests();
    let again = common::codecal(&["run", "--config", cfg.to_str().unwrap(), "--resume"]);
    assert!(again.status.success());
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert_eq!(stderr.matches("unchanged, reused").count(), 6, "{stderr}");
    assert_eq!(server.generation_requests(), requests);
    // Without --resume an existing run is refused.
    let refused = common::codecal(&["run", "--config", cfg.to_str().unwrap()]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--resume"));
    // A changed calibration setting re-runs only the last stage.
    let cfg = config(dir.path(), &server, "seed = 3\n");
    let changed = common::codecal(&["run", "--config", cfg.to_str().unwrap(), "--resume"]);
    assert!(changed.status.success());
    let stderr = String::from_utf8_lossy(&changed.stderr);
    assert_eq!(stderr.matches("unchanged, reused").count(), 5, "{stderr}");
    assert!(stderr.contains("calibrate:"), "{stderr}");
}

#[test]
fn run_killed_mid_generation_resumes_to_the_same_report() {
    if common::model_files().is_none() {
        return;
    }
    let slow = |seen: &common::server::Seen, _| {
        Reply::Delay(Duration::from_millis(60), Box::new(answer(seen)))
    };
    let whole = tempfile::tempdir().unwrap();
    let server = Server::start(slow);
    let cfg = config(whole.path(), &server, "");
    assert!(
        common::codecal(&["run", "--config", cfg.to_str().unwrap()])
            .status
            .success()
    );

    let broken = tempfile::tempdir().unwrap();
    let server = Server::start(slow);
    let cfg = config(broken.path(), &server, "");
    let mut child = Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args(["run", "--config", cfg.to_str().unwrap()])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    server.wait_for_answers(8, Duration::from_secs(120));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!run_dir(broken.path()).join("report.md").exists());
    let resumed = common::codecal(&["run", "--config", cfg.to_str().unwrap(), "--resume"]);
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    // 24 summaries and 24 Ask-True questions, plus at most the two that were
    // on the wire (concurrency 2) when the process died.
    assert!(
        server.generation_requests() <= 48 + 2,
        "answers from before the kill were not asked again"
    );
    let report = |dir: &Path| std::fs::read_to_string(run_dir(dir).join("report.md")).unwrap();
    let normalise = |text: String, dir: &Path| text.replace(&dir.display().to_string(), "DIR");
    assert_eq!(
        normalise(report(broken.path()), broken.path()),
        normalise(report(whole.path()), whole.path())
    );
}

#[test]
fn bad_configs_fail_before_any_stage_naming_the_key_or_file() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(|seen, _| answer(seen));
    let thresholds = Path::new(env!("CARGO_MANIFEST_DIR")).join("thresholds");
    let bleu = thresholds.join("bleu1.toml");
    let scoring_on = |device: &str| {
        let minilm = thresholds.join("sbert-minilm.toml");
        format!(
            "[scoring]\nthresholds = \"{}\"\ndevice = \"{device}\"\n",
            minilm.display()
        )
    };
    let mut cases: Vec<(String, &str)> = vec![
        ("colour = \"red\"\n".into(), "colour"),
        (
            format!("[scoring]\nthresholds = \"{}\"\n", bleu.display()),
            "holds thresholds for bleu1",
        ),
        (scoring_on("tpu"), "scoring.device"),
    ];
    if codecal::models::nvidia_gpu_present() {
        eprintln!(
            "SKIPPED (one case): this machine has an NVIDIA GPU, so device cuda is valid here"
        );
    } else {
        cases.push((scoring_on("cuda"), "no NVIDIA GPU"));
    }
    for (extra, expected) in cases {
        let cfg = config(dir.path(), &server, "");
        // Put the extra text at the top level, or replace the [scoring] section.
        let text = std::fs::read_to_string(&cfg).unwrap();
        let text = if extra.starts_with("[scoring]") {
            text.replace(
                &text[text.find("[scoring]").unwrap()..text.find("[calibration]").unwrap()],
                &extra,
            )
        } else {
            format!("{extra}{text}")
        };
        std::fs::write(&cfg, text).unwrap();
        let out = common::codecal(&["run", "--config", cfg.to_str().unwrap()]);
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{expected}: {stderr}");
        assert!(!run_dir(dir.path()).exists(), "nothing was started");
    }
    let cfg = config(dir.path(), &server, "");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let unreachable = text.replace(&server.base_url, "http://127.0.0.1:9/v1");
    std::fs::write(&cfg, unreachable).unwrap();
    let out = common::codecal(&["run", "--config", cfg.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("backends[0].base_url"), "{stderr}");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&cfg, text.replace("corpus.jsonl", "missing.jsonl")).unwrap();
    let out = common::codecal(&["run", "--config", cfg.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("corpus.paths") && stderr.contains("missing.jsonl"),
        "{stderr}"
    );
    assert!(!run_dir(dir.path()).exists());
}
