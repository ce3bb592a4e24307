//! The last stage of `codecal run`: label each generation with the
//! thresholds, calibrate every language x model x measure x operating
//! point, and write the summarization seed's tables (Markdown, CSV, LaTeX)
//! and reliability diagrams.

use std::path::Path;

use super::cells::{self, Cell, Gathered, TABLE_ONE};
use crate::calibrate::calibrator::LabelDefinition;
use crate::pipeline::PipelineError;
use crate::pipeline::calibration::{
    CellRow, decision_table, metrics_table, sample_size_note, subgroup_table,
};
use crate::pipeline::cells::CellFiles;
use crate::pipeline::config::{CorpusSource, RunConfig};
use crate::pipeline::multicalibration::multicalibration_tables;
use crate::pipeline::run_report::{ReportParts, write_report};
use crate::pipeline::sources::{SourceRow, sources_table};
use crate::pipeline::tables::write_all;
use crate::report::paper::summarization::{self, SummaryResult};
use crate::report::run::ReportTable;
use crate::report::run::Section;
use crate::report::table::header;
use crate::report::toml_string;
use crate::thresholds::file::{ThresholdsSummary, read_summary};

/// Why Table I's InferSent column is empty.
const INFERSENT: &str = "InferSent-CS is not available: its encoder and GloVe vectors are not \
    distributed through a package registry, so codecal cannot install them";

pub(crate) fn calibrate_and_report(
    config: &RunConfig,
    dir: &Path,
    labels: &[String],
) -> Result<(), PipelineError> {
    let gathered = cells::gather(config, dir, labels)?;
    write_tables(config, dir, gathered)
}

/// The summarization seed's Tables I-VII.
fn paper_tables(
    config: &RunConfig,
    cells: &[Cell],
    first_point: &str,
    spearman: Vec<Vec<String>>,
    summary: Option<&ThresholdsSummary>,
) -> Vec<ReportTable> {
    let key = ["language", "model", "measure"];
    let one_columns: Vec<&str> = TABLE_ONE.iter().map(|(name, _)| *name).collect();
    let mut tables = vec![ReportTable {
        file: "table1".into(),
        title: format!(
            "Table I: Spearman's rho between confidence and each similarity metric (95% CI); \
             {INFERSENT}"
        ),
        header: header(&key, &one_columns),
        rows: spearman,
    }];
    tables.push(table_two(config, summary));
    let results: Vec<SummaryResult> = cells
        .iter()
        .map(|c| SummaryResult {
            language: &c.language,
            model: &c.model,
            measure: &c.measure,
            point: &c.point,
            reflective: c.reflective,
            report: &c.report,
        })
        .collect();
    let asap = config.prompt.asap;
    let folds = format!(
        "{}-fold {}",
        config.calibration.folds, config.calibration.cv
    );
    let others: Vec<&str> = config
        .scoring
        .operating_points
        .iter()
        .map(|p| p.section())
        .filter(|p| *p != first_point)
        .collect();
    tables.extend([
        summarization::table3(&results, first_point, asap),
        summarization::rescaled_table(
            &results,
            first_point,
            asap,
            &config.calibration.method.to_string(),
            &folds,
        ),
        summarization::table6(&results, first_point, &others),
        summarization::table7(&results, first_point),
    ]);
    tables
}

fn write_tables(config: &RunConfig, dir: &Path, gathered: Gathered) -> Result<(), PipelineError> {
    let Gathered {
        cells,
        subgroup_cells,
        spearman,
        notes,
        views: items,
    } = gathered;
    let cells = &cells[..];
    let metric = &config.scoring.metric;
    let first_point = config
        .scoring
        .operating_points
        .first()
        .map_or(String::new(), |p| p.section().to_owned());
    // Table II and the ROC section read the thresholds file; without one they say "-".
    let summary = read_summary(&config.scoring.thresholds).ok();
    let mut tables = paper_tables(config, cells, &first_point, spearman, summary.as_ref());
    let decision_rows: Vec<CellRow> = cells
        .iter()
        .map(|c| {
            let parts = vec![c.language.as_str(), &c.model, &c.measure, &c.point];
            let files = CellFiles {
                parts,
                measure: &c.measure,
                label: LabelDefinition::default(),
                generator: None,
            };
            CellRow {
                key: vec![
                    c.language.clone(),
                    c.model.clone(),
                    c.measure.clone(),
                    c.point.clone(),
                ],
                report: &c.report,
                calibrator: files.calibrator_file(),
                figure: format!("{}/risk_coverage.svg", files.calibration_dir()),
            }
        })
        .collect();
    let cell_key = ["language", "model", "measure", "operating point"];
    let source_rows: Vec<SourceRow> = cells
        .iter()
        .filter(|c| c.point == first_point)
        .map(|c| SourceRow {
            key: vec![
                c.language.clone(),
                c.model.clone(),
                c.measure.clone(),
                c.point.clone(),
            ],
            measure: &c.measure,
            report: &c.report,
            tokens_per_item: c.tokens_per_item,
            // Summaries run nothing in the sandbox.
            sandbox_seconds_per_item: Some(0.0),
        })
        .collect();
    tables.push(sources_table(&cell_key, &source_rows));
    tables.push(metrics_table(&cell_key, &decision_rows));
    tables.push(subgroup_table(
        &["language", "model", "measure"],
        subgroup_cells,
    ));
    tables.push(decision_table(&cell_key, &decision_rows, &[]));
    tables.extend(multicalibration_tables(&cell_key, &decision_rows));
    let intro = format!(
        "Correct means {metric} above the threshold of `{}`. Intervals are 95% percentile \
         bootstrap ({} resamples) over whole repositories, never single functions. ‡ marks bucket collapse (rescaled skill score below 0.05: \
         the rescaled ECE says little).\n\n{}",
        config.scoring.thresholds.display(),
        config.calibration.bootstrap,
        sample_size_note(&decision_rows, &[])
    );
    let tables = write_all(dir, tables)?;
    let parts = ReportParts {
        intro,
        data: corpus_files(config),
        tables,
        notes,
        sections: sections(metric, cells, summary.as_ref()),
        items,
        cells: cells.iter().map(|c| c.view.clone()).collect(),
    };
    write_report(config, dir, parts)
}

/// The report's sections: where the ROC figure comes from, and each cell's
/// reliability diagram.
fn sections(metric: &str, cells: &[Cell], summary: Option<&ThresholdsSummary>) -> Vec<Section> {
    // The metric's ROC depends on the human ratings, not on this run: the
    // command that chose the thresholds draws it.
    let roc = Section {
        heading: format!("Fig. 3: ROC of {metric} against the human ratings"),
        body: format!(
            "Drawn (roc.svg, roc.png) by the command that made the thresholds file, run from \
             the repository root: {}\n\n",
            summary
                .and_then(|s| s.command.as_deref())
                .map_or_else(|| "-".into(), toml_string)
        ),
    };
    let mut diagrams = String::new();
    for c in cells {
        let path = format!("{}/reliability.svg", c.view.figures);
        diagrams += &format!(
            "- {} {} {} at {}: [{path}]({path})\n",
            c.language, c.model, c.measure, c.point
        );
    }
    vec![
        roc,
        Section {
            heading: "Reliability diagrams".into(),
            body: diagrams,
        },
    ]
}

/// What the run's header names as its data: the CodeXGLUE files, or the
/// mined source and its directory.
fn corpus_files(config: &RunConfig) -> Vec<String> {
    let corpus = &config.corpus;
    match corpus.source {
        CorpusSource::Codexglue => corpus
            .paths
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        source => {
            let dir = corpus.dir.as_ref().map(|d| d.display().to_string());
            vec![
                format!("{source} {}", dir.unwrap_or_default())
                    .trim_end()
                    .to_owned(),
            ]
        }
    }
}

/// Table II: the AUC of the labelling metric against human ratings, as its
/// thresholds file records it ("-" for what the file leaves out).
fn table_two(config: &RunConfig, summary: Option<&ThresholdsSummary>) -> ReportTable {
    let auc = summary.and_then(|s| s.auc).map(|auc| format!("{auc:.6}"));
    let ci = summary
        .and_then(|s| s.auc_ci)
        .map(|[low, high]| format!("[{low:.6}, {high:.6}]"));
    ReportTable {
        file: "table2".into(),
        title: "Table II: AUC of the similarity metric against human ratings".into(),
        header: header(&["metric", "AUC", "95% CI", "thresholds file"], &[]),
        rows: vec![vec![
            config.scoring.metric.clone(),
            auc.unwrap_or_else(|| "-".into()),
            ci.unwrap_or_else(|| "-".into()),
            config.scoring.thresholds.display().to_string(),
        ]],
    }
}
