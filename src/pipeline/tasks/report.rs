//! The last stage of a task run: calibrate every model x confidence measure
//! against the oracle's verdicts and write the sibling seeds' tables.
//!
//! Seed 000 ("Calibration and Correctness of Language Models for Code"):
//! Table 5, raw Brier / skill score / ECE per measure with the unskilled
//! predictor (the success rate itself) as each model's last row; Table 6,
//! the same after Platt scaling with k-fold cross-validation, ECE left out
//! where the rescaled skill score is below 0.05; Table 8, AUC per measure,
//! the unskilled row 0.5. Line completion is judged by exact match, so its
//! Tables 5 and 6 are seed 000's Table 7 notion and are titled so. "Open the
//! Oyster": its Eq. 5 ECE, Brier and Performance Score (Eqs. 7-8), raw and
//! rescaled with its Eq. 4 (Platt on p itself, `platt-p`). Every number
//! carries its bootstrap interval.
//!
//! Every measure of a model covers the same items: an item with no value
//! for a measure (no answer tokens, no reply to parse) counts with
//! confidence 0 and is counted in Table 8, as are the items sitting at
//! exactly 0 or 1, where a logit-space fit is driven by clipping.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::columns::{
    ASK_TRUE, ASK_TRUE_NORMALIZED, AnswerMeasures, Column, answer_token_measures,
    combination_column, measure_column,
};
use super::read_problems;
use super::turbulence;
use crate::artifact::{create_dir, write_atomic};
use crate::calibrate::BinSpec;
use crate::calibrate::calibrator::{Generator, LabelDefinition};
use crate::calibrate::combine::Combination;
use crate::calibrate::{
    CalibrateOptions, CalibrationData, CalibrationReport, Evaluation, Method, calibrate,
};
use crate::confidence::agreement::CODE_MEASURES;
use crate::confidence::length::LengthBaseline;
use crate::pipeline::PipelineError;
use crate::pipeline::artifacts::{read_jsonl, stage_error, text_field};
use crate::pipeline::calibration::{
    CellFiles, CellRow, calibrate_options, decision_table, generator, metrics_table,
    sample_size_note,
};
use crate::pipeline::config::{COMBINATION, RunConfig};
use crate::pipeline::multicalibration::{self, multicalibration_tables};
use crate::pipeline::run_report::{ReportParts, write_report};
use crate::pipeline::sampled::merge_agreement;
use crate::pipeline::sources::{SourceRow, sources_table, tokens_per_item};
use crate::pipeline::tables::write_all;
use crate::report::paper::oyster::oyster_tables;
use crate::report::paper::{MeasureResult, seed000};
use crate::report::run::ReportTable;
use crate::report::run::{CellView, ItemText, ItemView, Section};
use crate::report::table::header;
use crate::task::Problem;
use crate::task::datasets::Dataset;

/// One model x measure result.
struct Cell {
    model: String,
    measure: String,
    report: CalibrationReport,
    /// The same items rescaled with "Open the Oyster"'s Eq. 4.
    oyster: CalibrationReport,
    /// Items with no value for the measure, counted at confidence 0.
    missing: usize,
    /// Items whose confidence is exactly 0 or 1.
    extremes: usize,
    /// Generated tokens per item the measure needs.
    tokens_per_item: Option<f64>,
    view: CellView,
}

impl Cell {
    /// The cell as the papers' tables read it, with `report` (its own
    /// calibration or the Oyster's Eq. 4 one).
    fn result<'a>(&'a self, report: &'a CalibrationReport) -> MeasureResult<'a> {
        MeasureResult {
            model: &self.model,
            measure: &self.measure,
            report,
            missing: self.missing,
            extremes: self.extremes,
        }
    }
}

pub(crate) fn calibrate_and_report(
    config: &RunConfig,
    dataset: Dataset,
    dir: &Path,
    labels: &[String],
) -> Result<(), PipelineError> {
    let problems = read_problems(&dir.join("problems.jsonl"))?;
    let lengths: Vec<usize> = problems
        .iter()
        .map(|p| p.reference_answer.chars().count())
        .collect();
    let run = RunCells {
        config,
        dataset,
        dir,
        options: calibrate_options(config)?,
        measures: task_measures(config, dataset),
        baseline: LengthBaseline::fit(&lengths),
        // Cross-validation keeps a problem's group together: REval's
        // questions about one program share a fold.
        groups: problems
            .iter()
            .map(|p| (p.id.as_str(), p.group.as_deref().unwrap_or(&p.id)))
            .collect(),
        problems: &problems,
    };
    let mut gathered = Gathered::default();
    let mut turbulence = Turbulence::default();
    for label in labels {
        run.label_cells(label, &mut gathered, &mut turbulence)?;
    }
    let cells = &gathered.cells;
    let combination_notes: Vec<String> = labels
        .iter()
        .filter_map(|l| combination_note(cells, l))
        .collect();
    gathered.notes.extend(combination_notes);
    if dataset == Dataset::Turbulence {
        turbulence.report(dir, run.options.bins, &mut gathered)?;
    }
    write_tables(config, dataset, dir, gathered)
}

/// The measures to calibrate: the config's, Ask T/F normalised, the
/// agreement measures, the learned combination and Turbulence's
/// self-consistency where the run has them.
fn task_measures(config: &RunConfig, dataset: Dataset) -> Vec<String> {
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
    if config.generation.samples > 0 {
        measures.extend(CODE_MEASURES.iter().map(|m| m.to_string()));
    }
    if !config.calibration.combine.is_empty() {
        measures.push(COMBINATION.to_owned());
    }
    if dataset == Dataset::Turbulence && config.dataset.rounds > 1 {
        measures.push(turbulence::SELF_CONSISTENCY.to_owned());
    }
    measures
}

/// What every cell of the run is calibrated with.
struct RunCells<'a> {
    config: &'a RunConfig,
    dataset: Dataset,
    dir: &'a Path,
    options: CalibrateOptions,
    measures: Vec<String>,
    baseline: Option<LengthBaseline>,
    problems: &'a [Problem],
    /// Problem id -> its cross-validation group.
    groups: BTreeMap<&'a str, &'a str>,
}

/// One model's answers, read for its cells.
struct Answers<'a> {
    label: &'a str,
    generations: &'a [Value],
    answer_measures: Vec<Option<AnswerMeasures>>,
    generator: Generator,
    /// Its items' places in the report data's item list.
    item_indices: Vec<usize>,
}

/// Turbulence's answers and per-measure confidences, for its own tables.
#[derive(Default)]
struct Turbulence {
    models: Vec<(String, Vec<turbulence::Answer>)>,
    views: Vec<turbulence::MeasureView>,
}

impl RunCells<'_> {
    /// Every cell of one model, with its outcome row and item views.
    fn label_cells(
        &self,
        label: &str,
        out: &mut Gathered,
        turbulence: &mut Turbulence,
    ) -> Result<(), PipelineError> {
        let dir = self.dir;
        let mut generations = read_jsonl(&dir.join(format!("generations/{label}.jsonl")))?;
        merge_agreement(dir, label, &mut generations)?;
        let mut verdicts = read_jsonl(&dir.join(format!("verdicts/{label}.jsonl")))?;
        if self.dataset == Dataset::Turbulence {
            let answers = turbulence_answers(
                self.problems,
                &mut generations,
                &mut verdicts,
                &mut out.notes,
                label,
            );
            turbulence.models.push((label.to_owned(), answers));
        }
        let first_item = out.items.len();
        out.items
            .extend(item_views(label, self.problems, &generations, &verdicts));
        // A task's prompt wording is codecal's code for the task and style, so
        // the recipe, not a template file, is what the calibrator pins.
        let config = self.config;
        let recipe = format!(
            "task={};style={};codecal={}",
            config.task,
            config.prompt.style.clone().unwrap_or_default(),
            env!("CARGO_PKG_VERSION")
        );
        out.outcomes.push(outcome_row(label, &verdicts));
        // Read each row's tokens once, not once per measure.
        let first_k = config.generation.first_k;
        let answers = Answers {
            label,
            generator: generator(config, &generations, &recipe)?,
            answer_measures: generations
                .iter()
                .zip(&verdicts)
                .map(|(generation, verdict)| answer_token_measures(generation, verdict, first_k))
                .collect(),
            generations: &generations,
            item_indices: (first_item..out.items.len()).collect(),
        };
        let features = multicalibration::task_features(config, &generations, &verdicts)?;
        let mut seen: BTreeMap<String, CalibrationData> = BTreeMap::new();
        for measure in &self.measures {
            let (mut column, combination) = if measure == COMBINATION {
                match combination_column(&config.calibration.combine, &seen, &self.options) {
                    Ok((column, fit)) => (column, Some(fit)),
                    Err(e) => {
                        out.notes
                            .push(format!("{label} {COMBINATION}: not made ({e})"));
                        continue;
                    }
                }
            } else {
                let column = measure_column(
                    &generations,
                    &verdicts,
                    &answers.answer_measures,
                    measure,
                    self.baseline,
                    &self.groups,
                );
                (column, None)
            };
            seen.insert(measure.clone(), column.data.clone());
            column.data.features = features.clone();
            let cell = self.cell(&answers, measure, &column, combination, out, turbulence)?;
            out.cells.push(cell);
        }
        Ok(())
    }

    /// One cell: calibrated (raw where rescaling cannot be had), rescaled
    /// again with the Oyster's Eq. 4, and its files written.
    fn cell(
        &self,
        answers: &Answers,
        measure: &str,
        column: &Column,
        combination: Option<Combination>,
        out: &mut Gathered,
        turbulence: &mut Turbulence,
    ) -> Result<Cell, PipelineError> {
        let (label, notes) = (answers.label, &mut out.notes);
        let data = &column.data;
        let report = calibrate_or_raw(data, &self.options, notes, label, measure)?;
        let oyster = oyster_calibration(data, &self.options, &report, notes, label, measure)?;
        let dataset_name = format!("{:?}", self.dataset).to_lowercase();
        let files = CellFiles {
            parts: vec![&dataset_name, label, measure],
            measure,
            label: LabelDefinition {
                column: "the oracle's verdict (passed)".into(),
                ..LabelDefinition::default()
            },
            generator: Some(answers.generator.clone()),
        };
        let view = CellView::new(
            &["model", "measure"],
            vec![label.to_owned(), measure.to_owned()],
            files.calibration_dir(),
            &report,
            &data.confidence,
            &data.correct,
            &answers.item_indices,
        );
        files.write_with(self.dir, &report, combination)?;
        if self.dataset == Dataset::Turbulence {
            turbulence.views.push(turbulence::MeasureView {
                model: label.to_owned(),
                measure: measure.to_owned(),
                confidence: report
                    .out_of_fold_confidence
                    .iter()
                    .zip(&data.confidence)
                    .map(|(rescaled, raw)| rescaled.unwrap_or(*raw))
                    .collect(),
                rescaled: report.rescaled.is_some(),
                accept_cutoff: report
                    .cutoffs
                    .accept
                    .iter()
                    .filter_map(|c| c.cutoff)
                    .reduce(f64::max),
            });
        }
        let combine = &self.config.calibration.combine;
        Ok(Cell {
            model: label.to_owned(),
            measure: measure.to_owned(),
            tokens_per_item: cost(answers.generations, measure, combine),
            extremes: data
                .confidence
                .iter()
                .filter(|&&p| p == 0.0 || p == 1.0)
                .count(),
            missing: column.missing,
            report,
            oyster,
            view,
        })
    }
}

impl Turbulence {
    /// Turbulence's own tables (Tables I and II, classes, neighbourhood
    /// calibration) and its CorrSc histogram.
    fn report(&self, dir: &Path, bins: BinSpec, out: &mut Gathered) -> Result<(), PipelineError> {
        out.extra.extend(turbulence::paper_tables(&self.models));
        out.extra.extend(turbulence::calibration_tables(
            &self.models,
            &self.views,
            bins,
        ));
        let figure = "figures/turbulence_histogram.svg";
        create_dir(&dir.join("figures"))?;
        let svg = turbulence::histogram_svg(&self.models);
        write_atomic(&dir.join(figure), svg.as_bytes())?;
        out.sections.push(Section {
            heading: "Turbulence: the CorrSc histogram".into(),
            body: format!("Questions per CorrSc bin, a bar per model: [svg]({figure})"),
        });
        Ok(())
    }
}

/// What the calibration loop gathered for the tables.
#[derive(Default)]
struct Gathered {
    cells: Vec<Cell>,
    outcomes: Vec<Vec<String>>,
    notes: Vec<String>,
    items: Vec<ItemView>,
    /// Tables and figures of the dataset's own (Turbulence's).
    extra: Vec<ReportTable>,
    sections: Vec<Section>,
}

/// Turbulence: drops the answers whose oracle could not run here (with a
/// note naming how many), reads the rest with their instances, and adds
/// each answer's self-consistency across rounds to its confidences.
fn turbulence_answers(
    problems: &[Problem],
    generations: &mut Vec<Value>,
    verdicts: &mut Vec<Value>,
    notes: &mut Vec<String>,
    label: &str,
) -> Vec<turbulence::Answer> {
    let available: Vec<bool> = verdicts
        .iter()
        .map(|v| text_field(v, "reason") != "unavailable")
        .collect();
    let dropped = available.iter().filter(|a| !**a).count();
    if dropped > 0 {
        notes.push(format!(
            "{label}: {dropped} answers not judged: their oracle cannot run on this machine \
             (Q57 and Q58 need numpy in the sandbox's Python)"
        ));
    }
    let mut keep = available.iter();
    generations.retain(|_| *keep.next().unwrap_or(&true));
    let mut keep = available.iter();
    verdicts.retain(|_| *keep.next().unwrap_or(&true));
    let answers = turbulence::answers(problems, verdicts);
    let consistency = turbulence::self_consistency(&answers, verdicts);
    for (generation, value) in generations.iter_mut().zip(consistency) {
        if let Some(value) = value {
            generation["confidence"][turbulence::SELF_CONSISTENCY] = value.into();
        }
    }
    answers
}

/// Each answer as the report shows it: the problem, the reply, the answer
/// cut from it and the oracle's verdict with the sandbox's message.
fn item_views(
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

/// Generated tokens per item that `measure` needs: for the learned
/// combination, what its costliest measure needs.
fn cost(generations: &[Value], measure: &str, combine: &[String]) -> Option<f64> {
    let rows: Vec<&Value> = generations.iter().collect();
    if measure == COMBINATION {
        return combine
            .iter()
            .filter_map(|m| tokens_per_item(&rows, m))
            .reduce(f64::max);
    }
    tokens_per_item(&rows, measure)
}

/// The learned combination beside the best single measure of the same
/// model, both out of fold: the combination's own (it is out of fold before
/// any rescaling) and each measure's rescaled skill.
fn combination_note(cells: &[Cell], model: &str) -> Option<String> {
    let of_model = || cells.iter().filter(|c| c.model == model);
    let combined = of_model().find(|c| c.measure == COMBINATION)?;
    let skill = combined.report.raw.metrics.skill_score?;
    let best = of_model()
        .filter(|c| c.measure != COMBINATION)
        .filter_map(|c| Some((c, c.report.rescaled.as_ref()?.metrics.skill_score?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let auc = |e: &Evaluation| e.metrics.auroc.map_or("-".into(), |a| format!("{a:.3}"));
    Some(format!(
        "{model}: the learned {COMBINATION} has out-of-fold skill {skill:.3} (AUC {}); the \
         best single measure, {}, has rescaled out-of-fold skill {:.3} (AUC {})",
        auc(&combined.report.raw),
        best.0.measure,
        best.1,
        auc(&best.0.report.raw),
    ))
}

/// The cell rescaled with "Open the Oyster"'s Eq. 4 (Platt on p) as the
/// paper fits it, by plain maximum likelihood: no L2 penalty, which would
/// shrink the slope of a feature as small as a total probability (~1e-5)
/// to zero (issue "fidelity, third pass", item 4). Reuses the run's own
/// calibration where that already is an unpenalised `platt-p`.
fn oyster_calibration(
    data: &CalibrationData,
    options: &CalibrateOptions,
    report: &CalibrationReport,
    notes: &mut Vec<String>,
    label: &str,
    measure: &str,
) -> Result<CalibrationReport, PipelineError> {
    if options.method == Method::PlattP && !options.penalty {
        return Ok(report.clone());
    }
    let platt_p = CalibrateOptions {
        method: Method::PlattP,
        penalty: false,
        multicalibration: None,
        ..options.clone()
    };
    // Plain likelihood has no unique optimum for a confidence that does not
    // vary (or separates the classes): then the penalised fit, said so. (A
    // single-class cell's note comes from the cell's own calibration.)
    match calibrate(data, &platt_p) {
        Ok(report) => Ok(report),
        Err(e) => {
            notes.push(format!(
                "{label} {measure}: Eq. 4 without a penalty has no unique fit ({e}); the \
                 Oyster table uses scikit-learn's C = 1 for it"
            ));
            let penalised = CalibrateOptions {
                penalty: true,
                ..platt_p
            };
            calibrate_or_raw(
                data,
                &penalised,
                notes,
                label,
                &format!("{measure} (platt-p)"),
            )
        }
    }
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
        Ok(report) => {
            // Say why a table has no skill score or no rescaled row (e.g. a
            // model that got nothing right), once per model.
            for warning in report.warnings.iter().filter(|w| w.starts_with("all ")) {
                let note = format!("{label}: {warning}");
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
            Ok(report)
        }
        Err(e) => {
            notes.push(format!("{label} {measure}: not rescaled ({e})"));
            let raw_only = CalibrateOptions {
                method: Method::None,
                multicalibration: None,
                ..options.clone()
            };
            calibrate(data, &raw_only).map_err(stage_error)
        }
    }
}

/// Model, answers, correct, empty answers, and a count per verdict reason.
fn outcome_row(label: &str, verdicts: &[Value]) -> Vec<String> {
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

/// Each cell's row of the decision table, with its files' paths.
fn decision_rows(dataset: Dataset, cells: &[Cell]) -> Vec<CellRow<'_>> {
    let dataset_name = format!("{dataset:?}").to_lowercase();
    cells
        .iter()
        .map(|c| {
            let files = CellFiles {
                parts: vec![&dataset_name, &c.model, &c.measure],
                measure: &c.measure,
                label: LabelDefinition::default(),
                generator: None,
            };
            CellRow {
                key: vec![c.model.clone(), c.measure.clone()],
                report: &c.report,
                calibrator: files.calibrator_file(),
                figure: format!("{}/risk_coverage.svg", files.calibration_dir()),
            }
        })
        .collect()
}

fn write_tables(
    config: &RunConfig,
    dataset: Dataset,
    dir: &Path,
    gathered: Gathered,
) -> Result<(), PipelineError> {
    let Gathered {
        cells,
        outcomes,
        notes,
        items,
        extra,
        sections,
    } = gathered;
    let cells = &cells[..];
    let key = ["model", "measure"];
    let results: Vec<MeasureResult> = cells.iter().map(|c| c.result(&c.report)).collect();
    let oyster: Vec<MeasureResult> = cells.iter().map(|c| c.result(&c.oyster)).collect();
    let method = &config.calibration.method;
    let folds = format!(
        "{}-fold {}",
        config.calibration.folds, config.calibration.cv
    );
    // Line completion is judged by exact match: seed 000's Table 7 notion,
    // not the test-based Tables 5 and 6.
    let notion = match dataset {
        Dataset::LineCompletion => " (exact match, the notion of seed 000's Table 7)",
        _ => "",
    };
    let cell_rows = decision_rows(dataset, cells);
    let source_rows: Vec<SourceRow> = cells
        .iter()
        .map(|c| SourceRow {
            key: vec![c.model.clone(), c.measure.clone()],
            measure: &c.measure,
            report: &c.report,
            tokens_per_item: c.tokens_per_item,
        })
        .collect();
    let mut tables = vec![
        ReportTable {
            file: "outcomes".into(),
            title: "Verdicts per model".into(),
            header: header(&["model", "answers", "correct", "empty", "reasons"], &[]),
            rows: outcomes,
        },
        seed000::table5(&results, notion),
        seed000::table6(&results, notion, method, &folds),
        seed000::table8(&results, notion),
    ];
    tables.extend(oyster_tables(&oyster));
    tables.extend([
        sources_table(&key, &source_rows),
        metrics_table(&key, &cell_rows),
        decision_table(&key, &cell_rows),
    ]);
    let size = sample_size_note(&cell_rows);
    tables.extend(extra);
    tables.extend(multicalibration_tables(&key, &cell_rows));
    let intro = format!(
        "Task `{}` on `{dataset:?}`; correct means the oracle passed the answer. \
         Cross-validation folds never split one problem's answers. Intervals are 95% \
         percentile bootstrap ({} resamples) over whole problems (the folds' groups: a \
         REval program, a Turbulence neighbourhood), never single answers.\n\n{size}",
        config.task, config.calibration.bootstrap
    );
    let tables = write_all(dir, tables)?;
    let data = config
        .dataset
        .path
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let parts = ReportParts {
        intro,
        data,
        tables,
        notes,
        sections,
        items,
        cells: cells.iter().map(|c| c.view.clone()).collect(),
    };
    write_report(config, dir, parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::Rescaler;
    use crate::calibrate::metrics::tests::fixture;

    /// Eq. 4 is fitted without a penalty: scikit-learn's
    /// LogisticRegression(penalty=None) on p gives slope 2.70815 and
    /// intercept -1.60405 on the small fixture (`tests/sklearn_expected.py`),
    /// and on p / 10^5 (a total probability's scale) the slope scales by 10^5,
    /// where the default C = 1 would shrink it to nearly 0.
    #[test]
    fn the_oyster_table_fits_eq_4_without_a_penalty() {
        for scale in [1.0, 1e-5] {
            let f = fixture();
            let data = CalibrationData {
                confidence: f.confidence.iter().map(|p| p * scale).collect(),
                correct: f.correct,
                groups: Some(f.repo),
                target: None,
                features: Vec::new(),
            };
            let options = CalibrateOptions {
                bootstrap: 0,
                ..CalibrateOptions::default()
            };
            let report = calibrate(&data, &options).unwrap();
            let oyster =
                oyster_calibration(&data, &options, &report, &mut Vec::new(), "m", "p").unwrap();
            let Some(Rescaler::Logistic(fit)) = oyster.final_fit else {
                panic!("no logistic fit")
            };
            let slope = 2.7081472808551674 / scale;
            assert!(
                (fit.slope - slope).abs() <= 1e-6 * slope,
                "{} vs {slope}",
                fit.slope
            );
            assert!(
                (fit.intercept + 1.604047749613074).abs() <= 1e-6,
                "{}",
                fit.intercept
            );
        }
    }
}
