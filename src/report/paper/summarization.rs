//! The summarization seed's calibration tables (Tables III-VII): raw
//! calibration at the first operating point (III), rescaled (IV, or V with
//! ASAP's prompts), rescaled at the other operating points side by side
//! (VI), and the reflective measures raw and rescaled (VII). Each row is a
//! language × model × measure; ‡ marks bucket collapse in rescaled cells.

use crate::calibrate::{CalibrationReport, Evaluation};
use crate::report::run::ReportTable;
use crate::report::table::{header, with_ci};

/// One language × model × measure at one operating point.
#[derive(Clone, Copy)]
pub struct SummaryResult<'a> {
    pub language: &'a str,
    pub model: &'a str,
    pub measure: &'a str,
    /// The operating point whose threshold labels the items.
    pub point: &'a str,
    /// Whether the measure is a reflective one (Table VII's).
    pub reflective: bool,
    pub report: &'a CalibrationReport,
}

const KEY: [&str; 3] = ["language", "model", "measure"];
const CALIBRATION_HEADER: [&str; 5] = ["n", "success rate", "ECE", "Brier", "skill score"];

/// Table III: raw calibration at `first_point`.
pub fn table3(cells: &[SummaryResult], first_point: &str, asap: bool) -> ReportTable {
    ReportTable {
        file: "table3".into(),
        title: format!(
            "Table III: raw calibration at the {first_point} threshold{}",
            if asap {
                ", ASAP + BM25 few-shot prompts"
            } else {
                ""
            }
        ),
        header: header(&KEY, &CALIBRATION_HEADER),
        rows: at(cells, first_point, false)
            .map(|c| row(c, &c.report.raw, false))
            .collect(),
    }
}

/// Table IV, or with ASAP's prompts the paper's Table V: rescaled with
/// `method` under `folds` cross-validation (e.g. "5-fold group").
pub fn rescaled_table(
    cells: &[SummaryResult],
    first_point: &str,
    asap: bool,
    method: &str,
    folds: &str,
) -> ReportTable {
    let (file, name) = if asap {
        ("table5", "Table V (ASAP + BM25 few-shot prompts)")
    } else {
        ("table4", "Table IV")
    };
    ReportTable {
        file: file.into(),
        title: format!(
            "{name}: {method}-rescaled calibration at the {first_point} threshold, {folds} \
             cross-validation"
        ),
        header: header(&KEY, &CALIBRATION_HEADER),
        rows: at(cells, first_point, false)
            .filter_map(rescaled_row)
            .collect(),
    }
}

/// Table VI as the seed lays it out: per language, model and measure, the
/// rescaled success rate, Brier, ECE and skill score, each given at every
/// other operating point side by side (its High P | High R).
pub fn table6(cells: &[SummaryResult], first_point: &str, others: &[&str]) -> ReportTable {
    let metrics = ["success rate", "Brier", "ECE", "skill score"];
    let columns: Vec<String> = metrics
        .iter()
        .flat_map(|metric| {
            others
                .iter()
                .map(move |point| format!("{metric} ({point})"))
        })
        .collect();
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    let rows = at(cells, first_point, false)
        .map(|base| {
            let at_point = |point: &str| {
                cells.iter().find(|c| {
                    c.point == point
                        && c.language == base.language
                        && c.model == base.model
                        && c.measure == base.measure
                        && !c.reflective
                })
            };
            let mut row = vec![
                base.language.to_owned(),
                base.model.to_owned(),
                base.measure.to_owned(),
            ];
            // calibration_columns: n, success rate, ECE, Brier, skill score.
            for index in [1, 3, 2, 4] {
                for point in others {
                    let value = at_point(point).and_then(|c| {
                        let rescaled = c.report.rescaled.as_ref()?;
                        Some(calibration_columns(rescaled, c.report.bucket_collapse)[index].clone())
                    });
                    row.push(value.unwrap_or_else(|| "-".into()));
                }
            }
            row
        })
        .collect();
    ReportTable {
        file: "table6".into(),
        title: "Table VI: rescaled calibration at the other operating points, each metric \
                side by side per threshold as the seed lays it out"
            .into(),
        header: header(&KEY, &columns),
        rows,
    }
}

/// Table VII: the reflective measures at `first_point`, raw and rescaled.
pub fn table7(cells: &[SummaryResult], first_point: &str) -> ReportTable {
    let mut rows = Vec::new();
    for c in at(cells, first_point, true) {
        let mut raw = row(c, &c.report.raw, false);
        raw.insert(3, "raw".into());
        rows.push(raw);
        if let Some(mut r) = rescaled_row(c) {
            r.insert(3, "rescaled".into());
            rows.push(r);
        }
    }
    ReportTable {
        file: "table7".into(),
        title: format!(
            "Table VII: reflective measures at the {first_point} threshold, raw and rescaled"
        ),
        header: header(
            &["language", "model", "measure", "confidence"],
            &CALIBRATION_HEADER,
        ),
        rows,
    }
}

fn at<'c, 'a>(
    cells: &'c [SummaryResult<'a>],
    point: &'c str,
    reflective: bool,
) -> impl Iterator<Item = &'c SummaryResult<'a>> {
    cells
        .iter()
        .filter(move |c| c.point == point && c.reflective == reflective)
}

fn row(c: &SummaryResult, evaluation: &Evaluation, collapsed: bool) -> Vec<String> {
    let mut r = vec![
        c.language.to_owned(),
        c.model.to_owned(),
        c.measure.to_owned(),
    ];
    r.extend(calibration_columns(evaluation, collapsed));
    r
}

/// Bucket collapse is a property of the rescaled confidences only.
fn rescaled_row(c: &SummaryResult) -> Option<Vec<String>> {
    let rescaled = c.report.rescaled.as_ref()?;
    Some(row(c, rescaled, c.report.bucket_collapse))
}

/// n, success rate, ECE (‡ under bucket collapse), Brier and skill of one evaluation.
fn calibration_columns(evaluation: &Evaluation, collapsed: bool) -> Vec<String> {
    let m = &evaluation.metrics;
    let mark = if collapsed { " ‡" } else { "" };
    vec![
        m.n.to_string(),
        with_ci(Some(m.base_rate), evaluation, "base_rate"),
        with_ci(Some(m.ece), evaluation, "ece") + mark,
        with_ci(Some(m.brier), evaluation, "brier"),
        with_ci(m.skill_score, evaluation, "skill_score"),
    ]
}
