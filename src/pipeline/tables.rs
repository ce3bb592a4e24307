//! Writes a run's tables as files: each titled grid as `tables/<file>.csv`
//! and `.tex` (rendered by `report::table`), checked for ragged rows, and
//! handed on to the run's report data for `report.md` and `report.html`.
//! What goes in the tables is the flows' and `report`'s.

use std::path::Path;

use super::{ArtifactError, PipelineError};
use crate::artifact::{create_dir, write_atomic};
use crate::report::run::ReportTable;
use crate::report::table::{grid_csv, grid_latex};

/// Writes each table as `tables/<file>.csv` and `.tex` under `dir` and
/// returns them as the report data holds them.
pub(crate) fn write_all(
    dir: &Path,
    tables: Vec<ReportTable>,
) -> Result<Vec<ReportTable>, PipelineError> {
    create_dir(&dir.join("tables"))?;
    for table in &tables {
        // A row of another width would shift every later column.
        if let Some(row) = table.rows.iter().find(|r| r.len() != table.header.len()) {
            return Err(PipelineError::Artifact {
                path: dir.join(format!("tables/{}.csv", table.file)),
                source: ArtifactError::RowWidth {
                    cells: row.len(),
                    header: table.header.len(),
                    first: row.first().cloned().unwrap_or_default(),
                },
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
    Ok(tables)
}
