//! `codecal judge` end to end: answers in, verdicts out, in the answers'
//! order, with clear errors for answers to problems that do not exist.

mod common;

use std::process::Command;

use codecal::sandbox::{IsolationChoice, Limits};

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
    let result = run(&answers);
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let verdicts: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
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
