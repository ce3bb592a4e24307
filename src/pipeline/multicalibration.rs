//! What a run does for multicalibration: the group features it offers
//! (`[calibration] group_features`), from each item's plain facts: its
//! language, its repository (or problem), the lengths of its code and of the
//! model's answer (summary) in characters, and its code's cyclomatic
//! complexity and distinct identifiers (tree-sitter; 0 for a language
//! without a grammar here), and the cluster of its code's SentenceBERT
//! embedding (k-means, `CODE_CLUSTERS` clusters, seeded); and the run
//! report's multicalibration table.
//!
//! Not here: how groups are formed from them or corrected
//! (`calibrate::multical`).

use super::PipelineError;
use super::artifacts::failed;
use super::calibration::CellRow;
use super::config::RunConfig;
use super::embedding::sentence_embeddings;
use crate::calibrate::multical::diagnostics::WithInterval;
use crate::calibrate::multical::kmeans::kmeans;
use crate::calibrate::multical::{FeatureColumn, FeatureValues};
use crate::corpus::code_metrics::{CodeMetrics, code_metrics};
use crate::generate::row::GenerationRow;
use crate::models::ModelHome;
use crate::report::run::ReportTable;
use crate::report::table::{header, value_with_interval};
use crate::task::VerdictRow;

fn metrics(item: &ItemFacts) -> CodeMetrics {
    code_metrics(item.code, item.language).unwrap_or_default()
}

/// The names `[calibration] group_features` may list.
pub(crate) const GROUP_FEATURES: [&str; 7] = [
    "language",
    "repository",
    "code_length",
    "answer_length",
    "complexity",
    "identifiers",
    "code_cluster",
];

/// How many clusters the `code_cluster` feature makes.
pub(crate) const CODE_CLUSTERS: usize = 8;

/// Each code's cluster among [`CODE_CLUSTERS`] (k-means on the code's
/// all-MiniLM-L6-v2 sentence embedding, its first 256 word pieces, seeded by
/// `[calibration] seed`), where the run asks for `code_cluster`; empty
/// otherwise.
pub(crate) fn code_clusters(
    config: &RunConfig,
    codes: &[&str],
) -> Result<Vec<String>, PipelineError> {
    if !config
        .calibration
        .group_features
        .iter()
        .any(|f| f == "code_cluster")
    {
        return Ok(Vec::new());
    }
    let home = ModelHome::from_env().map_err(|e| failed("calibrate", e))?;
    let embeddings = sentence_embeddings(config, &home, codes, "calibrate")?;
    Ok(kmeans(&embeddings, CODE_CLUSTERS, config.calibration.seed)
        .into_iter()
        .map(|c| format!("cluster {} of {CODE_CLUSTERS}", c + 1))
        .collect())
}

/// What one item offers.
pub(crate) struct ItemFacts<'a> {
    pub language: &'a str,
    pub repository: &'a str,
    /// The code the metrics parse: a summarised function, or a problem's
    /// code completed by the answer.
    pub code: &'a str,
    pub code_chars: usize,
    pub answer_chars: usize,
    /// Its code's cluster (`code_clusters`), or empty.
    pub code_cluster: &'a str,
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
                "code_cluster" => text(|i| i.code_cluster),
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
    config: &RunConfig,
    generations: &[GenerationRow],
    verdicts: &[VerdictRow],
) -> Result<Vec<FeatureColumn>, PipelineError> {
    let names = &config.calibration.group_features;
    if names.is_empty() {
        return Ok(Vec::new());
    }
    // The code a group feature parses is the problem's code completed by the
    // answer: what a deployed item carries too.
    let facts: Vec<(String, String, String, usize, usize)> = generations
        .iter()
        .zip(verdicts)
        .map(|(generation, verdict)| {
            let code = generation.field("code").unwrap_or_default();
            let answer = &verdict.answer;
            let (code_chars, answer_chars) = (code.chars().count(), answer.chars().count());
            let completed = code.to_owned() + answer;
            (
                generation.field("language").unwrap_or_default().to_owned(),
                generation.field("repo").unwrap_or_default().to_owned(),
                completed,
                code_chars,
                answer_chars,
            )
        })
        .collect();
    let codes: Vec<&str> = facts.iter().map(|f| f.2.as_str()).collect();
    let clusters = code_clusters(config, &codes)?;
    let items: Vec<ItemFacts> = facts
        .iter()
        .enumerate()
        .map(
            |(i, (language, repository, code, code_chars, answer_chars))| ItemFacts {
                language,
                repository,
                code,
                code_chars: *code_chars,
                answer_chars: *answer_chars,
                code_cluster: clusters.get(i).map_or("", String::as_str),
            },
        )
        .collect();
    Ok(feature_columns(names, &items))
}

/// The multicalibration tables, where the cells were multicalibrated: the
/// summary (per cell, the worst group before and after, Brier skill and
/// multicalibration error), then every group of every cell.
pub(crate) fn multicalibration_tables(key: &[&str], rows: &[CellRow]) -> Vec<ReportTable> {
    multicalibration_table(key, rows)
        .into_iter()
        .chain(group_table(key, rows))
        .collect()
}

/// Each group of each multicalibrated cell: n, success rate, and ECE,
/// smooth ECE and Brier skill raw, after the base rescaler and after the
/// patches, out of fold.
fn group_table(key: &[&str], rows: &[CellRow]) -> Option<ReportTable> {
    let number = |v: f64| {
        if v.is_finite() {
            format!("{v:.3}")
        } else {
            "-".into()
        }
    };
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .filter_map(|row| Some((row, row.report.multicalibration.as_ref()?)))
        .flat_map(|(row, mc)| {
            mc.groups.iter().map(move |g| {
                let mut cells = row.key.clone();
                cells.extend([
                    g.group.clone(),
                    g.n.to_string(),
                    number(g.base_rate),
                    number(g.ece.raw),
                    number(g.ece.base),
                    number(g.ece.multicalibrated),
                    number(g.smooth_ece.base),
                    number(g.smooth_ece.multicalibrated),
                    number(g.skill_score.base),
                    number(g.skill_score.multicalibrated),
                ]);
                cells
            })
        })
        .collect();
    if table_rows.is_empty() {
        return None;
    }
    Some(ReportTable {
        file: "multicalibration_groups".into(),
        title: "Multicalibration by group, out of fold: each group's calibration raw, after the \
                base rescaler and after the group patches"
            .into(),
        header: header(
            key,
            &[
                "group",
                "n",
                "success rate",
                "ECE raw",
                "ECE base",
                "ECE multicalibrated",
                "smooth ECE base",
                "smooth ECE multicalibrated",
                "skill base",
                "skill multicalibrated",
            ],
        ),
        rows: table_rows,
    })
}

fn multicalibration_table(key: &[&str], rows: &[CellRow]) -> Option<ReportTable> {
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
                format!("{:.4}", mc.grouping_loss.base),
                format!("{:.4}", mc.grouping_loss.multicalibrated),
                mc.patches.to_string(),
            ]);
            Some(cells)
        })
        .collect();
    if table_rows.is_empty() {
        return None;
    }
    Some(ReportTable {
        file: "multicalibration".into(),
        title: "Multicalibration after the base rescaler (Hébert-Johnson et al. 2018), out of \
                fold: the worst group by the base rescaler's ECE, before and after, and Brier \
                skill, multicalibration error and grouping loss (Perez-Lebel et al.: the \
                miscalibration hidden inside one confidence level, estimated from the group \
                features) on every tested item (every group follows in the next table)"
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
                "grouping loss, base",
                "grouping loss, multicalibrated",
                "patches",
            ],
        ),
        rows: table_rows,
    })
}
