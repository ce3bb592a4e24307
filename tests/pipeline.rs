//! `codecal run` end to end on a tiny corpus, with a test HTTP backend on
//! loopback (no language model needed; MiniLM scores the summaries): every
//! artifact and table, reuse of unchanged stages, a run killed mid-generation
//! and resumed to the same report, and bad configs rejected up front.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::server::{Reply, Server};
use common::tiny::{answer, config, run_dir};

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

#[test]
fn whole_pipeline_writes_every_artifact_and_table_and_reuses_stages() {
    if common::model_files().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let common::tiny::FinishedRun {
        server,
        config: cfg,
        dir: run,
        output: out,
    } = common::tiny::finished_run(dir.path());
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
    assert_eq!(saved.cutoffs_on, "raw");
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
    // A port out of range, and request limits out of theirs, name their key.
    for (from, to, key) in [
        (
            "http://127.0.0.1:9/v1",
            "http://127.0.0.1:99999/v1",
            "port \"99999\"",
        ),
        (
            "concurrency = 2",
            "concurrency = 0",
            "backends[0].concurrency",
        ),
        (
            "concurrency = 2",
            "concurrency = 2\nmax_wait_s = 1e9",
            "backends[0].max_wait_s",
        ),
        (
            "concurrency = 2",
            "concurrency = 2\ntimeout_s = -5",
            "backends[0].timeout_s",
        ),
        (
            "concurrency = 2",
            "concurrency = 2\nextra = { seed = 3 }",
            "backends[0].extra",
        ),
    ] {
        let broken = config(dir.path(), &server, "");
        let text = std::fs::read_to_string(&broken)
            .unwrap()
            .replace(&server.base_url, "http://127.0.0.1:9/v1");
        std::fs::write(&broken, text.replace(from, to)).unwrap();
        let out = common::codecal(&["run", "--config", broken.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains(key),
            "{key}: {stderr}"
        );
    }
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
