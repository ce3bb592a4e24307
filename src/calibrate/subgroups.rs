//! Calibration by subgroup: is the model calibrated for every language,
//! repository or length band, or only on average?
//!
//! For one grouping column, each group's n, base rate, ECE, smooth ECE and
//! skill score, for the raw confidences and for the single rescaler's
//! out-of-fold ones; optionally also with one rescaler fitted per group
//! (the same method and cross-validation, inside the group), so that the
//! gain or loss of calibrating per group (Campos et al., arXiv 2512.08810)
//! shows beside it. The worst group is the one with the largest smooth ECE
//! after the single rescaler (raw where there is none), among groups of at
//! least [`WORST_MIN_ITEMS`] items where there are any.
//!
//! Not here: reading the column (`data`), rendering (`report`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::metrics::{BinSpec, Sample};
use super::{CalibrateOptions, CalibrationData, calibrate};

/// The worst group is chosen among groups of at least this many items,
/// where there are any.
pub const WORST_MIN_ITEMS: usize = 10;

/// The few numbers shown per group and confidence.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct GroupMetrics {
    pub ece: f64,
    pub smooth_ece: f64,
    pub skill_score: Option<f64>,
}

/// One group's row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupRow {
    pub group: String,
    pub n: usize,
    pub base_rate: f64,
    pub raw: GroupMetrics,
    /// Under the single rescaler, out of fold.
    pub rescaled: Option<GroupMetrics>,
    /// Under a rescaler fitted within the group; `None` where the group
    /// cannot be cross-validated on its own (`note` says why).
    pub per_group: Option<GroupMetrics>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Every group of one column.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Subgroups {
    pub column: String,
    pub rows: Vec<GroupRow>,
    pub worst: Option<String>,
}

fn group_metrics(confidence: &[f64], correct: &[bool], bins: BinSpec) -> GroupMetrics {
    let m = Sample::new(confidence, correct, None, bins).metrics(None);
    GroupMetrics {
        ece: m.ece,
        smooth_ece: m.smooth_ece,
        skill_score: m.skill_score,
    }
}

/// The groups of `values` (one per item of `data`). `rescaled` is each
/// item's out-of-fold rescaled confidence (`None` where untested);
/// `per_group`, when given, fits and cross-validates one rescaler per group.
pub fn subgroups(
    column: &str,
    values: &[String],
    data: &CalibrationData,
    rescaled: Option<&[Option<f64>]>,
    per_group: Option<&CalibrateOptions>,
    bins: BinSpec,
) -> Subgroups {
    let mut members: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, v) in values.iter().enumerate() {
        members.entry(v).or_default().push(i);
    }
    let rows: Vec<GroupRow> = members
        .into_iter()
        .map(|(group, items)| {
            let confidence: Vec<f64> = items.iter().map(|&i| data.confidence[i]).collect();
            let correct: Vec<bool> = items.iter().map(|&i| data.correct[i]).collect();
            let rescaled = rescaled.map(|r| {
                let (c, y): (Vec<f64>, Vec<bool>) = items
                    .iter()
                    .filter_map(|&i| r[i].map(|p| (p, data.correct[i])))
                    .unzip();
                group_metrics(&c, &y, bins)
            });
            let (per_group, note) = match per_group {
                None => (None, None),
                Some(options) => fit_within(data, &items, options),
            };
            GroupRow {
                group: group.to_owned(),
                n: items.len(),
                base_rate: correct.iter().filter(|&&y| y).count() as f64 / items.len() as f64,
                raw: group_metrics(&confidence, &correct, bins),
                rescaled,
                per_group,
                note,
            }
        })
        .collect();
    // A one-item group is "worst" by chance alone; prefer groups of some size.
    let sized = rows.iter().any(|r| r.n >= WORST_MIN_ITEMS);
    let worst = rows
        .iter()
        .filter(|r| !sized || r.n >= WORST_MIN_ITEMS)
        .max_by(|a, b| {
            let key = |r: &GroupRow| r.rescaled.unwrap_or(r.raw).smooth_ece;
            key(a).total_cmp(&key(b))
        })
        .map(|r| r.group.clone());
    Subgroups {
        column: column.to_owned(),
        rows,
        worst,
    }
}

/// One group calibrated on its own, with `options`' method and CV.
fn fit_within(
    data: &CalibrationData,
    items: &[usize],
    options: &CalibrateOptions,
) -> (Option<GroupMetrics>, Option<String>) {
    let subset = CalibrationData {
        confidence: items.iter().map(|&i| data.confidence[i]).collect(),
        correct: items.iter().map(|&i| data.correct[i]).collect(),
        groups: data
            .groups
            .as_ref()
            .map(|g| items.iter().map(|&i| g[i].clone()).collect()),
        target: None,
        features: Vec::new(),
    };
    let quick = CalibrateOptions {
        bootstrap: 0,
        ..options.clone()
    };
    match calibrate(&subset, &quick) {
        Ok(report) => match report.rescaled {
            Some(r) => (
                Some(GroupMetrics {
                    ece: r.metrics.ece,
                    smooth_ece: r.metrics.smooth_ece,
                    skill_score: r.metrics.skill_score,
                }),
                None,
            ),
            None => (None, report.warnings.first().cloned()),
        },
        Err(e) => (None, Some(format!("not rescaled within the group: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::metrics::Binning;
    use crate::calibrate::{CvStrategy, Method};

    /// Two groups with opposite miscalibration: one rescaler for both fixes
    /// neither, one per group fixes each.
    #[test]
    fn a_rescaler_per_group_fixes_opposite_miscalibration() {
        let n = 2000;
        let confidence: Vec<f64> = (0..n)
            .map(|i| 0.05 + 0.9 * (i % 100) as f64 / 100.0)
            .collect();
        let group: Vec<String> = (0..n)
            .map(|i| if i < n / 2 { "java" } else { "python" }.into())
            .collect();
        // java: right about half as often as it says; python: as often as 1 − its confidence.
        let correct: Vec<bool> = (0..n)
            .map(|i| {
                let p = confidence[i];
                let rate = if i < n / 2 { p / 2.0 } else { 1.0 - p };
                ((i * 7919) % 1000) as f64 / 1000.0 < rate
            })
            .collect();
        let data = CalibrationData {
            confidence,
            correct,
            groups: None,
            target: None,
            features: Vec::new(),
        };
        let options = CalibrateOptions {
            method: Method::Platt,
            cv: CvStrategy::Kfold,
            bootstrap: 0,
            ..CalibrateOptions::default()
        };
        let report = calibrate(&data, &options).unwrap();
        let bins = BinSpec {
            count: 10,
            binning: Binning::EqualWidth,
        };
        let oof = report.out_of_fold_confidence.clone();
        let s = subgroups("language", &group, &data, Some(&oof), Some(&options), bins);
        assert_eq!(s.rows.len(), 2);
        for row in &s.rows {
            let single = row.rescaled.unwrap().smooth_ece;
            let own = row.per_group.unwrap().smooth_ece;
            assert!(
                own < single / 2.0,
                "{}: per group {own} vs single {single}",
                row.group
            );
        }
        assert!(s.worst.is_some());
    }
}
