//! The group features a run offers multicalibration
//! (`[calibration] group_features`), from each item's plain facts: its
//! language, its repository (or problem), the lengths of its code and of the
//! model's answer (summary) in characters, and its code's cyclomatic
//! complexity and distinct identifiers (tree-sitter; 0 for a language
//! without a grammar here).
//!
//! Not here: how groups are formed from them or corrected
//! (`calibrate::multical`).

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
