//! Each answer of a task run as the report shows it (the problem, the
//! reply, the answer cut from it and the oracle's verdict), and each model's
//! row of verdicts per outcome. Read from the run's generation and verdict
//! rows; nothing is calibrated here.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::pipeline::artifacts::text_field;
use crate::report::run::{ItemText, ItemView};
use crate::task::Problem;

/// Each answer as the report shows it: the problem, the reply, the answer
/// cut from it and the oracle's verdict with the sandbox's message.
pub(super) fn item_views(
    label: &str,
    problems: &[Problem],
    generations: &[Value],
    verdicts: &[Value],
) -> Vec<ItemView> {
    let by_id: BTreeMap<&str, &Problem> = problems.iter().map(|p| (p.id.as_str(), p)).collect();
    generations
        .iter()
        .zip(verdicts)
        .map(|(generation, verdict)| {
            let id = text_field(generation, "id");
            let problem = by_id.get(id.as_str());
            let text = |label: &str, text: String, code: bool| ItemText {
                label: label.to_owned(),
                text,
                code,
            };
            let mut texts = vec![
                text(
                    "problem",
                    problem.map(|p| p.prompt.clone()).unwrap_or_default(),
                    true,
                ),
                text("model's reply", text_field(generation, "text"), true),
                text("extracted answer", text_field(verdict, "answer"), true),
                text("verdict", verdict_line(verdict), false),
                text("sandbox message", text_field(verdict, "detail"), true),
                text(
                    "dataset's answer",
                    problem
                        .map(|p| p.reference_answer.clone())
                        .unwrap_or_default(),
                    true,
                ),
            ];
            if verdict["intrinsic"].is_object() {
                let intrinsic = &verdict["intrinsic"];
                texts.push(text(
                    "intrinsic reply's answer",
                    text_field(intrinsic, "answer"),
                    true,
                ));
                texts.push(text("its verdict", verdict_line(intrinsic), false));
            }
            ItemView {
                group: id.clone(),
                id,
                model: label.to_owned(),
                texts,
                numbers: Vec::new(),
                labels: vec![("verdict".into(), verdict_line(verdict))],
                headline: text_field(verdict, "answer"),
            }
        })
        .collect()
}

/// "passed" or "failed: <reason>".
fn verdict_line(verdict: &Value) -> String {
    match verdict["correct"].as_bool() {
        Some(true) => format!("passed ({})", text_field(verdict, "reason")),
        _ => format!("failed: {}", text_field(verdict, "reason")),
    }
}

/// Model, answers, correct, empty answers, and a count per verdict reason.
pub(super) fn outcome_row(label: &str, verdicts: &[Value]) -> Vec<String> {
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for verdict in verdicts {
        *reasons.entry(text_field(verdict, "reason")).or_default() += 1;
    }
    let correct = verdicts
        .iter()
        .filter(|v| v["correct"].as_bool() == Some(true))
        .count();
    let empty = verdicts
        .iter()
        .filter(|v| text_field(v, "answer").trim().is_empty())
        .count();
    let reasons: Vec<String> = reasons.iter().map(|(r, n)| format!("{r} {n}")).collect();
    vec![
        label.to_owned(),
        verdicts.len().to_string(),
        correct.to_string(),
        empty.to_string(),
        reasons.join(", "),
    ]
}
