//! The "confidence sources" table that every flow's report adds: each
//! measure of each model side by side on the same items, with how well it
//! ranks (AUC), its Brier skill raw and rescaled, and what it cost in
//! generated tokens. Not the calibration itself, nor the seeds' tables.

use crate::calibrate::CalibrationReport;
use crate::confidence::agreement::{CODE_MEASURES, SUMMARY_MEASURES};
use crate::confidence::reflective::Measure;
use crate::generate::row::GenerationRow;
use crate::report::run::ReportTable;
use crate::report::table::{header, with_ci};
use crate::task::examples::SPEC_EXAMPLES_SAMPLES;
use crate::task::examples::written::{DUAL_AGREEMENT, MODEL_TESTS};

/// One model x measure's row.
pub(crate) struct SourceRow<'a> {
    pub key: Vec<String>,
    pub measure: &'a str,
    pub report: &'a CalibrationReport,
    /// Generated tokens per item the measure needs, where every item says.
    pub tokens_per_item: Option<f64>,
    /// Sandbox seconds per item the measure's confidence took, where known.
    pub sandbox_seconds_per_item: Option<f64>,
}

/// Where a measure's number comes from.
pub(crate) fn source_of(measure: &str) -> &'static str {
    if measure == super::config::COMBINATION {
        "a learned combination of measures (logistic regression, out of fold)"
    } else if CODE_MEASURES.contains(&measure) {
        "agreement: sampled answers run on shared inputs in the sandbox"
    } else if SUMMARY_MEASURES.contains(&measure) {
        "agreement: sampled summaries embedded with SentenceBERT"
    } else if is_reflective(measure) {
        "reflection: a further question to the model"
    } else if crate::task::examples::SPEC_MEASURES.contains(&measure) {
        "the prompt's own examples, run on the answer in the sandbox"
    } else if measure == MODEL_TESTS {
        "tests the model wrote from the prompt, run on the answer in the sandbox"
    } else if measure == DUAL_AGREEMENT {
        "CodeT's dual agreement: samples and model-written tests, run in the sandbox"
    } else if measure == super::config::LENGTH_BASELINE {
        "the answer's length alone"
    } else {
        "the answer's token probabilities"
    }
}

fn is_reflective(measure: &str) -> bool {
    Measure::ALL.iter().any(|m| m.name() == measure) || measure.starts_with("ask-true")
}

/// The mean generated tokens per item that `measure` needs over `rows`
/// (generation rows with any agreement merged in): the main answer's, plus
/// the samples' for a measure over samples, the test reply's for one over
/// model-written tests, or the reply's for a reflective one. `None` where
/// an item does not record its count.
pub(crate) fn tokens_per_item(rows: &[&GenerationRow], measure: &str) -> Option<f64> {
    if rows.is_empty() {
        return None;
    }
    let sampled = CODE_MEASURES.contains(&measure)
        || SUMMARY_MEASURES.contains(&measure)
        || [SPEC_EXAMPLES_SAMPLES, DUAL_AGREEMENT].contains(&measure);
    let tests = [MODEL_TESTS, DUAL_AGREEMENT].contains(&measure);
    let reflective = is_reflective(measure);
    let reply = measure.trim_end_matches("-normalized");
    let mut total = 0u64;
    for row in rows {
        total += row.completion_tokens? as u64;
        if sampled {
            total += row.sample_tokens?;
        }
        if tests {
            // A problem whose prompt could not be made into a test prompt
            // asked for nothing.
            total += row
                .tests_reply
                .as_ref()
                .map_or(Some(0), |r| r.completion_tokens)? as u64;
        }
        if reflective {
            total += row.reflective.get(reply)?.reply_tokens? as u64;
        }
    }
    Some(total as f64 / rows.len() as f64)
}

/// The mean sandbox seconds per item that `measure`'s confidence took over
/// `rows`: what the rows record for it (the shown examples' runs), 0 for a
/// measure that runs nothing, and `None` for code agreement, whose probes'
/// time is not recorded, or where an item does not say.
pub(crate) fn sandbox_seconds_per_item(rows: &[&GenerationRow], measure: &str) -> Option<f64> {
    if rows.is_empty() || CODE_MEASURES.contains(&measure) {
        return None;
    }
    if !rows.iter().any(|r| r.sandbox_seconds.contains_key(measure)) {
        return Some(0.0);
    }
    let total: Option<f64> = rows
        .iter()
        .map(|r| r.sandbox_seconds.get(measure).copied())
        .sum();
    Some(total? / rows.len() as f64)
}

pub(crate) fn sources_table(key: &[&str], rows: &[SourceRow]) -> ReportTable {
    let table_rows = rows
        .iter()
        .map(|row| {
            let raw = &row.report.raw;
            let rescaled = row.report.rescaled.as_ref().map_or("-".to_owned(), |e| {
                with_ci(e.metrics.skill_score, e, "skill_score")
            });
            let mut cells = row.key.clone();
            cells.extend([
                raw.metrics.n.to_string(),
                with_ci(raw.metrics.auroc, raw, "auroc"),
                with_ci(raw.metrics.skill_score, raw, "skill_score"),
                rescaled,
                row.tokens_per_item
                    .map_or("-".to_owned(), |t| format!("{t:.1}")),
                row.sandbox_seconds_per_item
                    .map_or("-".to_owned(), |t| format!("{t:.2}")),
                source_of(row.measure).to_owned(),
            ]);
            cells
        })
        .collect();
    ReportTable {
        file: "sources".into(),
        title: "Confidence sources: every measure on the same items, with how well it ranks \
                (AUC), its Brier skill score raw and rescaled (out of fold), and its cost in \
                generated tokens per item (the answer's own, plus the samples an agreement \
                measure draws, the tests the model writes, or the reply a reflective one \
                asks for) and in sandbox seconds \
                per item (the prompt's examples run on the answer; '-' where not recorded)"
            .into(),
        header: header(
            key,
            &[
                "n",
                "AUC",
                "raw skill",
                "rescaled skill",
                "tokens per item",
                "sandbox s per item",
                "source",
            ],
        ),
        rows: table_rows,
    }
}
