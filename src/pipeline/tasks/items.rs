//! Each answer of a task run as the report shows it (the problem, the
//! reply, the answer cut from it and the oracle's verdict), and each model's
//! row of verdicts per outcome. Read from the run's generation and verdict
//! rows; nothing is calibrated here.

use std::collections::BTreeMap;

use crate::generate::row::GenerationRow;
use crate::report::run::{ItemText, ItemView};
use crate::task::{Problem, Verdict, VerdictRow};

/// Each answer as the report shows it: the problem, the reply, the answer
/// cut from it and the oracle's verdict with the sandbox's message.
pub(super) fn item_views(
    label: &str,
    problems: &[Problem],
    generations: &[GenerationRow],
    verdicts: &[VerdictRow],
) -> Vec<ItemView> {
    let by_id: BTreeMap<&str, &Problem> = problems.iter().map(|p| (p.id.as_str(), p)).collect();
    generations
        .iter()
        .zip(verdicts)
        .map(|(generation, verdict)| {
            let id = generation.id.clone();
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
                text("model's reply", generation.text.clone(), true),
                text("extracted answer", verdict.answer.clone(), true),
                text("verdict", verdict_line(&verdict.verdict), false),
                text("sandbox message", verdict.verdict.detail.clone(), true),
                text(
                    "dataset's answer",
                    problem
                        .map(|p| p.reference_answer.clone())
                        .unwrap_or_default(),
                    true,
                ),
            ];
            if let Some(intrinsic) = &verdict.intrinsic {
                texts.push(text(
                    "intrinsic reply's answer",
                    intrinsic.answer.clone(),
                    true,
                ));
                texts.push(text("its verdict", verdict_line(&intrinsic.verdict), false));
            }
            ItemView {
                group: id.clone(),
                id,
                model: label.to_owned(),
                texts,
                numbers: Vec::new(),
                labels: vec![("verdict".into(), verdict_line(&verdict.verdict))],
                headline: verdict.answer.clone(),
            }
        })
        .collect()
}

/// "passed" or "failed: <reason>".
fn verdict_line(verdict: &Verdict) -> String {
    match verdict.correct {
        true => format!("passed ({})", verdict.reason.name()),
        false => format!("failed: {}", verdict.reason.name()),
    }
}

/// Model, answers, correct, empty answers, and a count per verdict reason.
pub(super) fn outcome_row(label: &str, verdicts: &[VerdictRow]) -> Vec<String> {
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for row in verdicts {
        *reasons.entry(row.verdict.reason.name()).or_default() += 1;
    }
    let correct = verdicts.iter().filter(|v| v.verdict.correct).count();
    let empty = verdicts
        .iter()
        .filter(|v| v.answer.trim().is_empty())
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
