//! Tables as `codecal run` writes them: a titled grid of cells written as
//! CSV and LaTeX by `report::table` (and handed to the run's report data for `report.md` and
//! `report.html`), and the cell format of a number with its bootstrap
//! interval. Shared by the summarization report and the task
//! report; what goes in the tables is theirs.

use std::path::Path;

use super::PipelineError;
use crate::artifact::{create_dir, write_atomic};
use crate::calibrate::Evaluation;
use crate::report::run::ReportTable;
use crate::report::table::{grid_csv, grid_latex};

/// "0.123 [0.100, 0.150]", or "-" where there is no value.
pub(crate) fn with_ci(value: Option<f64>, evaluation: &Evaluation, name: &str) -> String {
    let Some(value) = value.filter(|v| v.is_finite()) else {
        return "-".into();
    };
    value_with_interval(value, evaluation.ci.get(name).copied().flatten())
}

/// "0.123 [0.100, 0.150]", or the value alone without an interval.
pub(crate) fn value_with_interval(value: f64, ci: Option<[f64; 2]>) -> String {
    match ci {
        Some([low, high]) => format!("{value:.3} [{low:.3}, {high:.3}]"),
        None => format!("{value:.3}"),
    }
}

/// A titled table.
pub(crate) struct Named {
    pub file: &'static str,
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

pub(crate) fn header(first: &[&str], rest: &[&str]) -> Vec<String> {
    first.iter().chain(rest).map(|s| s.to_string()).collect()
}

/// Writes each table as `tables/<file>.csv` and `.tex` under `dir` and
/// returns them as the report data holds them.
pub(crate) fn write_all(dir: &Path, tables: &[Named]) -> Result<Vec<ReportTable>, PipelineError> {
    create_dir(&dir.join("tables"))?;
    for table in tables {
        // A row of another width would shift every later column.
        if let Some(row) = table.rows.iter().find(|r| r.len() != table.header.len()) {
            return Err(PipelineError::Artifact {
                path: dir.join(format!("tables/{}.csv", table.file)),
                message: format!(
                    "a row of {} cells under a header of {} ({:?})",
                    row.len(),
                    table.header.len(),
                    row.first()
                ),
            });
        }
        write_atomic(
            &dir.join(format!("tables/{}.csv", table.file)),
            grid_csv(&table.header, &table.rows).as_bytes(),
        )?;
        write_atomic(
            &dir.join(format!("tables/{}.tex", table.file)),
            grid_latex(&table.title, &table.header, &table.rows).as_bytes(),
        )?;
    }
    Ok(tables
        .iter()
        .map(|t| ReportTable {
            file: t.file.to_owned(),
            title: t.title.clone(),
            header: t.header.clone(),
            rows: t.rows.clone(),
        })
        .collect())
}
