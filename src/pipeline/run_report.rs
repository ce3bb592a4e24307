//! The run's report data as both flows fill it: the header (what made the
//! run: config, models, data, hashes) and writing `report.json`,
//! `report.md` and `report.html` together. What the tables, items and cells
//! hold is each flow's.

use std::path::Path;

use super::PipelineError;
use super::artifacts::stage_error;
use super::config::RunConfig;
use crate::manifest::read_manifest;
use crate::models::installed_hashes;
use crate::report::run::{
    CellView, ItemView, REPORT_FORMAT, ReportTable, RunHeader, RunReport, Section, now_utc,
    write_run_report,
};

/// The files the calibrate stage writes for the reader, beside the tables.
pub(crate) const REPORT_FILES: [&str; 3] = ["report.md", "report.html", "report.json"];

/// What a flow puts in its report; the title and header are the run's.
pub(crate) struct ReportParts {
    pub intro: String,
    /// The corpus or dataset files the run read.
    pub data: Vec<String>,
    pub tables: Vec<ReportTable>,
    pub notes: Vec<String>,
    pub sections: Vec<Section>,
    pub items: Vec<ItemView>,
    pub cells: Vec<CellView>,
}

/// The header of a run in `dir` whose calibrate stage is writing its report:
/// the manifest then holds every earlier stage's input hash.
fn run_header(
    config: &RunConfig,
    dir: &Path,
    models: &[String],
    data: Vec<String>,
    items: usize,
) -> RunHeader {
    // Where the run is written is not what made it.
    let mut hashes = vec![("config".to_owned(), super::shard::config_hash(config))];
    if let Some(manifest) = read_manifest(&dir.join("manifest.json")) {
        hashes.extend(
            manifest
                .stages
                .iter()
                .filter(|(stage, _)| stage.as_str() != "calibrate")
                .map(|(stage, record)| (format!("stage {stage}"), record.input_hash.clone())),
        );
    }
    hashes.extend(installed_hashes());
    RunHeader {
        name: config.name.clone(),
        task: config.task.to_string(),
        models: models.to_vec(),
        data,
        items,
        created: now_utc(),
        codecal_version: env!("CARGO_PKG_VERSION").to_owned(),
        hashes,
    }
}

/// Writes the report data and both renderings into the run directory.
pub(crate) fn write_report(
    config: &RunConfig,
    dir: &Path,
    parts: ReportParts,
) -> Result<(), PipelineError> {
    let mut models: Vec<String> = Vec::new();
    for item in &parts.items {
        if !models.contains(&item.model) {
            models.push(item.model.clone());
        }
    }
    let report = RunReport {
        format: REPORT_FORMAT,
        title: format!("codecal run: {}", config.name),
        intro: parts.intro,
        header: run_header(config, dir, &models, parts.data, parts.items.len()),
        tables: parts.tables,
        notes: parts.notes,
        sections: parts.sections,
        items: parts.items,
        cells: parts.cells,
    };
    write_run_report(dir, &report).map_err(stage_error)
}
