//! The calibration engine: how well confidences predict correctness, raw and
//! after rescaling with cross-validation, with bootstrap intervals.
//!
//! [`calibrate`] takes [`CalibrationData`] and [`CalibrateOptions`] and returns
//! a [`CalibrationReport`] of plain data, with the rescaler's final fit on
//! every item and the decision cutoffs (`cutoffs`) chosen on the raw
//! confidences, the ones the deployed rule compares. No file IO happens here (reading is `table`, writing is
//! `report`) except the calibrator file (`calibrator`), and no threshold is
//! chosen here (that is `thresholds`): a label arrives already decided.

pub mod binomial;
pub mod bins;
pub(crate) mod bootstrap;
pub mod calibrator;
pub mod combine;
pub mod cutoffs;
pub mod cv;
pub mod data;
pub mod decompose;
pub mod grouped;
pub mod metrics;
pub mod monitor;
pub mod multical;
mod ranks;
pub mod rescale;
pub mod runs;
pub mod selective;
mod sides;
pub mod smooth;
pub mod subgroups;
pub mod tests_of_fit;

use multical::Multicalibrated;
use serde::Serialize;
use sides::{Evaluated, OutOfFold, RawSide, RescaledItems, RescaledSide, raw_side, rescaled_side};

pub use bootstrap::{BootstrapSpec, Intervals, Units};
pub use calibrator::{Calibrator, CalibratorError, Provenance};
pub use cutoffs::{
    Cutoff, CutoffParamError, CutoffParams, Cutoffs, Decision, Procedure, RankedItems,
};
pub use cv::{CvError, CvStrategy, Folds};
pub use data::{CalibrationData, ColumnSpec, DataError, LabelSource};
pub use metrics::{Bin, BinSpec, Binning, Metrics, Sample};
pub use rescale::{Method, MethodChoice, Rescaler, RescalerParamError, RescalerParams};

/// Below this rescaled Brier skill score the rescaled confidences barely
/// separate items, so a small ECE says nothing ("bucket collapse").
pub const BUCKET_COLLAPSE_SKILL: f64 = 0.05;

/// How to calibrate.
#[derive(Clone, Debug, PartialEq)]
pub struct CalibrateOptions {
    pub method: Method,
    /// Keep scikit-learn's L2 penalty (C = 1) on the logistic slope.
    pub penalty: bool,
    pub cv: CvStrategy,
    pub folds: usize,
    pub bins: BinSpec,
    /// Bootstrap resamples; 0 turns intervals off.
    pub bootstrap: usize,
    pub bootstrap_by_group: bool,
    /// The metrics that get intervals (names of [`metrics::METRIC_NAMES`]);
    /// `None` gives every metric one.
    pub bootstrap_metrics: Option<Vec<String>>,
    pub seed: u64,
    /// Acceptance (and rejection) cutoffs to choose on the raw confidences;
    /// the calibrated value at each is reported beside it.
    pub cutoffs: CutoffParams,
    /// Compute smooth ECE (with its interval). Off only where a caller reads
    /// other metrics alone, as the run report's Spearman table.
    pub smooth_ece: bool,
    /// Multicalibrate after `method` (the base rescaler) on the data's
    /// group features, inside the same folds.
    pub multicalibration: Option<multical::MulticalibrationParams>,
}

impl Default for CalibrateOptions {
    fn default() -> Self {
        CalibrateOptions {
            method: Method::Platt,
            penalty: true,
            cv: CvStrategy::Kfold,
            folds: 5,
            bins: BinSpec {
                count: 10,
                binning: Binning::EqualWidth,
            },
            bootstrap: 1000,
            bootstrap_by_group: false,
            bootstrap_metrics: None,
            seed: 0,
            cutoffs: CutoffParams::default(),
            smooth_ece: true,
            multicalibration: None,
        }
    }
}

/// Why calibration could not run.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    #[error("no items to calibrate")]
    Empty,
    #[error("--bins must be at least 1")]
    NoBins,
    #[error(transparent)]
    Params(#[from] RescalerParamError),
    #[error(transparent)]
    Cv(#[from] CvError),
    #[error("--bootstrap-metrics: no metric {name:?}; the metrics are {}", metrics::METRIC_NAMES.join(", "))]
    UnknownMetric { name: String },
    #[error("--bootstrap-by-group needs --group")]
    BootstrapGroupsRequired,
    #[error("fold {fold}: {source}")]
    Fit {
        fold: usize,
        source: rescale::FitError,
    },
    #[error("the final fit on all items: {0}")]
    FinalFit(rescale::FitError),
    #[error(transparent)]
    Cutoffs(#[from] CutoffParamError),
    #[error(transparent)]
    Multicalibration(#[from] multical::MulticalibrationParamError),
    #[error(
        "multicalibration needs group features (--group-features) and a base rescaler (--method other than none)"
    )]
    MulticalibrationInputs,
}

/// Metrics of one set of confidences with their bootstrap intervals.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Evaluation {
    #[serde(flatten)]
    pub metrics: Metrics,
    /// [low, high] per metric; empty when the bootstrap is off.
    pub ci: Intervals,
}

/// The rescaler fitted on one fold's training items.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FoldFit {
    pub fold: usize,
    pub train_items: usize,
    pub test_items: usize,
    #[serde(flatten)]
    pub rescaler: Rescaler,
    /// The fold's multicalibration patches after the rescaler (their count
    /// in the JSON).
    #[serde(
        rename = "patches",
        serialize_with = "patch_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub multicalibration: Option<multical::Multicalibrated>,
}

fn patch_count<S: serde::Serializer>(
    fit: &Option<multical::Multicalibrated>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(fit.as_ref().map_or(0, |f| f.patches.len() as u64))
}

/// Reliability-diagram bins of the raw and rescaled confidences.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reliability {
    pub raw: Vec<Bin>,
    pub rescaled: Option<Vec<Bin>>,
}

/// The risk–coverage curves of the raw and rescaled confidences, thinned
/// to at most 202 points each for drawing.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RiskCoverage {
    pub raw: Vec<selective::CurvePoint>,
    pub rescaled: Option<Vec<selective::CurvePoint>>,
}

/// The smoothed reliability curves (with confidence densities) of the raw
/// and rescaled confidences, each at its own smooth-ECE bandwidth.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SmoothReliability {
    pub raw: Vec<smooth::SmoothPoint>,
    pub rescaled: Option<Vec<smooth::SmoothPoint>>,
}

/// Everything `codecal calibrate` reports. Field names are the JSON keys.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CalibrationReport {
    pub raw: Evaluation,
    /// Metrics of the pooled out-of-fold predictions; `None` with `--method none`
    /// or when rescaling was impossible (see `warnings`).
    pub rescaled: Option<Evaluation>,
    pub method: Method,
    pub penalty: bool,
    pub cv: CvStrategy,
    pub folds: usize,
    /// Items no test fold held (`seed-balanced` only); they are absent from `rescaled`.
    pub untested_items: usize,
    pub bucket_collapse: bool,
    pub rescaler: Vec<FoldFit>,
    /// The rescaler fitted on every item after the cross-validated
    /// evaluation: the one a saved calibrator applies to new items.
    pub final_fit: Option<Rescaler>,
    /// The multicalibration fitted on every item after the final rescaler.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub final_multicalibration: Option<multical::Multicalibrated>,
    /// Group by group, out of fold: raw, base rescaler, multicalibrated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multicalibration: Option<multical::MulticalibrationReport>,
    /// Which confidences the cutoffs were chosen on: "raw" (the confidence
    /// the deployed rule compares; earlier calibrators said "out-of-fold").
    pub cutoffs_on: &'static str,
    pub cutoffs: Cutoffs,
    /// The items the cutoffs were tested on (indices into the data), where
    /// not every item: a learned combination's held-out items.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tested_items: Option<Vec<usize>>,
    /// The same targets under every other procedure, on the same items, for
    /// comparison only (the report's table and figure).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other_procedures: Vec<Cutoffs>,
    pub bins: usize,
    pub binning: Binning,
    pub bootstrap: usize,
    pub bootstrap_by_group: bool,
    pub seed: u64,
    pub reliability: Reliability,
    pub risk_coverage: RiskCoverage,
    pub smooth_reliability: SmoothReliability,
    /// Each item's out-of-fold rescaled confidence (`None` where no fold
    /// tested it, or without rescaling); not in the JSON.
    #[serde(skip)]
    pub out_of_fold_confidence: Vec<Option<f64>>,
    /// Calibration by subgroup, filled by callers that ask (`--by`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subgroups: Vec<subgroups::Subgroups>,
    pub warnings: Vec<String>,
}

/// Measures calibration of `data`, raw and rescaled, as `options` say.
pub fn calibrate(
    data: &CalibrationData,
    options: &CalibrateOptions,
) -> Result<CalibrationReport, CalibrateError> {
    let params = checked_params(data, options)?;
    let units = if options.bootstrap_by_group {
        let groups = data.groups.as_deref();
        Units::groups(groups.ok_or(CalibrateError::BootstrapGroupsRequired)?)
    } else {
        Units::items(data.len())
    };
    let single_class = data.correct.iter().all(|&y| y == data.correct[0]);
    let mut warnings = Vec::new();
    if single_class {
        let class = if data.correct[0] {
            "correct"
        } else {
            "incorrect"
        };
        warnings.push(format!(
            "all {} items are {class}: AUROC and skill score are undefined and no rescaler can be fitted",
            data.len(),
        ));
    }
    // The rescaler's side and the raw side share no work: on two cores
    // each gets one.
    let fitting = params.as_ref().filter(|_| !single_class);
    let (rescaled_side, raw_side) = rayon::join(
        || rescaled_side(data, fitting, options),
        || raw_side(data, options),
    );
    let RescaledSide {
        out_of_fold,
        final_fit,
        final_multicalibration,
        rescaled_items,
        evaluated: mut rescaled,
    } = rescaled_side?;
    let RawSide {
        sample: raw_sample,
        evaluated: mut raw,
        mut cutoffs,
        other_procedures,
    } = raw_side?;
    mark_calibrated_cutoffs(&mut cutoffs, final_fit.as_ref());
    let cutoffs_on = "raw";
    if options.bootstrap > 0 {
        let rescaled_sample = out_of_fold
            .as_ref()
            .zip(rescaled_items.as_ref())
            .map(|(oof, items)| (items.sample(&oof.confidence, options), &oof.items[..]));
        let rescaled_side = rescaled_sample.as_ref().zip(rescaled.as_mut());
        let raw_side = (&raw_sample, &mut raw);
        add_intervals(raw_side, rescaled_side, &units, options)?;
    }
    let multicalibration = match (&out_of_fold, &final_multicalibration, &rescaled_items) {
        (Some(oof), Some(fit), Some(items)) => {
            multicalibration_report(data, options, oof, fit, items)
        }
        _ => None,
    };
    let untested_items = out_of_fold
        .as_ref()
        .map_or(0, |o| data.len() - o.items.len());
    let bucket_collapse = rescaled
        .as_ref()
        .and_then(|r| r.evaluation.metrics.skill_score)
        .is_some_and(|s| s < BUCKET_COLLAPSE_SKILL);
    warnings.extend(rescaled_warnings(
        data.len(),
        untested_items,
        bucket_collapse,
    ));
    if let Some(warning) = few_groups_warning(data, options).filter(|_| rescaled.is_some()) {
        warnings.push(warning);
    }
    let (raw, rescaled, reliability, risk_coverage, smooth_reliability) =
        split_sides(raw, rescaled);
    let out_of_fold_confidence = spread(data.len(), out_of_fold.as_ref());
    Ok(CalibrationReport {
        risk_coverage,
        smooth_reliability,
        out_of_fold_confidence,
        subgroups: Vec::new(),
        reliability,
        raw,
        rescaled,
        method: options.method,
        penalty: options.penalty,
        cv: options.cv,
        folds: out_of_fold.as_ref().map_or(0, |o| o.fits.len()),
        untested_items,
        bucket_collapse,
        rescaler: out_of_fold.map(|o| o.fits).unwrap_or_default(),
        final_fit,
        final_multicalibration,
        multicalibration,
        cutoffs_on,
        tested_items: None,
        cutoffs,
        other_procedures,
        bins: options.bins.count,
        binning: options.bins.binning,
        bootstrap: options.bootstrap,
        bootstrap_by_group: options.bootstrap_by_group,
        seed: options.seed,
        warnings,
    })
}

/// The two sides' evaluations, and their bins and curves paired by kind.
fn split_sides(
    raw: Evaluated,
    rescaled: Option<Evaluated>,
) -> (
    Evaluation,
    Option<Evaluation>,
    Reliability,
    RiskCoverage,
    SmoothReliability,
) {
    let (rescaled, rescaled_bins, rescaled_curve, rescaled_smooth) = match rescaled {
        Some(r) => (
            Some(r.evaluation),
            Some(r.bins),
            Some(r.risk_coverage),
            Some(r.smooth),
        ),
        None => (None, None, None, None),
    };
    let reliability = Reliability {
        raw: raw.bins,
        rescaled: rescaled_bins,
    };
    let risk_coverage = RiskCoverage {
        raw: raw.risk_coverage,
        rescaled: rescaled_curve,
    };
    let smooth_reliability = SmoothReliability {
        raw: raw.smooth,
        rescaled: rescaled_smooth,
    };
    (
        raw.evaluation,
        rescaled,
        reliability,
        risk_coverage,
        smooth_reliability,
    )
}

/// Each item's out-of-fold confidence, `None` for an item no fold tested.
fn spread(items: usize, out_of_fold: Option<&OutOfFold>) -> Vec<Option<f64>> {
    let mut confidence = vec![None; items];
    if let Some(oof) = out_of_fold {
        for (&i, &p) in oof.items.iter().zip(&oof.confidence) {
            confidence[i] = Some(p);
        }
    }
    confidence
}

/// What the rescaled metrics leave out or cannot say.
fn rescaled_warnings(items: usize, untested_items: usize, bucket_collapse: bool) -> Vec<String> {
    let mut warnings = Vec::new();
    if untested_items > 0 {
        warnings.push(format!(
            "{untested_items} of {items} items were in no test fold and are absent from the rescaled metrics"
        ));
    }
    if bucket_collapse {
        warnings.push(format!(
            "bucket collapse: the rescaled skill score is below {BUCKET_COLLAPSE_SKILL}, so the rescaled ECE is not meaningful"
        ));
    }
    warnings
}

/// Below this many groups, group cross-validation's folds are too few and
/// too uneven for the rescaled numbers to mean much.
pub const FEW_GROUPS: usize = 20;

/// With group cross-validation over fewer than [`FEW_GROUPS`] groups, each
/// fold's base rate is pulled away from its training folds' (a group left
/// out takes its successes with it), so the rescaled confidences are
/// anti-correlated with the labels across folds and the rescaled AUC can
/// fall below 0.5 (the 10 Turbulence questions show it).
fn few_groups_warning(data: &CalibrationData, options: &CalibrateOptions) -> Option<String> {
    let groups = data.groups.as_ref()?;
    if options.cv != cv::CvStrategy::Group {
        return None;
    }
    let distinct: std::collections::BTreeSet<&String> = groups.iter().collect();
    (distinct.len() < FEW_GROUPS).then(|| {
        format!(
            "few groups: only {} groups for group cross-validation (fewer than {FEW_GROUPS}), so \
             each fold's base rate is pulled against its training folds' and the rescaled \
             numbers (AUC can fall below 0.5) say little; read the raw ones",
            distinct.len()
        )
    })
}

/// The rescaler's parameters, after checking that `data` and `options` can be calibrated.
pub(crate) fn checked_params(
    data: &CalibrationData,
    options: &CalibrateOptions,
) -> Result<Option<RescalerParams>, CalibrateError> {
    if data.is_empty() {
        return Err(CalibrateError::Empty);
    }
    if options.bins.count == 0 {
        return Err(CalibrateError::NoBins);
    }
    let params = RescalerParams::new(options.method, options.penalty, options.bins.count)?;
    if let Some(mc) = &options.multicalibration {
        mc.check()?;
        if data.features.is_empty() || params.is_none() {
            return Err(CalibrateError::MulticalibrationInputs);
        }
    }
    Ok(params)
}

/// Bootstrap intervals for the raw evaluation over every item, and for the
/// rescaled one over the items some fold tested, resampled by `units` together.
fn add_intervals(
    (raw_sample, raw): (&Sample, &mut Evaluated),
    rescaled: Option<(&(Sample, &[usize]), &mut Evaluated)>,
    units: &Units,
    options: &CalibrateOptions,
) -> Result<(), CalibrateError> {
    let all: Vec<usize> = (0..raw_sample.len()).collect();
    let mut samples: Vec<(&Sample, &[usize])> = vec![(raw_sample, &all)];
    if let Some(((sample, items), _)) = &rescaled {
        samples.push((sample, items));
    }
    let spec = BootstrapSpec {
        resamples: options.bootstrap,
        seed: options.seed,
        level: 0.95,
        metrics: bootstrap_metrics(options)?,
    };
    let mut intervals = bootstrap::intervals(&samples, &units.of_item, units.count, &spec);
    if let Some((_, r)) = rescaled {
        r.evaluation.ci = intervals.pop().unwrap_or_default();
    }
    raw.evaluation.ci = intervals.pop().unwrap_or_default();
    Ok(())
}

/// How the multicalibrated confidences compare with the raw and the base
/// rescaler's on the items some fold tested; `None` without a base.
fn multicalibration_report(
    data: &CalibrationData,
    options: &CalibrateOptions,
    oof: &OutOfFold,
    fit: &Multicalibrated,
    items: &RescaledItems,
) -> Option<multical::MulticalibrationReport> {
    let base = oof.base_confidence.as_ref()?;
    let raw: Vec<f64> = oof.items.iter().map(|&i| data.confidence[i]).collect();
    let compared = multical::diagnostics::Compared {
        items: &oof.items,
        raw: &raw,
        base,
        multicalibrated: &oof.confidence,
        correct: &items.correct,
    };
    Some(multical::MulticalibrationReport::new(
        fit,
        &data.features,
        &compared,
        options.bins.count,
        options.bootstrap,
        options.seed,
    ))
}

/// The metrics `--bootstrap-metrics` names, checked; every metric without it.
fn bootstrap_metrics(options: &CalibrateOptions) -> Result<Vec<&'static str>, CalibrateError> {
    let Some(names) = &options.bootstrap_metrics else {
        return Ok(metrics::METRIC_NAMES.to_vec());
    };
    names
        .iter()
        .map(|name| {
            metrics::METRIC_NAMES
                .iter()
                .find(|&&known| known == name)
                .copied()
                .ok_or_else(|| CalibrateError::UnknownMetric { name: name.clone() })
        })
        .collect()
}

/// Writes the final rescaler's value at each raw cutoff beside it.
pub(crate) fn mark_calibrated_cutoffs(cutoffs: &mut Cutoffs, final_fit: Option<&Rescaler>) {
    mark_cutoffs(cutoffs, |t| final_fit.map_or(t, |fit| fit.predict(t)));
}

/// Sets every cutoff's calibrated value to `calibrated` of its cutoff.
pub(crate) fn mark_cutoffs(cutoffs: &mut Cutoffs, calibrated: impl Fn(f64) -> f64) {
    let mark = |c: &mut Cutoff| {
        c.calibrated_cutoff = c.cutoff.map(&calibrated);
    };
    cutoffs.accept.iter_mut().for_each(mark);
    cutoffs.reject.iter_mut().for_each(mark);
    for group in cutoffs.groups.iter_mut().flat_map(|g| g.groups.iter_mut()) {
        group.accept.iter_mut().for_each(mark);
        group.reject.iter_mut().for_each(mark);
    }
}

#[cfg(test)]
mod tests;
