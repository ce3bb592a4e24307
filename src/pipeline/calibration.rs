//! The tables every flow's report shares about its calibrated cells: the
//! metrics table, the sample-size note and the subgroup rows (the decision
//! table is `decisions`').
//! Not how a cell is calibrated or where its files go (`cells`), nor a
//! flow's own paper tables (`report::paper`).

use super::decisions::accepted_note;
pub(crate) use super::decisions::{RuleRow, decision_table};
use crate::calibrate::binomial::binomial_cdf;
use crate::calibrate::cutoffs::{ByGroup, fewest_to_pass};
use crate::calibrate::subgroups::{GroupRow, subgroups};
use crate::calibrate::{
    CalibrateOptions, CalibrationData, CalibrationReport, Cutoff, CutoffParams,
};
use crate::report::run::ReportTable;
use crate::report::table::{header, with_ci};

/// What the calibration stage computes and lays out, as a number in its
/// input hash: raised whenever a metric, table or file of the report
/// changes, so that `--resume` with a newer codecal re-runs the (cheap)
/// calibration instead of keeping an old report.
pub(crate) const REPORT_REVISION: u32 = 13;

/// One cell in the run report's shared tables: its key columns, its report
/// and its files.
pub(crate) struct CellRow<'a> {
    pub key: Vec<String>,
    pub report: &'a CalibrationReport,
    pub calibrator: String,
    pub figure: String,
}

/// Correct items per training fold that logistic rescaling needs to learn
/// more than the base rate: the ten events per variable of Peduzzi et al.
/// (1996), for Platt's one variable.
const EVENTS_PER_FOLD: usize = 10;

/// What a run of this size can show, in words: for the cell with the most
/// correct items (where even it has too few, every cell has), whether there
/// are enough to rescale and to certify a cutoff at each target, and how
/// many items would give enough at its success rate; else, for cells with
/// no accept cutoff, why in numbers. Empty where there is nothing to say.
pub(crate) fn sample_size_note(rows: &[CellRow], rules: &[RuleRow]) -> String {
    let Some(row) = rows.iter().max_by_key(|r| correct_items(r.report)) else {
        return String::new();
    };
    let report = row.report;
    let (n, correct) = (report.raw.metrics.n, correct_items(report));
    let rate = report.raw.metrics.base_rate;
    // A cell that could not be rescaled reports 0 folds: take the run's.
    let folds = rows
        .iter()
        .map(|r| r.report.folds)
        .max()
        .unwrap_or(0)
        .max(2);
    let items_for = |correct_needed: usize| {
        if rate > 0.0 {
            format!(
                "at this success rate at least about {} items",
                (correct_needed as f64 / rate).ceil() as usize
            )
        } else {
            "more items than any run with no correct answer can estimate".to_owned()
        }
    };
    let mut lacks = Vec::new();
    // Each training fold holds (folds - 1) / folds of the correct items.
    let rescale_needs = (EVENTS_PER_FOLD * folds).div_ceil(folds - 1);
    if correct < rescale_needs {
        lacks.push(format!(
            "to rescale: {EVENTS_PER_FOLD} correct items in each training fold (the ten \
             events per variable of Peduzzi et al. 1996), so {rescale_needs} in all over \
             {folds} folds, or {}",
            items_for(rescale_needs)
        ));
    }
    let delta = report.cutoffs.delta;
    for cutoff in &report.cutoffs.accept {
        let needed = fewest_to_pass(cutoff.target_precision, delta);
        if cutoff.cutoff.is_none() && correct < needed {
            lacks.push(format!(
                "to certify a cutoff at precision {}: at least {needed} accepted items, all \
                 correct (the exact binomial test at δ = {delta} passes no fewer), or {}",
                cutoff.target_precision,
                items_for(needed)
            ));
        }
    }
    let accepted = accepted_note(rows, rules);
    if !accepted.is_empty() {
        return accepted;
    }
    let uncertified: Vec<String> = rows.iter().filter_map(why_no_cutoff).collect();
    let mut note = String::new();
    if !lacks.is_empty() {
        note = format!(
            "**What this run's size can show.** Even the cell with the most correct items, \
             {}, has only {correct} of {n} (success rate {rate:.3}): too few {}. Until then the rescaled rows and the \
             Decisions table say little beyond the base rate.",
            row.key.join(" "),
            lacks.join("; too few ")
        );
    } else if !uncertified.is_empty() {
        note = format!(
            "**Why nothing is accepted.** Where the Decisions table says \"none\", no cutoff's \
             accepted items are right often enough for the exact test: {}.",
            uncertified.join("; ")
        );
    }
    note
}

/// For a cell with no accept cutoff at its lowest target, in numbers: the
/// cutoff whose accepted items come closest to passing the exact test, and
/// how many mistakes among them the test would allow. `None` where the
/// lowest target has a cutoff.
fn why_no_cutoff(row: &CellRow) -> Option<String> {
    let report = row.report;
    let lowest = report
        .cutoffs
        .accept
        .iter()
        .min_by(|a, b| a.target_precision.total_cmp(&b.target_precision))?;
    if lowest.cutoff.is_some() {
        return None;
    }
    let curve = match report.cutoffs_on {
        "out-of-fold" | "held-out-calibrated" => report.risk_coverage.rescaled.as_ref()?,
        _ => &report.risk_coverage.raw,
    };
    let (alpha, delta, items) = (
        1.0 - lowest.target_precision,
        report.cutoffs.delta,
        report.cutoffs.items as f64,
    );
    let best = curve
        .iter()
        .map(|point| {
            let accepted = (point.coverage * items).round() as usize;
            let wrong = (point.risk * accepted as f64).round() as usize;
            (accepted, wrong, binomial_cdf(wrong, accepted, alpha))
        })
        .filter(|(accepted, _, _)| *accepted > 0)
        .min_by(|a, b| a.2.total_cmp(&b.2))?;
    let (accepted, wrong, p) = best;
    if p <= delta {
        return Some(format!(
            "{} at precision {}: {accepted} accepted with {wrong} wrong would pass (p = \
             {p:.2}), but the walk stopped at a stricter cutoff that failed, or passed over \
             it as deciding too few items for the test to have even odds",
            row.key.join(" "),
            lowest.target_precision,
        ));
    }
    let allowed = (0..=accepted)
        .take_while(|&k| binomial_cdf(k, accepted, alpha) <= delta)
        .last();
    let needs = match allowed {
        Some(k) => format!("at most {k} wrong among {accepted}"),
        None => format!(
            "at least {} accepted with none wrong",
            fewest_to_pass(lowest.target_precision, delta)
        ),
    };
    Some(format!(
        "{} at precision {}: the closest cutoff accepts {accepted} with {wrong} wrong \
         (precision {:.3}, p = {p:.2} > δ = {delta}), and passing needs {needs}",
        row.key.join(" "),
        lowest.target_precision,
        1.0 - wrong as f64 / accepted as f64,
    ))
}

fn correct_items(report: &CalibrationReport) -> usize {
    (report.raw.metrics.base_rate * report.raw.metrics.n as f64).round() as usize
}

/// The calibration metrics beyond the seeds' tables, per cell, raw and
/// rescaled, with their bootstrap intervals: the binned ECE beside its
/// equal-mass version, smooth ECE, the debiased L2 error, the CORP
/// decomposition of the Brier score, Spiegelhalter's test and AURC.
pub(crate) fn metrics_table(key: &[&str], rows: &[CellRow]) -> ReportTable {
    let mut table_rows = Vec::new();
    for row in rows {
        let evaluations = [
            ("raw", Some(&row.report.raw)),
            ("rescaled", row.report.rescaled.as_ref()),
        ];
        for (name, evaluation) in evaluations {
            let Some(e) = evaluation else { continue };
            let m = &e.metrics;
            let mut cells = row.key.clone();
            cells.push(name.to_owned());
            cells.extend([
                with_ci(Some(m.ece), e, "ece"),
                with_ci(Some(m.ece_equal_mass), e, "ece_equal_mass"),
                with_ci(Some(m.smooth_ece), e, "smooth_ece"),
                with_ci(Some(m.debiased_l2_ce), e, "debiased_l2_ce"),
                with_ci(Some(m.corp_mcb), e, "corp_mcb"),
                with_ci(Some(m.corp_dsc), e, "corp_dsc"),
                with_ci(Some(m.corp_unc), e, "corp_unc"),
                with_ci(m.spiegelhalter_p, e, "spiegelhalter_p"),
                with_ci(Some(m.aurc), e, "aurc"),
            ]);
            table_rows.push(cells);
        }
    }
    ReportTable {
        file: "metrics".into(),
        title: "Calibration beyond the seeds' tables: ECE over equal-width and equal-mass bins, \
                smooth ECE (Blasiok and Nakkiran 2024), the debiased L2 error (Kumar et al. \
                2019), the CORP decomposition Brier = MCB - DSC + UNC (a negative skill score \
                is miscalibration when MCB is large, no discrimination when DSC is small), \
                Spiegelhalter's p for \"calibrated\" (one-sided; a large n rejects tiny gaps) \
                and AURC"
            .into(),
        header: header(
            key,
            &[
                "confidence",
                "ECE",
                "ECE equal-mass",
                "smooth ECE",
                "debiased L2",
                "MCB",
                "DSC",
                "UNC",
                "Spiegelhalter p",
                "AURC",
            ],
        ),
        rows: table_rows,
    }
}

/// "short (≤ a)", "medium" or "long (> b)" for each length: its third of
/// the lengths, cut at the 1/3 and 2/3 order statistics.
pub(crate) fn tertiles(lengths: &[usize], unit: &str) -> Vec<String> {
    let mut sorted = lengths.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    if n == 0 {
        return Vec::new();
    }
    let (a, b) = (sorted[(n - 1) / 3], sorted[(2 * (n - 1)) / 3]);
    lengths
        .iter()
        .map(|&l| {
            if l <= a {
                format!("short (≤ {a} {unit})")
            } else if l <= b {
                "medium".to_owned()
            } else {
                format!("long (> {b} {unit})")
            }
        })
        .collect()
}

/// One cell's subgroup rows: every group of each grouping in `full`, and
/// only the worst group of each grouping in `worst_only` (those with too
/// many groups to list, such as repositories).
pub(crate) fn subgroup_rows(
    key: &[String],
    full: &[(&str, Vec<String>)],
    worst_only: &[(&str, Vec<String>)],
    data: &CalibrationData,
    report: &CalibrationReport,
    options: &CalibrateOptions,
) -> Vec<Vec<String>> {
    let bins = options.bins;
    let rescaled = report
        .rescaled
        .is_some()
        .then_some(report.out_of_fold_confidence.as_slice());
    let number = |v: Option<f64>| {
        v.filter(|v| v.is_finite())
            .map_or("-".to_owned(), |v| format!("{v:.3}"))
    };
    let row = |grouping: &str, label: String, g: &GroupRow, accept: Option<&Cutoff>| {
        let mut cells = key.to_vec();
        cells.extend([
            grouping.to_owned(),
            label,
            g.n.to_string(),
            format!("{:.3}", g.base_rate),
            number(Some(g.raw.ece)),
            number(Some(g.raw.smooth_ece)),
            number(g.rescaled.map(|r| r.smooth_ece)),
            number(g.rescaled.and_then(|r| r.skill_score)),
            accept
                .and_then(|c| c.cutoff)
                .map_or("none".to_owned(), |t| format!("{t:.2}")),
            accept.map_or("-".to_owned(), |c| format!("{:.3}", c.coverage)),
        ]);
        cells
    };
    // Each group's own accept cutoff (Mondrian) at the first target, with
    // its own guarantee at δ; shown, not saved. On the multicalibrated
    // out-of-fold confidence where the cell is multicalibrated (issue
    // "multicalibration", item 4), else on the raw confidence.
    let decided_on: Vec<f64> = match &report.multicalibration {
        Some(_) => report
            .out_of_fold_confidence
            .iter()
            .zip(&data.confidence)
            .map(|(oof, raw)| oof.unwrap_or(*raw))
            .collect(),
        None => data.confidence.clone(),
    };
    let own_cutoffs = |grouping: &str, values: &[String]| {
        let first = CutoffParams {
            target_precisions: options
                .cutoffs
                .target_precisions
                .iter()
                .take(1)
                .copied()
                .collect(),
            reject_precision: None,
            ..options.cutoffs.with_seed(options.seed)
        };
        first
            .fit_by_group(grouping, &decided_on, &data.correct, values)
            .ok()
            .and_then(|c| c.groups)
    };
    let mut rows = Vec::new();
    for (grouping, values) in full {
        let groups = subgroups(grouping, values, data, rescaled, None, bins);
        let own = own_cutoffs(grouping, values);
        for g in &groups.rows {
            let worst = groups.worst.as_deref() == Some(g.group.as_str());
            let label = if worst {
                format!("{} (worst)", g.group)
            } else {
                g.group.clone()
            };
            rows.push(row(grouping, label, g, first_accept(&own, &g.group)));
        }
    }
    for (grouping, values) in worst_only {
        let groups = subgroups(grouping, values, data, rescaled, None, bins);
        if let Some(g) = groups
            .rows
            .iter()
            .find(|g| groups.worst.as_deref() == Some(g.group.as_str()))
        {
            let label = format!("{} (worst of {})", g.group, groups.rows.len());
            let own = own_cutoffs(grouping, values);
            rows.push(row(grouping, label, g, first_accept(&own, &g.group)));
        }
    }
    rows
}

/// A group's own accept cutoff at the first target, where one was chosen.
fn first_accept<'a>(own: &'a Option<ByGroup>, group: &str) -> Option<&'a Cutoff> {
    own.as_ref()?.group(group)?.accept.first()
}

/// The run report's subgroup table.
pub(crate) fn subgroup_table(key: &[&str], rows: Vec<Vec<String>>) -> ReportTable {
    ReportTable {
        file: "subgroups".into(),
        title: "Calibration by subgroup at the first operating point: is the model calibrated \
                for every group or only on average? (worst = largest smooth ECE after the \
                single rescaler; each group's own accept cutoff at the first target precision, \
                chosen on its items alone with its own guarantee at δ, on the multicalibrated \
                out-of-fold confidence where the cell is multicalibrated and on the raw one \
                otherwise, is shown, not saved: the cell's calibrator keeps the pooled cutoffs)"
            .into(),
        header: header(
            key,
            &[
                "grouping",
                "group",
                "n",
                "success rate",
                "raw ECE",
                "raw smooth ECE",
                "rescaled smooth ECE",
                "rescaled skill",
                "own accept cutoff (raw)",
                "own coverage",
            ],
        ),
        rows,
    }
}
