//! What a run does for multicalibration: the group features it offers
//! (`[calibration] group_features`), from each item's plain facts: its
//! language, its repository (or problem), the lengths of its code and of the
//! model's answer (summary) in characters, and its code's cyclomatic
//! complexity and distinct identifiers (tree-sitter; 0 for a language
//! without a grammar here); and the run report's multicalibration table.
//!
//! Not here: how groups are formed from them or corrected
//! (`calibrate::multical`).

use serde_json::Value;

use super::artifacts::text_field;
use super::calibration::CellRow;
use super::tables::{Named, header, value_with_interval};
use crate::calibrate::multical::diagnostics::WithInterval;
use crate::calibrate::multical::{FeatureColumn, FeatureValues};
use crate::corpus::code_metrics::{CodeMetrics, code_metrics};

fn metrics(item: &ItemFacts) -> CodeMetrics {
    code_metrics(item.code, item.language).unwrap_or_default()
}

/// The names `[calibration] group_features` may list.
pub(crate) const GROUP_FEATURES: [&str; 6] = [
    "language",
    "repository",
    "code_length",
    "answer_length",
    "complexity",
    "identifiers",
];

/// What one item offers.
pub(crate) struct ItemFacts<'a> {
    pub language: &'a str,
    pub repository: &'a str,
    /// The code the metrics parse: a summarised function, or a problem's
    /// code completed by the answer.
    pub code: &'a str,
    pub code_chars: usize,
    pub answer_chars: usize,
}

/// The columns `names` (each one of [`GROUP_FEATURES`], checked with the
/// config) over `items`.
pub(crate) fn feature_columns<'a>(names: &[String], items: &[ItemFacts<'a>]) -> Vec<FeatureColumn> {
    names
        .iter()
        .map(|name| {
            let text = |f: for<'i> fn(&'i ItemFacts<'a>) -> &'a str| {
                FeatureValues::Categorical(items.iter().map(|i| f(i).to_owned()).collect())
            };
            let number = |f: fn(&ItemFacts) -> usize| {
                FeatureValues::Numeric(items.iter().map(|i| f(i) as f64).collect())
            };
            let values = match name.as_str() {
                "language" => text(|i| i.language),
                "repository" => text(|i| i.repository),
                "code_length" => number(|i| i.code_chars),
                "answer_length" => number(|i| i.answer_chars),
                "complexity" => number(|i| metrics(i).complexity),
                _ => number(|i| metrics(i).identifiers),
            };
            FeatureColumn {
                name: name.clone(),
                values,
            }
        })
        .collect()
}

/// The group features `names` of every item, for multicalibration.
pub(crate) fn task_features(
    generations: &[Value],
    verdicts: &[Value],
    names: &[String],
) -> Vec<FeatureColumn> {
    if names.is_empty() {
        return Vec::new();
    }
    // The code a group feature parses is the problem's code completed by the
    // answer: what a deployed item carries too.
    let facts: Vec<(String, String, String, usize, usize)> = generations
        .iter()
        .zip(verdicts)
        .map(|(generation, verdict)| {
            let code = text_field(generation, "code");
            let answer = text_field(verdict, "answer");
            let (code_chars, answer_chars) = (code.chars().count(), answer.chars().count());
            let completed = code + &answer;
            (
                text_field(generation, "language"),
                text_field(generation, "repo"),
                completed,
                code_chars,
                answer_chars,
            )
        })
        .collect();
    let items: Vec<ItemFacts> = facts
        .iter()
        .map(
            |(language, repository, code, code_chars, answer_chars)| ItemFacts {
                language,
                repository,
                code,
                code_chars: *code_chars,
                answer_chars: *answer_chars,
            },
        )
        .collect();
    feature_columns(names, &items)
}

/// The multicalibration table, where the cells were multicalibrated: per
/// cell, the worst group by the base rescaler's ECE before and after, and
/// the Brier skill and multicalibration error of both, out of fold.
pub(crate) fn multicalibration_table(key: &[&str], rows: &[CellRow]) -> Option<Named> {
    let fmt = |v: &WithInterval| value_with_interval(v.value, v.ci);
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .filter_map(|row| {
            let mc = row.report.multicalibration.as_ref()?;
            let mut cells = row.key.clone();
            cells.extend([
                mc.worst_group.clone().unwrap_or_else(|| "–".into()),
                mc.worst_before.as_ref().map_or("–".into(), fmt),
                mc.worst_after.as_ref().map_or("–".into(), fmt),
                fmt(&mc.skill_base),
                fmt(&mc.skill_multicalibrated),
                format!("{:.4}", mc.multicalibration_error.base),
                format!("{:.4}", mc.multicalibration_error.multicalibrated),
                mc.patches.to_string(),
            ]);
            Some(cells)
        })
        .collect();
    if table_rows.is_empty() {
        return None;
    }
    Some(Named {
        file: "multicalibration",
        title: "Multicalibration after the base rescaler (Hébert-Johnson et al. 2018), out of \
                fold: the worst group by the base rescaler's ECE, before and after, and Brier \
                skill and multicalibration error on every tested item; the per-group tables are \
                in each cell's calibration/ table.md"
            .into(),
        header: header(
            key,
            &[
                "worst group",
                "its ECE, base",
                "its ECE, multicalibrated",
                "skill, base",
                "skill, multicalibrated",
                "MC error, base",
                "MC error, multicalibrated",
                "patches",
            ],
        ),
        rows: table_rows,
    })
}
