//! Calibration with its per-group extras, as `codecal calibrate` and the
//! Python package both ask for it: [`calibrate`](super::calibrate), then a
//! table of calibration per group for each `--by` column (one rescaler per
//! group where `--rescale-by` names it), and accept cutoffs per group of the
//! first column.
//!
//! What it is not: where the group columns come from. Reading them from a
//! table, and refusing an empty group with its line, is the caller's.

use super::sides::held_out_map;
use super::subgroups::{Subgroups, subgroups};
use super::{
    CalibrateError, CalibrateOptions, CalibrationData, CalibrationReport, calibrate,
    checked_params, cv, mark_calibrated_cutoffs, mark_cutoffs,
};

/// One column of group labels, one per item.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupColumn {
    pub name: String,
    pub values: Vec<String>,
}

/// Which per-group extras to add to the report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupedParams {
    /// Columns to report calibration per group of, in order.
    pub by: Vec<GroupColumn>,
    /// The column, among `by`, that also gets one rescaler per group.
    pub rescale_by: Option<String>,
    /// Whether the first `by` column's groups get accept cutoffs of their own.
    pub cutoffs_by_first: bool,
}

/// Errors of [`calibrate_grouped`].
#[derive(Debug, thiserror::Error)]
pub enum GroupedError {
    #[error(transparent)]
    Calibrate(#[from] CalibrateError),
    #[error("group column {name:?} has {got} values for {expected} items")]
    Length {
        name: String,
        got: usize,
        expected: usize,
    },
    #[error("--rescale-by {0:?} is not among the --by columns")]
    RescaleByUnknown(String),
}

/// [`calibrate`](super::calibrate) with `params`' per-group tables and cutoffs.
pub fn calibrate_grouped(
    data: &CalibrationData,
    options: &CalibrateOptions,
    params: &GroupedParams,
) -> Result<CalibrationReport, GroupedError> {
    check(data, params)?;
    let mut report = calibrate(data, options)?;
    report.subgroups = group_tables(data, options, params, &report);
    if let Some(first) = params.by.first().filter(|_| params.cutoffs_by_first) {
        choose_cutoffs_by_group(&mut report, data, options, &first.name, &first.values)?;
    }
    Ok(report)
}

fn check(data: &CalibrationData, params: &GroupedParams) -> Result<(), GroupedError> {
    for column in &params.by {
        if column.values.len() != data.len() {
            return Err(GroupedError::Length {
                name: column.name.clone(),
                got: column.values.len(),
                expected: data.len(),
            });
        }
    }
    match &params.rescale_by {
        Some(name) if !params.by.iter().any(|column| &column.name == name) => {
            Err(GroupedError::RescaleByUnknown(name.clone()))
        }
        _ => Ok(()),
    }
}

fn group_tables(
    data: &CalibrationData,
    options: &CalibrateOptions,
    params: &GroupedParams,
    report: &CalibrationReport,
) -> Vec<Subgroups> {
    let rescaled = report
        .rescaled
        .is_some()
        .then_some(report.out_of_fold_confidence.as_slice());
    params
        .by
        .iter()
        .map(|column| {
            let per_group = (params.rescale_by.as_ref() == Some(&column.name)).then_some(options);
            subgroups(
                &column.name,
                &column.values,
                data,
                rescaled,
                per_group,
                options.bins,
            )
        })
        .collect()
}

/// Gives the report one set of cutoffs per group of `column` (Mondrian),
/// chosen with the same procedure on each group's confidences, beside the
/// pooled ones. `labels` holds each item's group. The confidences are the
/// raw ones, except where the report is multicalibrated: then the cutoffs
/// compare the multicalibrated confidence, which a map fitted on the labels
/// makes, so they are tested where the deployed map never saw a label
/// (issue "faithful, fourth pass", item 1): the rescaler and its patches
/// are fitted on one part of the items (`cv::held_out`), the cutoffs tested
/// on the other parts through that map, and that map is the one saved
/// (`cutoffs_on = "held-out-calibrated"`), so `apply` on the tested items
/// accepts, group by group, exactly what was tested.
pub fn choose_cutoffs_by_group(
    report: &mut CalibrationReport,
    data: &CalibrationData,
    options: &CalibrateOptions,
    column: &str,
    labels: &[String],
) -> Result<(), CalibrateError> {
    let params = checked_params(data, options)?;
    let held = match (&params, report.multicalibration.is_some()) {
        (Some(params), true) => {
            let groups = data.groups.as_deref();
            let (fitted, tested) = cv::held_out(options.cv, &data.correct, groups, options.seed)?;
            let map = held_out_map(data, params, options, &fitted, &tested)?;
            Some((tested, map))
        }
        _ => None,
    };
    let (items, confidence): (Vec<usize>, Vec<f64>) = match &held {
        Some((tested, map)) => (tested.clone(), map.confidence.clone()),
        None => ((0..data.len()).collect(), data.confidence.clone()),
    };
    let correct: Vec<bool> = items.iter().map(|&i| data.correct[i]).collect();
    let groups: Vec<String> = items.iter().map(|&i| labels[i].clone()).collect();
    let mut cutoffs = options.cutoffs.with_seed(options.seed).fit_by_group(
        column,
        &confidence,
        &correct,
        &groups,
    )?;
    match held {
        Some((tested, map)) => {
            mark_cutoffs(&mut cutoffs, |t| t);
            report.final_fit = Some(map.rescaler);
            report.final_multicalibration = map.multicalibration;
            report.cutoffs_on = "held-out-calibrated";
            report.tested_items = Some(tested);
        }
        None => mark_calibrated_cutoffs(&mut cutoffs, report.final_fit.as_ref()),
    }
    report.cutoffs = cutoffs;
    Ok(())
}
