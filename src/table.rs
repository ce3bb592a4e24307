//! Reads CSV and JSONL files into named text cells that remember their line.
//!
//! Every stage that takes a user's file (calibrate, score, thresholds) reads it
//! here, so every error about a cell names the file, the line and the column in
//! the same words. This module does not interpret values beyond text and
//! numbers: what a valid confidence or label is belongs to the stage.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// The file layouts codecal reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values with a header row.
    Csv,
    /// One JSON object per line.
    Jsonl,
}

crate::choices!(Format { Csv => "csv", Jsonl => "jsonl" });

impl Format {
    /// The format a file's extension implies (`.csv`, `.jsonl`, `.json`, `.ndjson`).
    pub fn from_extension(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "csv" => Some(Format::Csv),
            "jsonl" | "ndjson" | "json" => Some(Format::Jsonl),
            _ => None,
        }
    }
}

/// Where a cell came from: file, 1-based line and column name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub path: PathBuf,
    pub line: u64,
    pub column: String,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: column '{}'",
            self.path.display(),
            self.line,
            self.column
        )
    }
}

/// Errors from reading a table or one of its cells.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: cannot tell the format from the extension; pass --format csv|jsonl")]
    UnknownFormat { path: PathBuf },
    #[error("{path}:{line}: the text is not valid UTF-8")]
    NotUtf8 { path: PathBuf, line: u64 },
    #[error("{path}: the file has no data rows")]
    Empty { path: PathBuf },
    #[error("{path}:{line}: {message}")]
    Malformed {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error("{path}: no column '{column}' (columns: {available})")]
    MissingColumn {
        path: PathBuf,
        column: String,
        available: String,
    },
    #[error("{at}: value is missing")]
    MissingValue { at: Location },
    #[error("{at}: '{value}' is not a number")]
    NotANumber { at: Location, value: String },
}

/// A table read from one file: column names, and per column its cells' text.
///
/// Cells are stored column by column in one text buffer each, so reading a
/// million rows allocates per column, not per cell.
#[derive(Debug)]
pub struct Table {
    path: PathBuf,
    columns: Vec<String>,
    cells: Vec<ColumnCells>,
    /// The 1-based line each row started on.
    lines: Vec<u64>,
}

/// The cells of one column: text back to back, where each cell ends, and
/// whether it was present at all (a JSON null or absent key is not).
#[derive(Debug, Default)]
struct ColumnCells {
    text: String,
    ends: Vec<usize>,
    present: Vec<bool>,
}

impl ColumnCells {
    fn push(&mut self, cell: Option<&str>) {
        self.text.push_str(cell.unwrap_or(""));
        self.ends.push(self.text.len());
        self.present.push(cell.is_some());
    }

    fn get(&self, row: usize) -> Option<&str> {
        let start = if row == 0 { 0 } else { self.ends[row - 1] };
        self.present[row].then(|| &self.text[start..self.ends[row]])
    }
}

impl Table {
    /// Reads `path` as `format`, or by its extension when `format` is `None`.
    pub fn read(path: &Path, format: Option<Format>) -> Result<Table, TableError> {
        let format = match format.or_else(|| Format::from_extension(path)) {
            Some(format) => format,
            None => {
                return Err(TableError::UnknownFormat {
                    path: path.to_owned(),
                });
            }
        };
        let bytes = crate::artifact::read_regular(path, crate::artifact::TABLE_CAP_BYTES).map_err(
            |source| TableError::Io {
                path: path.to_owned(),
                source,
            },
        )?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            TableError::NotUtf8 {
                path: path.to_owned(),
                line: valid.iter().filter(|&&b| b == b'\n').count() as u64 + 1,
            }
        })?;
        let table = match format {
            Format::Csv => parse_csv(path, &text)?,
            Format::Jsonl => parse_jsonl(path, &text)?,
        };
        if table.lines.is_empty() {
            return Err(TableError::Empty {
                path: path.to_owned(),
            });
        }
        Ok(table)
    }

    /// The column names, in file order.
    pub fn column_names(&self) -> &[String] {
        &self.columns
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The column called `name`, or an error listing the columns there are.
    pub fn column(&self, name: &str) -> Result<Column<'_>, TableError> {
        match self.columns.iter().position(|c| c == name) {
            Some(index) => Ok(Column {
                table: self,
                cells: &self.cells[index],
                name: name.to_owned(),
            }),
            None => Err(TableError::MissingColumn {
                path: self.path.clone(),
                column: name.to_owned(),
                available: self.columns.join(", "),
            }),
        }
    }
}

/// One named column of a [`Table`], read cell by cell.
#[derive(Debug)]
pub struct Column<'t> {
    table: &'t Table,
    cells: &'t ColumnCells,
    name: String,
}

impl Column<'_> {
    /// The location of row `row`'s cell in this column.
    pub fn location(&self, row: usize) -> Location {
        Location {
            path: self.table.path.clone(),
            line: self.table.lines[row],
            column: self.name.clone(),
        }
    }

    /// The trimmed text of row `row`'s cell; an error when it is empty or absent.
    pub fn text(&self, row: usize) -> Result<&str, TableError> {
        match self.cells.get(row).map(str::trim) {
            Some(text) if !text.is_empty() => Ok(text),
            _ => Err(TableError::MissingValue {
                at: self.location(row),
            }),
        }
    }

    /// Every row's trimmed text, in order; the first empty or absent cell
    /// is an error naming its line.
    pub fn texts(&self) -> Result<Vec<String>, TableError> {
        (0..self.table.len())
            .map(|row| self.text(row).map(str::to_owned))
            .collect()
    }

    /// Row `row`'s cell byte for byte, whitespace kept (code, prompts,
    /// answers); `None` when the row has no such cell.
    pub fn raw(&self, row: usize) -> Option<&str> {
        self.cells.get(row)
    }

    /// Row `row`'s cell as a number. `NaN` parses, so that the stage can name it.
    pub fn number(&self, row: usize) -> Result<f64, TableError> {
        let text = self.text(row)?;
        text.parse::<f64>().map_err(|_| TableError::NotANumber {
            at: self.location(row),
            value: text.to_owned(),
        })
    }
}

fn parse_csv(path: &Path, text: &str) -> Result<Table, TableError> {
    let malformed = |line: u64, message: String| TableError::Malformed {
        path: path.to_owned(),
        line,
        message,
    };
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let columns: Vec<String> = reader
        .headers()
        .map_err(|e| malformed(1, e.to_string()))?
        .iter()
        .map(|h| h.trim().to_owned())
        .collect();
    if let Some(duplicate) = columns
        .iter()
        .enumerate()
        .find_map(|(i, c)| columns[..i].contains(c).then_some(c))
    {
        return Err(malformed(
            1,
            format!("column {duplicate:?} appears twice in the header"),
        ));
    }
    // The line a record starts on, counted from its byte offset: the csv
    // crate's own count is one short for CRLF files. Records come in order,
    // so the count goes on from the last record's offset (linear, not
    // quadratic, in the file's size).
    let mut counter = LineCounter::default();
    let mut line_at = |position: Option<&csv::Position>| {
        position.map_or(0, |p| counter.line_at(text.as_bytes(), p.byte() as usize))
    };
    let mut cells: Vec<ColumnCells> = columns.iter().map(|_| ColumnCells::default()).collect();
    let mut lines = Vec::new();
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                return Err(malformed(line_at(e.position()), e.to_string()));
            }
        }
        let line = line_at(record.position());
        if record.len() != columns.len() {
            let message = format!(
                "{} fields where the header has {}",
                record.len(),
                columns.len()
            );
            return Err(malformed(line, message));
        }
        for (column, field) in cells.iter_mut().zip(record.iter()) {
            column.push(Some(field));
        }
        lines.push(line);
    }
    Ok(Table {
        path: path.to_owned(),
        columns,
        cells,
        lines,
    })
}

/// Newlines counted up to a byte offset, carried on from the last offset.
#[derive(Default)]
struct LineCounter {
    scanned: usize,
    newlines: u64,
}

impl LineCounter {
    /// The 1-based line of the record that starts at byte `offset`.
    fn line_at(&mut self, bytes: &[u8], offset: usize) -> u64 {
        let mut start = offset.min(bytes.len());
        // With CRLF the crate ends a record at `\r` and starts the next one
        // at the `\n` that follows.
        while start < bytes.len() && matches!(bytes[start], b'\r' | b'\n') {
            start += 1;
        }
        if start < self.scanned {
            *self = LineCounter::default();
        }
        self.newlines += bytes[self.scanned..start]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u64;
        self.scanned = start;
        self.newlines + 1
    }
}

fn parse_jsonl(path: &Path, text: &str) -> Result<Table, TableError> {
    let mut columns: Vec<String> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut cells: Vec<ColumnCells> = Vec::new();
    let mut lines = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line_number = number as u64 + 1;
        if line.trim().is_empty() {
            continue;
        }
        let malformed = |message: String| TableError::Malformed {
            path: path.to_owned(),
            line: line_number,
            message,
        };
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| malformed(format!("not valid JSON: {e}")))?;
        let serde_json::Value::Object(object) = value else {
            return Err(malformed("expected a JSON object".to_owned()));
        };
        let mut row: Vec<Option<String>> = vec![None; columns.len()];
        for (key, value) in object {
            let slot = *index.entry(key.clone()).or_insert_with(|| {
                columns.push(key);
                // A column first seen now was absent from every earlier row.
                let mut new = ColumnCells::default();
                (0..lines.len()).for_each(|_| new.push(None));
                cells.push(new);
                columns.len() - 1
            });
            if slot >= row.len() {
                row.resize(slot + 1, None);
            }
            row[slot] = json_cell(&value);
        }
        row.resize(columns.len(), None);
        for (column, cell) in cells.iter_mut().zip(&row) {
            column.push(cell.as_deref());
        }
        lines.push(line_number);
    }
    Ok(Table {
        path: path.to_owned(),
        columns,
        cells,
        lines,
    })
}

/// The text a JSON value stands for in a cell; `null` is an absent cell.
fn json_cell(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::Null => None,
        serde_json::Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn csv_cells_remember_their_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "a.csv", "p,y\n0.5,1\n\"0.25\",0\n");
        let table = Table::read(&path, None).unwrap();
        let p = table.column("p").unwrap();
        assert_eq!(p.number(1).unwrap(), 0.25);
        assert_eq!(p.location(1).line, 3);
    }

    #[test]
    fn jsonl_reads_numbers_bools_and_nulls() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            &dir,
            "a.jsonl",
            "{\"p\": 0.5, \"y\": true}\n\n{\"p\": null, \"y\": false}\n",
        );
        let table = Table::read(&path, None).unwrap();
        assert_eq!(table.column("y").unwrap().text(0).unwrap(), "true");
        let err = table.column("p").unwrap().number(1).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("{}:3: column 'p': value is missing", path.display())
        );
    }

    #[test]
    fn missing_column_lists_the_columns() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "a.csv", "p,y\n0.5,1\n");
        let err = Table::read(&path, None)
            .unwrap()
            .column("conf")
            .unwrap_err();
        assert!(matches!(err, TableError::MissingColumn { .. }));
        assert!(
            err.to_string()
                .ends_with("no column 'conf' (columns: p, y)")
        );
    }

    #[test]
    fn jsonl_columns_first_seen_later_are_absent_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "a.jsonl", "{\"p\": 0.5}\n{\"p\": 0.4, \"y\": 1}\n");
        let table = Table::read(&path, None).unwrap();
        let y = table.column("y").unwrap();
        assert!(matches!(y.text(0), Err(TableError::MissingValue { .. })));
        assert_eq!(y.number(1).unwrap(), 1.0);
    }

    #[test]
    fn invalid_utf8_names_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.csv");
        std::fs::write(&path, b"p,y\n0.5,1\n0.4,\xff\n").unwrap();
        let err = Table::read(&path, None).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("a.csv:3: the text is not valid UTF-8"),
            "{err}"
        );
    }

    #[test]
    fn header_only_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "a.csv", "p,y\n");
        assert!(matches!(
            Table::read(&path, None),
            Err(TableError::Empty { .. })
        ));
    }

    #[test]
    fn ragged_csv_row_names_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "a.csv", "p,y\n0.5,1\n0.4\n");
        let err = Table::read(&path, None).unwrap_err();
        assert!(
            err.to_string()
                .contains("a.csv:3: 1 fields where the header has 2")
        );
    }

    #[test]
    fn crlf_lines_are_counted_as_lf_lines_and_duplicate_columns_refused() {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [
            ("lf.csv", "p,y\n0.5,1\n0.7,x\n"),
            ("crlf.csv", "p,y\r\n0.5,1\r\n0.7,x\r\n"),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            let table = Table::read(&path, None).unwrap();
            let at = table.column("y").unwrap().location(1);
            assert_eq!(at.line, 3, "{name}");
        }
        let path = dir.path().join("dup.csv");
        std::fs::write(&path, "p,y,y\n0.5,1,0\n").unwrap();
        let err = Table::read(&path, None).unwrap_err().to_string();
        assert!(err.contains("\"y\" appears twice"), "{err}");
    }
}
