//! A run's report as plain data ([`RunReport`]): its header, tables, notes
//! and closing sections, and for every calibrated cell the items behind its
//! figures. `report.md` and `report.html` are both rendered from it, and it
//! is kept beside them as `report.json`, so `codecal report` rebuilds both
//! from a finished run without re-running a stage.
//!
//! Not for: computing a metric (table cells arrive as text, cell items with
//! the calibration's own confidences) or deciding what a flow reports; the
//! pipeline's report stages fill the data.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::artifact::{WriteError, write_atomic};
use crate::calibrate::metrics::{Binning, equal_width_bin};
use crate::calibrate::{Bin, CalibrationReport};

/// The data file in a run directory that both reports are rendered from.
pub const REPORT_DATA: &str = "report.json";

/// Bumped when [`RunReport`]'s layout changes; an older file is refused with
/// a hint instead of being misread.
pub const REPORT_FORMAT: u32 = 1;

/// Everything `report.md` and `report.html` show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub format: u32,
    /// The first heading, e.g. "codecal run: default".
    pub title: String,
    /// The paragraph under it (Markdown: `code` spans only).
    pub intro: String,
    pub header: RunHeader,
    pub tables: Vec<ReportTable>,
    pub notes: Vec<String>,
    /// Sections after the notes, each a heading and a Markdown body.
    pub sections: Vec<Section>,
    /// Every item once per model; cells point into this list.
    pub items: Vec<ItemView>,
    pub cells: Vec<CellView>,
}

/// What made the run: shown at the top of the HTML page.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunHeader {
    pub name: String,
    pub task: String,
    pub models: Vec<String>,
    /// The corpus or dataset files read.
    pub data: Vec<String>,
    pub items: usize,
    /// When this report data was made, UTC.
    pub created: String,
    pub codecal_version: String,
    /// sha256 of the config as run, then each earlier stage's input hash and
    /// each model file's hash, as the manifest records them.
    pub hashes: Vec<(String, String)>,
}

/// A titled table; every cell is the text the Markdown shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReportTable {
    /// The stem of its `tables/<file>.csv` and `.tex`.
    pub file: String,
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Section {
    pub heading: String,
    /// Markdown: paragraphs, "- " lists and `[text](path)` links.
    pub body: String,
}

/// One item as a model answered it: what a reader needs to judge it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemView {
    pub id: String,
    pub model: String,
    /// Its repository (summaries) or problem (tasks).
    pub group: String,
    /// Texts in display order, passed on byte for byte.
    pub texts: Vec<ItemText>,
    /// Named numbers, e.g. the similarity score.
    pub numbers: Vec<(String, f64)>,
    /// Named short texts the lists show as columns, e.g. the verdict.
    #[serde(default)]
    pub labels: Vec<(String, String)>,
    /// The text a list shows for the item (the summary or the answer).
    pub headline: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemText {
    pub label: String,
    pub text: String,
    /// Shown as code (monospace, highlighted, collapsed when long).
    pub code: bool,
}

/// One calibrated cell (e.g. language x model x measure x operating point).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellView {
    /// Names of the key's parts, e.g. "language", "model".
    pub key_names: Vec<String>,
    pub key: Vec<String>,
    /// Its calibration directory, relative to the run directory, holding
    /// `reliability.svg`, `smooth_reliability.svg` and `risk_coverage.svg`.
    pub figures: String,
    /// The reliability diagram's bars, in drawing order.
    pub raw_bars: Vec<BarView>,
    pub rescaled_bars: Option<Vec<BarView>>,
    pub items: Vec<CellItem>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BarView {
    pub lo: f64,
    pub hi: f64,
    pub count: f64,
    pub accuracy: f64,
}

/// An item as one cell saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellItem {
    /// Index into [`RunReport::items`].
    pub item: usize,
    pub raw: f64,
    /// Out-of-fold rescaled confidence, where a fold tested the item.
    pub rescaled: Option<f64>,
    pub correct: bool,
    /// The bar (index into `raw_bars`) that counts the item.
    pub raw_bar: Option<usize>,
    pub rescaled_bar: Option<usize>,
}

impl CellView {
    /// The view of one calibration: `items[i]` is the `RunReport::items`
    /// index of the report's i-th item, whose raw confidence and outcome
    /// are `confidence[i]` and `correct[i]`.
    pub fn new(
        key_names: &[&str],
        key: Vec<String>,
        figures: String,
        report: &CalibrationReport,
        confidence: &[f64],
        correct: &[bool],
        items: &[usize],
    ) -> Self {
        let bars = |bins: &[Bin]| -> Vec<BarView> {
            bins.iter()
                .map(|b| BarView {
                    lo: b.lo,
                    hi: b.hi,
                    count: b.count,
                    accuracy: b.accuracy,
                })
                .collect()
        };
        let raw_bins = &report.reliability.raw;
        let rescaled_bins = report.reliability.rescaled.as_deref();
        let bar = |bins: &[Bin], p: f64| bar_of(bins, p, report.binning, report.bins);
        let cell_items = items
            .iter()
            .enumerate()
            .map(|(i, &item)| {
                let rescaled = report.out_of_fold_confidence.get(i).copied().flatten();
                CellItem {
                    item,
                    raw: confidence[i],
                    rescaled,
                    correct: correct[i],
                    raw_bar: bar(raw_bins, confidence[i]),
                    rescaled_bar: rescaled_bins.zip(rescaled).and_then(|(b, p)| bar(b, p)),
                }
            })
            .collect();
        CellView {
            key_names: key_names.iter().map(|s| s.to_string()).collect(),
            key,
            figures,
            raw_bars: bars(raw_bins),
            rescaled_bars: rescaled_bins.map(bars),
            items: cell_items,
        }
    }
}

/// The bar of a reliability diagram that counts confidence `p`: by the
/// calibration's own equal-width rule, or for equal-mass bins the first
/// whose range holds `p` (a tie split across two bins lists in the first).
fn bar_of(bins: &[Bin], p: f64, binning: Binning, count: usize) -> Option<usize> {
    match binning {
        Binning::EqualWidth => {
            let b = equal_width_bin(p, count);
            let lo = b as f64 / count as f64;
            bins.iter().position(|bin| bin.lo == lo)
        }
        Binning::EqualMass => bins.iter().position(|bin| bin.lo <= p && p <= bin.hi),
    }
}

/// `report.md`: the title and intro, each table under its title, the notes,
/// then the closing sections.
pub fn markdown(report: &RunReport) -> String {
    let mut out = format!("# {}\n\n{}\n\n", report.title, report.intro);
    for table in &report.tables {
        let body = if table.rows.is_empty() {
            "(nothing in this run)\n".to_owned()
        } else {
            markdown_table(table)
        };
        out += &format!("## {}\n\n{body}\n", table.title);
    }
    if !report.notes.is_empty() {
        out += "## Notes\n\n";
        for note in &report.notes {
            out += &format!("- {note}\n");
        }
        out += "\n";
    }
    for section in &report.sections {
        out += &format!("## {}\n\n{}", section.heading, section.body);
    }
    out
}

fn markdown_table(table: &ReportTable) -> String {
    super::table::grid_markdown(&table.header, &table.rows)
}

/// Reading or writing a run's report went wrong.
#[derive(Debug, thiserror::Error)]
pub enum RunReportError {
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("{path}: {message}")]
    Read { path: String, message: String },
}

/// Writes `report.json`, `report.md` and `report.html` into the run
/// directory `dir`, each whole (temporary file, then rename). The HTML
/// inlines the cells' SVG figures from `dir`.
pub fn write_run_report(dir: &Path, report: &RunReport) -> Result<(), RunReportError> {
    let json = serde_json::to_string(report).map_err(|e| RunReportError::Read {
        path: dir.join(REPORT_DATA).display().to_string(),
        message: e.to_string(),
    })?;
    write_atomic(&dir.join(REPORT_DATA), json.as_bytes())?;
    write_atomic(&dir.join("report.md"), markdown(report).as_bytes())?;
    let figure = |relative: &str| read_figure(dir, relative);
    write_atomic(
        &dir.join("report.html"),
        super::html::page(report, &figure).as_bytes(),
    )?;
    Ok(())
}

/// Reads `report.json` from the run directory `dir`.
pub fn read_run_report(dir: &Path) -> Result<RunReport, RunReportError> {
    let path = dir.join(REPORT_DATA);
    let error = |message: String| RunReportError::Read {
        path: path.display().to_string(),
        message,
    };
    let text = crate::artifact::read_regular_text(&path, crate::artifact::JSON_CAP_BYTES).map_err(|e| {
        error(format!(
            "{e} (a run made before codecal wrote {REPORT_DATA}: `codecal run --resume` with its \
             config writes it, re-running only the calibrate stage)"
        ))
    })?;
    let format: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| error(e.to_string()))?;
    if format["format"].as_u64() != Some(u64::from(REPORT_FORMAT)) {
        return Err(error(format!(
            "report data format {} is not this codecal's {REPORT_FORMAT}; \
             `codecal run --resume` with the run's config rewrites it",
            format["format"]
        )));
    }
    let report: RunReport = serde_json::from_str(&text).map_err(|e| error(e.to_string()))?;
    report.inconsistency().map_or(Ok(report), |e| Err(error(e)))
}

/// The most a figure may hold: 16 MiB.
const FIGURE_CAP_BYTES: u64 = 16 << 20;

/// A figure named in the report, read only from a regular file inside the
/// run directory `dir` (after resolving `..` and symlinks): a planted path
/// to anywhere else reads as missing.
fn read_figure(dir: &Path, relative: &str) -> Option<String> {
    let root = dir.canonicalize().ok()?;
    let path = root.join(relative).canonicalize().ok()?;
    if !path.starts_with(&root) {
        return None;
    }
    crate::artifact::read_regular_text(&path, FIGURE_CAP_BYTES).ok()
}

impl RunReport {
    /// Where the cells point past the report's own lists (a hand-edited or
    /// planted `report.json`), naming the cell and the item.
    pub fn inconsistency(&self) -> Option<String> {
        for (c, cell) in self.cells.iter().enumerate() {
            let name = format!("cell {c} ({})", cell.key.join(" "));
            for (i, item) in cell.items.iter().enumerate() {
                if item.item >= self.items.len() {
                    return Some(format!(
                        "{name}: item {i} points to item {}, but the report has {} items",
                        item.item,
                        self.items.len()
                    ));
                }
                let rescaled_bars = cell.rescaled_bars.as_ref().map_or(0, Vec::len);
                let bad_bar = item
                    .raw_bar
                    .filter(|&b| b >= cell.raw_bars.len())
                    .or(item.rescaled_bar.filter(|&b| b >= rescaled_bars));
                if let Some(bar) = bad_bar {
                    return Some(format!(
                        "{name}: item {i} ({}) is in bar {bar}, but the cell has {} bars",
                        self.items[item.item].id,
                        cell.raw_bars.len().max(rescaled_bars)
                    ));
                }
                if !(item.raw.is_finite() && (0.0..=1.0).contains(&item.raw)) {
                    return Some(format!(
                        "{name}: item {i} ({}) has raw confidence {}, not in [0, 1]",
                        self.items[item.item].id, item.raw
                    ));
                }
            }
        }
        None
    }
}

/// Rebuilds `report.md` and `report.html` of a finished run from its
/// `report.json` and figures, without re-running a stage.
pub fn rebuild(dir: &Path) -> Result<RunReport, RunReportError> {
    let report = read_run_report(dir)?;
    write_run_report(dir, &report)?;
    Ok(report)
}

/// "2026-11-23 18:45 UTC" for a time in seconds since the Unix epoch.
pub fn utc_timestamp(seconds: u64) -> String {
    let days = (seconds / 86_400) as i64;
    let (hour, minute) = ((seconds % 86_400) / 3600, (seconds % 3600) / 60);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02} UTC")
}

/// Now, as [`utc_timestamp`] writes it.
/// `SOURCE_DATE_EPOCH` (seconds since 1970), where it is set, stands for now,
/// as in reproducible builds: two runs of one config then write the same
/// bytes (a merged run and the same run in one piece, for instance).
pub fn now_utc() -> String {
    let epoch = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    let seconds = epoch.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    });
    utc_timestamp(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bin(lo: f64, hi: f64) -> Bin {
        Bin {
            lo,
            hi,
            count: 1.0,
            mean_confidence: lo,
            accuracy: 0.0,
            accuracy_interval: None,
        }
    }

    #[test]
    fn an_item_lists_under_the_bar_that_counts_it() {
        // Bars of non-empty bins only: (0.1, 0.2], (0.5, 0.6], (0.9, 1.0].
        let bins = [bin(0.1, 0.2), bin(0.5, 0.6), bin(0.9, 1.0)];
        let bar = |p| bar_of(&bins, p, Binning::EqualWidth, 10);
        assert_eq!(
            bar(0.2),
            Some(0),
            "edges are left-open: 0.2 is in (0.1, 0.2]"
        );
        assert_eq!(bar(0.55), Some(1));
        assert_eq!(bar(1.0), Some(2));
        assert_eq!(bar(0.95), Some(2));
        assert_eq!(bar(0.3), None, "no bar for an empty bin");
        let mass = [bin(0.1, 0.3), bin(0.3, 0.9)];
        assert_eq!(bar_of(&mass, 0.3, Binning::EqualMass, 2), Some(0));
        assert_eq!(bar_of(&mass, 0.5, Binning::EqualMass, 2), Some(1));
    }

    #[test]
    fn timestamps_are_civil_utc() {
        assert_eq!(utc_timestamp(0), "1970-01-01 00:00 UTC");
        // 2024-02-29 12:34 UTC, a leap day.
        assert_eq!(utc_timestamp(1_709_210_040), "2024-02-29 12:34 UTC");
        assert_eq!(utc_timestamp(951_782_400), "2000-02-29 00:00 UTC");
    }

    #[test]
    fn markdown_has_each_table_under_its_title_and_the_notes_after() {
        let report = RunReport {
            format: REPORT_FORMAT,
            title: "codecal run: t".into(),
            intro: "Intro.".into(),
            header: RunHeader::default(),
            tables: vec![
                ReportTable {
                    file: "a".into(),
                    title: "A".into(),
                    header: vec!["x".into(), "y".into()],
                    rows: vec![vec!["1".into(), "2 ‡".into()]],
                },
                ReportTable {
                    file: "b".into(),
                    title: "B".into(),
                    header: vec!["x".into()],
                    rows: vec![],
                },
            ],
            notes: vec!["n1".into()],
            sections: vec![Section {
                heading: "S".into(),
                body: "- [p](p)\n".into(),
            }],
            items: vec![],
            cells: vec![],
        };
        assert_eq!(
            markdown(&report),
            "# codecal run: t\n\nIntro.\n\n## A\n\n| x | y |\n|---|---|\n| 1 | 2 ‡ |\n\n\
             ## B\n\n(nothing in this run)\n\n## Notes\n\n- n1\n\n## S\n\n- [p](p)\n"
        );
    }
}
