//! The last stage of a task run: calibrate every model x confidence measure
//! against the oracle's verdicts and write the sibling seeds' tables.
//!
//! Seed 000 ("Quality and Trust in LLM-generated Code"): Table 5, raw
//! Brier / skill score / ECE per measure with the unskilled predictor (the
//! success rate itself) as the first row; Table 6, the same after Platt
//! scaling with k-fold cross-validation, ECE left out where the rescaled
//! skill score is below 0.05; Table 8, AUC per measure. "Open the Oyster":
//! its unbinned ECE, Brier and Performance Score, raw and rescaled. Every
//! number carries its bootstrap interval.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::read_problems;
use crate::artifact::write_atomic;
use crate::calibrate::{
    CalibrateOptions, CalibrationData, CalibrationReport, Evaluation, Method, calibrate,
};
use crate::confidence::length::LengthBaseline;
use crate::pipeline::PipelineError;
use crate::pipeline::artifacts::{read_jsonl, stage_error, text_field};
use crate::pipeline::calibration::calibrate_options;
use crate::pipeline::config::{LENGTH_BASELINE, RunConfig};
use crate::pipeline::tables::{Named, header, with_ci, write_all};
use crate::task::datasets::Dataset;

/// Below this rescaled skill score, seed 000 leaves the ECE out: the
/// rescaled confidences have collapsed towards the success rate.
const SKILL_FOR_ECE: f64 = 0.05;

const ASK_TRUE: &str = "ask-true";
/// P(True) / (P(True) + P(False)) of the `ask-true` measure, reported beside it.
const ASK_TRUE_NORMALIZED: &str = "ask-true-normalized";

/// One model x measure result.
struct Cell {
    model: String,
    measure: String,
    report: CalibrationReport,
}

pub(crate) fn calibrate_and_report(
    config: &RunConfig,
    dataset: Dataset,
    dir: &Path,
    labels: &[String],
) -> Result<(), PipelineError> {
    let options = calibrate_options(config)?;
    let problems = read_problems(&dir.join("problems.jsonl"))?;
    let lengths: Vec<usize> = problems
        .iter()
        .map(|p| p.reference_answer.chars().count())
        .collect();
    let baseline = LengthBaseline::fit(&lengths);
    let mut measures: Vec<String> = config
        .calibration
        .confidence
        .iter()
        .chain(&config.generation.reflective)
        .cloned()
        .collect();
    // Seed 000 reports Ask T/F both as P(True) and normalised by P(False).
    if measures.iter().any(|m| m == ASK_TRUE) {
        measures.push(ASK_TRUE_NORMALIZED.to_owned());
    }
    let mut cells = Vec::new();
    let mut notes = Vec::new();
    let mut outcomes = Vec::new();
    for label in labels {
        let generations = read_jsonl(&dir.join(format!("generations/{label}.jsonl")))?;
        let verdicts = read_jsonl(&dir.join(format!("verdicts/{label}.jsonl")))?;
        outcomes.push(outcome_row(label, &verdicts));
        for measure in &measures {
            let mut data = CalibrationData {
                confidence: Vec::new(),
                correct: Vec::new(),
                groups: Some(Vec::new()),
                target: None,
            };
            for (generation, verdict) in generations.iter().zip(&verdicts) {
                let answer_length = text_field(verdict, "answer").chars().count();
                let Some(confidence) = confidence_of(generation, measure, baseline, answer_length)
                else {
                    continue;
                };
                data.confidence.push(confidence);
                data.correct
                    .push(verdict["correct"].as_bool().unwrap_or(false));
                if let Some(groups) = data.groups.as_mut() {
                    groups.push(text_field(generation, "id"));
                }
            }
            if data.confidence.is_empty() {
                notes.push(format!("{label} {measure}: no generation has this measure"));
                continue;
            }
            let report = calibrate_or_raw(&data, &options, &mut notes, label, measure)?;
            let out = dir
                .join("calibration")
                .join(format!("{dataset:?}").to_lowercase())
                .join(label)
                .join(measure);
            crate::report::write_calibration_dir(&out, &report).map_err(stage_error)?;
            cells.push(Cell {
                model: label.clone(),
                measure: measure.to_string(),
                report,
            });
        }
    }
    write_report(config, dataset, dir, &cells, outcomes, &notes)
}

/// The confidence a generation row holds for `measure`, or the length
/// baseline's for its answer.
fn confidence_of(
    generation: &Value,
    measure: &str,
    baseline: Option<LengthBaseline>,
    answer_length: usize,
) -> Option<f64> {
    if measure == LENGTH_BASELINE {
        return baseline.map(|b| b.confidence(answer_length));
    }
    if measure == ASK_TRUE_NORMALIZED {
        return generation["reflective"][ASK_TRUE]["p_true_normalized"].as_f64();
    }
    generation["confidence"][measure]
        .as_f64()
        .or_else(|| generation["reflective"][measure]["confidence"].as_f64())
}

/// Rescaling needs both outcomes in every training fold; where it cannot
/// be had, the raw numbers still stand, with a note.
fn calibrate_or_raw(
    data: &CalibrationData,
    options: &CalibrateOptions,
    notes: &mut Vec<String>,
    label: &str,
    measure: &str,
) -> Result<CalibrationReport, PipelineError> {
    match calibrate(data, options) {
        Ok(report) => Ok(report),
        Err(e) => {
            notes.push(format!("{label} {measure}: not rescaled ({e})"));
            let raw_only = CalibrateOptions {
                method: Method::None,
                ..options.clone()
            };
            calibrate(data, &raw_only).map_err(stage_error)
        }
    }
}

/// Model, answers, correct, and a count per verdict reason.
fn outcome_row(label: &str, verdicts: &[Value]) -> Vec<String> {
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for verdict in verdicts {
        *reasons.entry(text_field(verdict, "reason")).or_default() += 1;
    }
    let correct = verdicts
        .iter()
        .filter(|v| v["correct"].as_bool() == Some(true))
        .count();
    let reasons: Vec<String> = reasons.iter().map(|(r, n)| format!("{r} {n}")).collect();
    vec![
        label.to_owned(),
        verdicts.len().to_string(),
        correct.to_string(),
        reasons.join(", "),
    ]
}

/// Brier, skill score and ECE, the ECE left out (seed 000's rule) where
/// `drop_ece` and the skill score is below 0.05.
fn seed_columns(evaluation: &Evaluation, drop_ece: bool) -> Vec<String> {
    let m = &evaluation.metrics;
    let unskilled = m.skill_score.is_none_or(|s| s < SKILL_FOR_ECE);
    let ece = if drop_ece && unskilled {
        "-".to_owned()
    } else {
        with_ci(Some(m.ece), evaluation, "ece")
    };
    vec![
        with_ci(Some(m.brier), evaluation, "brier"),
        with_ci(m.skill_score, evaluation, "skill_score"),
        ece,
    ]
}

fn oyster_columns(evaluation: &Evaluation) -> Vec<String> {
    let m = &evaluation.metrics;
    vec![
        with_ci(Some(m.oyster_ece), evaluation, "oyster_ece"),
        with_ci(Some(m.brier), evaluation, "brier"),
        with_ci(m.performance_score, evaluation, "performance_score"),
    ]
}

fn write_report(
    config: &RunConfig,
    dataset: Dataset,
    dir: &Path,
    cells: &[Cell],
    outcomes: Vec<Vec<String>>,
    notes: &[String],
) -> Result<(), PipelineError> {
    let key = ["model", "measure"];
    let seed_header = ["Brier", "skill score", "ECE"];
    let mut five = Vec::new();
    let mut previous_model = None;
    for c in cells {
        // Each model's block opens with the unskilled predictor: its
        // success rate, whose Brier score is the reference of the skill score.
        if previous_model != Some(&c.model) {
            let raw = &c.report.raw;
            five.push(vec![
                c.model.clone(),
                "unskilled".into(),
                with_ci(Some(raw.metrics.brier_ref), raw, "brier_ref"),
                "0".into(),
                "0".into(),
            ]);
            previous_model = Some(&c.model);
        }
        let mut row = vec![c.model.clone(), c.measure.clone()];
        row.extend(seed_columns(&c.report.raw, false));
        five.push(row);
    }
    let six = cells
        .iter()
        .filter_map(|c| {
            let rescaled = c.report.rescaled.as_ref()?;
            let mut row = vec![c.model.clone(), c.measure.clone()];
            row.extend(seed_columns(rescaled, true));
            Some(row)
        })
        .collect();
    let eight = cells
        .iter()
        .map(|c| {
            let raw = &c.report.raw;
            vec![
                c.model.clone(),
                c.measure.clone(),
                raw.metrics.n.to_string(),
                with_ci(Some(raw.metrics.base_rate), raw, "base_rate"),
                with_ci(raw.metrics.auroc, raw, "auroc"),
            ]
        })
        .collect();
    let mut oyster = Vec::new();
    for c in cells {
        let mut raw = vec![c.model.clone(), c.measure.clone(), "raw".into()];
        raw.extend(oyster_columns(&c.report.raw));
        oyster.push(raw);
        if let Some(rescaled) = &c.report.rescaled {
            let mut row = vec![c.model.clone(), c.measure.clone(), "rescaled".into()];
            row.extend(oyster_columns(rescaled));
            oyster.push(row);
        }
    }
    let method = &config.calibration.method;
    let folds = format!(
        "{}-fold {}",
        config.calibration.folds, config.calibration.cv
    );
    let tables = [
        Named {
            file: "outcomes",
            title: "Verdicts per model".into(),
            header: header(&["model", "answers", "correct", "reasons"], &[]),
            rows: outcomes,
        },
        Named {
            file: "table5",
            title: "Table 5 (seed 000): raw calibration".into(),
            header: header(&key, &seed_header),
            rows: five,
        },
        Named {
            file: "table6",
            title: format!(
                "Table 6 (seed 000): {method}-rescaled calibration, {folds} cross-validation \
                 (ECE left out where the skill score is below {SKILL_FOR_ECE})"
            ),
            header: header(&key, &seed_header),
            rows: six,
        },
        Named {
            file: "table8",
            title: "Table 8 (seed 000): AUC of each measure".into(),
            header: header(&key, &["n", "success rate", "AUC"]),
            rows: eight,
        },
        Named {
            file: "oyster",
            title: format!(
                "Open the Oyster: unbinned ECE, Brier and Performance Score, raw and {method}-rescaled"
            ),
            header: header(&["model", "measure", "confidence"], &["ECE", "Brier", "PS"]),
            rows: oyster,
        },
    ];
    let mut markdown = format!(
        "# codecal run: {}\n\nTask `{}` on `{dataset:?}`; correct means the oracle passed the \
         answer. Cross-validation folds never split one problem's answers. Intervals are 95% \
         percentile bootstrap ({} resamples).\n\n",
        config.name, config.task, config.calibration.bootstrap
    );
    markdown += &write_all(dir, &tables)?;
    if !notes.is_empty() {
        markdown += "## Notes\n\n";
        for note in notes {
            markdown += &format!("- {note}\n");
        }
    }
    write_atomic(&dir.join("report.md"), markdown.as_bytes())?;
    Ok(())
}
