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

use super::cells::{self, Cell, Gathered};
use std::path::Path;

use crate::calibrate::calibrator::LabelDefinition;
use crate::pipeline::PipelineError;
use crate::pipeline::calibration::{CellRow, decision_table, metrics_table, sample_size_note};
use crate::pipeline::cells::CellFiles;
use crate::pipeline::config::RunConfig;
use crate::pipeline::multicalibration::multicalibration_tables;
use crate::pipeline::run_report::{ReportParts, write_report};
use crate::pipeline::sources::{SourceRow, sources_table};
use crate::pipeline::tables::write_all;
use crate::report::paper::oyster::oyster_tables;
use crate::report::paper::{MeasureResult, seed000};
use crate::report::run::ReportTable;
use crate::report::table::header;
use crate::task::datasets::Dataset;

pub(crate) fn calibrate_and_report(
    config: &RunConfig,
    dataset: Dataset,
    dir: &Path,
    labels: &[String],
) -> Result<(), PipelineError> {
    let gathered = cells::gather(config, dataset, dir, labels)?;
    write_tables(config, dataset, dir, gathered)
}

/// Each cell's row of the decision table, with its files' paths.
fn decision_rows(dataset: Dataset, cells: &[Cell]) -> Vec<CellRow<'_>> {
    let dataset_name = cells::dataset_dir(dataset);
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
        rules,
    } = gathered;
    let cells = &cells[..];
    let key = ["model", "measure"];
    let results: Vec<MeasureResult> = cells.iter().map(|c| c.result(&c.report)).collect();
    let oyster: Vec<MeasureResult> = cells.iter().map(|c| c.result(&c.oyster)).collect();
    let method = &config.calibration.method.to_string();
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
            sandbox_seconds_per_item: c.sandbox_seconds_per_item,
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
        decision_table(&key, &cell_rows, &rules),
    ]);
    let size = sample_size_note(&cell_rows, &rules);
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
