//! The calibration loop of a task run: reads each model's generations and
//! verdicts, calibrates every model x measure (raw, rescaled, and with the
//! Oyster's Eq. 4), writes each cell's calibration files and Turbulence's own
//! tables and figure, and gathers the cells, outcomes, notes and item views.
//! The tables themselves are built in `report`.

use super::items::{item_views, outcome_row};
use std::collections::BTreeMap;
use std::path::Path;

use super::columns::{
    ASK_TRUE, ASK_TRUE_NORMALIZED, AnswerMeasures, Column, answer_token_measures,
    combination_column, held_out_data, measure_column,
};
use super::oyster::oyster_calibration;
use super::read_problems;
use super::turbulence;
use crate::artifact::{create_dir, write_atomic};
use crate::calibrate::BinSpec;
use crate::calibrate::calibrator::{Generator, LabelDefinition};
use crate::calibrate::combine::{Combination, HeldOut};
use crate::calibrate::cutoffs::rule::FixedRule;
use crate::calibrate::{CalibrateOptions, CalibrationData, CalibrationReport, Evaluation};
use crate::confidence::agreement::CODE_MEASURES;
use crate::confidence::length::LengthBaseline;
use crate::generate::row::GenerationRow;
use crate::pipeline::PipelineError;
use crate::pipeline::artifacts::read_jsonl;
use crate::pipeline::calibration::RuleRow;
use crate::pipeline::cells::{
    CellFiles, CellKey, calibrate_options, calibrate_or_raw, generator, write_cell,
};
use crate::pipeline::config::{COMBINATION, RunConfig};
use crate::pipeline::multicalibration::{self};
use crate::pipeline::sampled::merge_agreement;
use crate::pipeline::sources::{sandbox_seconds_per_item, tokens_per_item};
use crate::report::paper::MeasureResult;
use crate::report::run::ReportTable;
use crate::report::run::{CellView, ItemView, Section};
use crate::task::Problem;
use crate::task::datasets::Dataset;
use crate::task::{Reason, VerdictRow};

/// One model x measure result.
pub(super) struct Cell {
    pub(super) model: String,
    pub(super) measure: String,
    pub(super) report: CalibrationReport,
    /// The same items rescaled with "Open the Oyster"'s Eq. 4.
    pub(super) oyster: CalibrationReport,
    /// Items with no value for the measure, counted at confidence 0.
    pub(super) missing: usize,
    /// Items whose confidence is exactly 0 or 1.
    pub(super) extremes: usize,
    /// Generated tokens per item the measure needs.
    pub(super) tokens_per_item: Option<f64>,
    /// Sandbox seconds per item its confidence took.
    pub(super) sandbox_seconds_per_item: Option<f64>,
    pub(super) view: CellView,
}

impl Cell {
    /// The cell as the papers' tables read it, with `report` (its own
    /// calibration or the Oyster's Eq. 4 one).
    pub(super) fn result<'a>(&'a self, report: &'a CalibrationReport) -> MeasureResult<'a> {
        MeasureResult {
            model: &self.model,
            measure: &self.measure,
            report,
            missing: self.missing,
            extremes: self.extremes,
        }
    }
}

/// Calibrates every model x measure (each cell's files written, and
/// Turbulence's own tables and figure) and gathers what the tables need.
pub(super) fn gather(
    config: &RunConfig,
    dataset: Dataset,
    dir: &Path,
    labels: &[String],
) -> Result<Gathered, PipelineError> {
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
    Ok(gathered)
}

/// The measures to calibrate: the config's, Ask T/F normalised, the
/// agreement measures, the learned combination and Turbulence's
/// self-consistency where the run has them.
fn task_measures(config: &RunConfig, dataset: Dataset) -> Vec<String> {
    let mut measures: Vec<String> = config
        .calibration
        .confidence
        .iter()
        .cloned()
        .chain(
            config
                .generation
                .reflective
                .iter()
                .map(|m| m.name().to_owned()),
        )
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
    generations: &'a [GenerationRow],
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
        let mut generations: Vec<GenerationRow> =
            read_jsonl(&dir.join(format!("generations/{label}.jsonl")))?;
        merge_agreement(dir, label, &mut generations)?;
        super::examples::merge_examples(dir, label, &mut generations)?;
        let mut verdicts: Vec<VerdictRow> =
            read_jsonl(&dir.join(format!("verdicts/{label}.jsonl")))?;
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
            config
                .prompt
                .style
                .map(|s| s.to_string())
                .unwrap_or_default(),
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
        let mut combination_fit: Option<Combination> = None;
        for measure in &self.measures {
            let (mut column, held) = if measure == COMBINATION {
                match combination_column(&config.calibration.combine, &seen, &self.options) {
                    Ok((column, held)) => (column, Some(held)),
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
            // A rule on the combination is tested where its cutoffs are:
            // on the held-out items, scored by the deployed fit.
            let tested = match &held {
                Some(held) => held_out_data(&column.data, held),
                None => column.data.clone(),
            };
            column.data.features = features.clone();
            if let Some(held) = &held {
                combination_fit = Some(held.fit.clone());
            }
            let held = held.as_ref().map(|h| (h, &tested));
            let cell = self.cell(&answers, measure, &column, held, out, turbulence)?;
            out.cells.push(cell);
            seen.insert(measure.clone(), tested);
        }
        for rule in &config.calibration.rules {
            let row = self.rule_row(&answers, rule, &seen, combination_fit.clone(), out)?;
            out.rules.extend(row);
        }
        Ok(())
    }

    /// A fixed rule's tests at every target on the raw values of its
    /// measure, and its calibrator: the measure's cell with the rule's
    /// cutoffs, so `apply` decides with exactly the tested rule. `None`
    /// (with a note) where the measure was not calibrated.
    fn rule_row(
        &self,
        answers: &Answers,
        rule: &FixedRule,
        seen: &BTreeMap<String, CalibrationData>,
        combination: Option<Combination>,
        out: &mut Gathered,
    ) -> Result<Option<RuleRow>, PipelineError> {
        let label = answers.label;
        let cell = out
            .cells
            .iter()
            .find(|c| c.model == label && c.measure == rule.measure);
        let (Some(data), Some(cell)) = (seen.get(&rule.measure), cell) else {
            out.notes.push(format!(
                "{label} rule {}: not tested ({} was not calibrated)",
                rule.name, rule.measure
            ));
            return Ok(None);
        };
        let params = &self.options.cutoffs;
        let tests = rule.tests(params, &data.confidence, &data.correct);
        let mut report = cell.report.clone();
        report.cutoffs = rule.cutoffs(params, &tests);
        report.cutoffs_on = "raw";
        let dataset_name = dataset_dir(self.dataset);
        let part = format!("rule-{}", rule.name);
        let files = cell_files(&dataset_name, answers, &part, &rule.measure);
        let calibrator = files.calibrator_file();
        files.write(self.dir, &report, combination)?;
        Ok(Some(RuleRow {
            key: vec![label.to_owned(), format!("rule {}", rule.name)],
            rule: rule.clone(),
            tests,
            calibrator,
        }))
    }

    /// One cell: calibrated (raw where rescaling cannot be had), rescaled
    /// again with the Oyster's Eq. 4, and its files written. A learned
    /// combination's cutoffs are tested on its held-out items (`held`: the
    /// fit and those items, as `held_out_data` gives them) with the fit it
    /// deploys, so `apply` with its calibrator accepts on those items
    /// exactly what was tested.
    fn cell(
        &self,
        answers: &Answers,
        measure: &str,
        column: &Column,
        held: Option<(&HeldOut, &CalibrationData)>,
        out: &mut Gathered,
        turbulence: &mut Turbulence,
    ) -> Result<Cell, PipelineError> {
        let (label, notes) = (answers.label, &mut out.notes);
        let data = &column.data;
        // A learned combination is already a probability fitted out of fold;
        // a rescaler fitted again in the same folds would learn from values
        // whose fits saw the test fold's labels, so it gets none.
        let not_rescaled = CalibrateOptions {
            method: crate::calibrate::Method::None,
            multicalibration: None,
            ..self.options.clone()
        };
        let options = if held.is_some() {
            let note = format!(
                "{label}: the learned {COMBINATION} is not rescaled again (it is a logistic \
                 regression fitted out of fold; a rescaler in the same folds would learn from \
                 fits that saw the test fold's labels), so Table 6 and the Oyster's Eq. 4 have \
                 no row for it"
            );
            notes.push(note);
            &not_rescaled
        } else {
            &self.options
        };
        let mut report =
            calibrate_or_raw(data, options, notes, label, &format!("{label} {measure}"))?;
        if let Some((held, tested)) = held {
            report
                .test_on_held_out(
                    &held.tested,
                    &tested.confidence,
                    &tested.correct,
                    &self.options,
                )
                .map_err(|e| crate::pipeline::artifacts::failed("calibrate", e))?;
        }
        let combination = held.map(|(h, _)| h.fit.clone());
        let oyster = if held.is_some() {
            report.clone()
        } else {
            oyster_calibration(data, &self.options, &report, notes, label, measure)?
        };
        let dataset_name = dataset_dir(self.dataset);
        let files = cell_files(&dataset_name, answers, measure, measure);
        let key = CellKey {
            names: &["model", "measure"],
            values: vec![label.to_owned(), measure.to_owned()],
        };
        let view = write_cell(
            self.dir,
            files,
            key,
            &report,
            data,
            &answers.item_indices,
            combination,
        )?;
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
            tokens_per_item: cost(answers.generations, measure, combine, tokens_per_item),
            sandbox_seconds_per_item: cost(
                answers.generations,
                measure,
                combine,
                sandbox_seconds_per_item,
            ),
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

/// The dataset's folder under `calibration/` and `calibrators/`, which the
/// report's links name too.
pub(super) fn dataset_dir(dataset: Dataset) -> String {
    format!("{dataset:?}").to_lowercase()
}

/// A task cell's files: under `<dataset>/<model>/<part>`, labelled by the
/// oracle's verdict, with the model's generator.
fn cell_files<'a>(
    dataset_name: &'a str,
    answers: &'a Answers,
    part: &'a str,
    measure: &'a str,
) -> CellFiles<'a> {
    CellFiles {
        parts: vec![dataset_name, answers.label, part],
        measure,
        label: LabelDefinition {
            column: "the oracle's verdict (passed)".into(),
            ..LabelDefinition::default()
        },
        generator: Some(answers.generator.clone()),
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
pub(super) struct Gathered {
    pub(super) cells: Vec<Cell>,
    pub(super) outcomes: Vec<Vec<String>>,
    pub(super) notes: Vec<String>,
    pub(super) items: Vec<ItemView>,
    /// Tables and figures of the dataset's own (Turbulence's).
    pub(super) extra: Vec<ReportTable>,
    /// The fixed rules' tests, per model.
    pub(super) rules: Vec<RuleRow>,
    pub(super) sections: Vec<Section>,
}

/// Turbulence: drops the answers whose oracle could not run here (with a
/// note naming how many), reads the rest with their instances, and adds
/// each answer's self-consistency across rounds to its confidences.
fn turbulence_answers(
    problems: &[Problem],
    generations: &mut Vec<GenerationRow>,
    verdicts: &mut Vec<VerdictRow>,
    notes: &mut Vec<String>,
    label: &str,
) -> Vec<turbulence::Answer> {
    let available: Vec<bool> = verdicts
        .iter()
        .map(|v| v.verdict.reason != Reason::Unavailable)
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
            generation
                .confidence
                .insert(turbulence::SELF_CONSISTENCY.to_owned(), Some(value));
        }
    }
    answers
}

/// What `measure` costs per item by `per_item` (tokens or sandbox seconds):
/// for the learned combination, what its costliest measure costs.
fn cost(
    generations: &[GenerationRow],
    measure: &str,
    combine: &[String],
    per_item: fn(&[&GenerationRow], &str) -> Option<f64>,
) -> Option<f64> {
    let rows: Vec<&GenerationRow> = generations.iter().collect();
    if measure == COMBINATION {
        return combine
            .iter()
            .filter_map(|m| per_item(&rows, m))
            .reduce(f64::max);
    }
    per_item(&rows, measure)
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
