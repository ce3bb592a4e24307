//! Seed 000's calibration tables (Spiess et al., "Calibration and
//! Correctness of Language Models for Code"): Table 5 (raw Brier, skill
//! score and ECE), Table 6 (the same after rescaling, ECE left out where
//! the skill score is below 0.05) and Table 8 (AUC, with the items that had
//! no value). Each model's rows end with its unskilled row, as in the paper.

use super::{MeasureResult, keyed};
use crate::calibrate::Evaluation;
use crate::report::run::ReportTable;
use crate::report::table::{header, with_ci};

/// Seed 000 (Table 6) prints no ECE where the skill score is below this:
/// rescaled confidences have collapsed towards the success rate.
pub const SKILL_FOR_ECE: f64 = 0.05;

const KEY: [&str; 2] = ["model", "measure"];
const SEED_COLUMNS: [&str; 3] = ["Brier", "skill score", "ECE"];

/// Table 5: raw calibration. `notion` follows the title (e.g. exact match).
pub fn table5(cells: &[MeasureResult], notion: &str) -> ReportTable {
    ReportTable {
        file: "table5".into(),
        title: format!("Table 5 (seed 000): raw calibration{notion}"),
        header: header(&KEY, &SEED_COLUMNS),
        rows: per_model(
            cells,
            |c| Some(seed_columns(&c.report.raw, false)),
            |c| vec![unskilled_brier(c), "0".into(), "0".into()],
        ),
    }
}

/// Table 6: after `method` with `folds` cross-validation (e.g. "5-fold group").
pub fn table6(cells: &[MeasureResult], notion: &str, method: &str, folds: &str) -> ReportTable {
    ReportTable {
        file: "table6".into(),
        title: format!(
            "Table 6 (seed 000): {method}-rescaled calibration{notion}, {folds} \
             cross-validation (ECE left out where the skill score is below {SKILL_FOR_ECE})"
        ),
        header: header(&KEY, &SEED_COLUMNS),
        rows: per_model(
            cells,
            |c| Some(seed_columns(c.report.rescaled.as_ref()?, true)),
            |c| vec![unskilled_brier(c), "0".into(), "-".into()],
        ),
    }
}

/// Table 8: each measure's AUC, beside the items it had no value for.
pub fn table8(cells: &[MeasureResult], notion: &str) -> ReportTable {
    let counts = |c: &MeasureResult| {
        let raw = &c.report.raw;
        vec![
            raw.metrics.n.to_string(),
            with_ci(Some(raw.metrics.base_rate), raw, "base_rate"),
        ]
    };
    ReportTable {
        file: "table8".into(),
        title: format!(
            "Table 8 (seed 000): AUC of each measure{notion}; items with no value count \
             at confidence 0, and items at exactly 0 or 1 are where a logit-space fit \
             is driven by clipping"
        ),
        header: header(
            &KEY,
            &["n", "success rate", "no value (as 0)", "at 0 or 1", "AUC"],
        ),
        rows: per_model(
            cells,
            |c| {
                let raw = &c.report.raw;
                let mut row = counts(c);
                row.extend([
                    c.missing.to_string(),
                    c.extremes.to_string(),
                    with_ci(raw.metrics.auroc, raw, "auroc"),
                ]);
                Some(row)
            },
            |c| {
                let mut row = counts(c);
                row.extend(["0".into(), "0".into(), "0.5".into()]);
                row
            },
        ),
    }
}

/// The unskilled predictor's Brier score is the skill score's reference,
/// p(1 - p); its skill score is 0 and its ECE 0 by construction.
fn unskilled_brier(c: &MeasureResult) -> String {
    let raw = &c.report.raw;
    with_ci(Some(raw.metrics.brier_ref), raw, "brier_ref")
}

/// Brier, skill score and ECE, the ECE left out (seed 000's rule) where
/// `drop_ece` and the skill score is below [`SKILL_FOR_ECE`].
fn seed_columns(evaluation: &Evaluation, drop_ece: bool) -> Vec<String> {
    let m = &evaluation.metrics;
    let unskilled = m.skill_score.is_none_or(|s| s < SKILL_FOR_ECE);
    let ece = if drop_ece && unskilled {
        "-".to_owned()
    } else {
        with_ci(Some(m.ece), evaluation, "ece")
    };
    vec![
        with_ci(Some(m.brier), evaluation, "brier"),
        with_ci(m.skill_score, evaluation, "skill_score"),
        ece,
    ]
}

/// Each model's rows, closed by its unskilled row as in seed 000's tables.
/// Cells of one model are adjacent. Where the model's measures speak of
/// different answers (the Oyster's intrinsic reply beside the main one), so
/// their base rates differ, there is one unskilled row per base rate, naming
/// the measures it is the reference of, rather than the last measure's for
/// all.
fn per_model(
    cells: &[MeasureResult],
    columns: impl Fn(&MeasureResult) -> Option<Vec<String>>,
    unskilled: impl Fn(&MeasureResult) -> Vec<String>,
) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for model in cells.chunk_by(|a, b| a.model == b.model) {
        for c in model {
            rows.extend(columns(c).map(|columns| keyed(c.model, c.measure, columns)));
        }
        let base_rate = |c: &MeasureResult| c.report.raw.metrics.brier_ref.to_bits();
        let mut rates: Vec<u64> = Vec::new();
        for rate in model.iter().map(base_rate) {
            if !rates.contains(&rate) {
                rates.push(rate);
            }
        }
        for rate in &rates {
            let sharing: Vec<&MeasureResult> =
                model.iter().filter(|c| base_rate(c) == *rate).collect();
            let name = if rates.len() == 1 {
                "unskilled".to_owned()
            } else {
                let measures: Vec<&str> = sharing.iter().map(|c| c.measure).collect();
                format!("unskilled ({})", measures.join(", "))
            };
            // The last measure's, as before, where all share one.
            let reference = sharing[sharing.len() - 1];
            rows.push(keyed(reference.model, &name, unskilled(reference)));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::{CalibrateOptions, CalibrationData, calibrate};

    fn report(correct: Vec<bool>) -> crate::calibrate::CalibrationReport {
        let n = correct.len();
        let data = CalibrationData {
            confidence: (0..n).map(|i| (i % 10) as f64 / 10.0).collect(),
            correct,
            groups: None,
            target: None,
            features: Vec::new(),
        };
        let options = CalibrateOptions {
            bootstrap: 0,
            ..CalibrateOptions::default()
        };
        calibrate(&data, &options).unwrap()
    }

    /// Issue "faithful, fourth pass", item 5: measures of one model that
    /// speak of answers with different base rates get an unskilled row
    /// each, not the last measure's for all.
    #[test]
    fn each_base_rate_gets_its_own_unskilled_row() {
        let (main, intrinsic) = (
            report((0..40).map(|i| i % 4 == 0).collect()),
            report((0..40).map(|i| i % 2 == 0).collect()),
        );
        let cell = |measure, report| MeasureResult {
            model: "m",
            measure,
            report,
            missing: 0,
            extremes: 0,
        };
        let cells = [cell("a", &main), cell("b", &main), cell("c", &intrinsic)];
        let rows = table5(&cells, "").rows;
        let names: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "unskilled (a, b)", "unskilled (c)"]);
        // p(1 - p) of each: 0.25 x 0.75 and 0.5 x 0.5.
        assert!(rows[3][2].starts_with("0.188"), "{:?}", rows[3]);
        assert!(rows[4][2].starts_with("0.250"), "{:?}", rows[4]);
        let one = table5(&cells[..2], "").rows;
        assert_eq!(one[2][1], "unskilled");
    }
}
