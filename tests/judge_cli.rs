//! `codecal judge` end to end: answers in, verdicts out, in the answers'
//! order, with clear errors for answers to problems that do not exist.

mod common;

use std::path::Path;
use std::process::Command;

use codecal::sandbox::{IsolationChoice, Limits};

/// Runs `codecal judge` with `args` then `--data`, `--answers` and `--out`,
/// expects success and returns the verdict lines.
fn judge(args: &[&str], data: &Path, answers: &Path, out: &Path) -> Vec<serde_json::Value> {
    let result = Command::new(env!("CARGO_BIN_EXE_codecal"))
        .arg("judge")
        .args(args)
        .arg("--data")
        .arg(data)
        .arg("--answers")
        .arg(answers)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    std::fs::read_to_string(out)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn judge_writes_a_verdict_per_answer_and_names_unknown_problems() {
    let (Some(data), Some(_)) = (
        common::shared_data("cruxeval/cruxeval.jsonl"),
        common::sandbox(Limits::default(), IsolationChoice::Auto),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers.jsonl");
    std::fs::write(
        &answers,
        concat!(
            r#"{"id":"sample_0","answer":"[(4, 1), (4, 1), (4, 1), (4, 1), (2, 3), (2, 3)]"}"#,
            "\n",
            r#"{"id":"sample_0","answer":"[ANSWER]assert f([1]) == [][/ANSWER]"}"#,
            "\n",
            r#"{"id":"sample_1","answer":"{1: None, 2: None"}"#,
            "\n",
        ),
    )
    .unwrap();
    let out = dir.path().join("verdicts.jsonl");
    let run = |answers: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_codecal"))
            .args([
                "judge",
                "--dataset",
                "cruxeval-output",
                "--extract",
                "--data",
            ])
            .arg(&data)
            .arg("--answers")
            .arg(answers)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap()
    };
    let verdicts = judge(
        &["--dataset", "cruxeval-output", "--extract"],
        &data,
        &answers,
        &out,
    );
    let fields = |key: &str| verdicts.iter().map(|v| v[key].clone()).collect::<Vec<_>>();
    assert_eq!(
        fields("correct"),
        [true, false, false].map(serde_json::Value::from)
    );
    assert_eq!(
        fields("reason"),
        ["passed", "wrong-output", "syntax-error"].map(serde_json::Value::from)
    );
    assert_eq!(
        verdicts[1]["answer"], "[]",
        "the answer is cut out of the assertion"
    );

    let unknown = dir.path().join("unknown.jsonl");
    std::fs::write(
        &unknown,
        "{\"id\":\"sample_0\",\"answer\":\"1\"}\n{\"id\":\"sample_9999\",\"answer\":\"1\"}\n",
    )
    .unwrap();
    let result = run(&unknown);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(!result.status.success());
    assert!(
        stderr.contains("unknown.jsonl:2") && stderr.contains("sample_9999"),
        "{stderr}"
    );
}

/// The issue a new user met: HumanEval completions are indented function
/// bodies, and an answer reader that trims them turns each into a
/// "'return' outside function" syntax error. All 164 canonical solutions,
/// exactly as the dataset gives them, through a JSONL and a CSV answers file.
#[test]
fn judge_passes_every_canonical_humaneval_solution_byte_for_byte() {
    let (Some(data), Some(_)) = (
        common::shared_data("humaneval/HumanEval.jsonl.gz"),
        common::sandbox(Limits::default(), IsolationChoice::Auto),
    ) else {
        return;
    };
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(&data).unwrap()),
        &mut text,
    )
    .unwrap();
    let solutions: Vec<(String, String)> = text
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let field = |k: &str| v[k].as_str().unwrap().to_owned();
            (field("task_id"), field("canonical_solution"))
        })
        .collect();
    assert_eq!(solutions.len(), 164);
    assert!(
        solutions[2].1.starts_with("    return"),
        "{:?}",
        solutions[2].1
    );
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("answers.jsonl");
    let lines: String = solutions
        .iter()
        .map(|(id, answer)| serde_json::json!({ "id": id, "answer": answer }).to_string() + "\n")
        .collect();
    std::fs::write(&jsonl, lines).unwrap();
    let csv_path = dir.path().join("answers.csv");
    let mut writer = csv::Writer::from_path(&csv_path).unwrap();
    writer.write_record(["id", "answer"]).unwrap();
    for (id, answer) in &solutions {
        writer.write_record([id, answer]).unwrap();
    }
    writer.flush().unwrap();
    for answers in [&jsonl, &csv_path] {
        let out = dir.path().join("verdicts.jsonl");
        let verdicts = judge(&["--dataset", "humaneval"], &data, answers, &out);
        assert_eq!(verdicts.len(), 164);
        let failed: Vec<_> = verdicts
            .iter()
            .filter(|v| v["correct"] != true)
            .map(|v| format!("{} {}", v["id"], v["reason"]))
            .collect();
        assert!(failed.is_empty(), "{}: {failed:?}", answers.display());
    }
}
