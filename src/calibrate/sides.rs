//! The two halves of [`calibrate`](super::calibrate), run side by side on
//! the two cores: the raw confidences' evaluation and cutoffs, and the
//! rescaler's out-of-fold predictions, their evaluation and the final fit.
//! Each evaluation leaves its intervals to the bootstrap, which resamples
//! both halves together.
//!
//! Not here: the metrics (`metrics`), the cutoffs (`cutoffs`), the rescalers
//! (`rescale`), the bootstrap (`bootstrap`).

use rayon::prelude::*;

use super::cutoffs::RankedItems;
use super::metrics::Bin;
use super::multical::{Multicalibrated, MulticalibrationParams};
use super::{
    CalibrateError, CalibrateOptions, CalibrationData, CutoffParams, Cutoffs, Evaluation, FoldFit,
    Intervals, Procedure, Rescaler, RescalerParams, Sample, cv, selective, smooth,
};

/// Out-of-fold predictions: rescaled confidence of each tested item.
pub(super) struct OutOfFold {
    /// Tested items, ascending.
    pub(super) items: Vec<usize>,
    pub(super) confidence: Vec<f64>,
    /// With multicalibration: the base rescaler's prediction of each tested
    /// item, before the patches (`confidence` is after).
    pub(super) base_confidence: Option<Vec<f64>>,
    pub(super) fits: Vec<FoldFit>,
}

/// The rescaler's half of [`calibrate`]: out-of-fold predictions, the
/// final fit and the out-of-fold evaluation (no intervals yet).
pub(super) struct RescaledSide {
    pub(super) out_of_fold: Option<OutOfFold>,
    pub(super) final_fit: Option<Rescaler>,
    pub(super) final_multicalibration: Option<Multicalibrated>,
    pub(super) rescaled_items: Option<RescaledItems>,
    pub(super) evaluated: Option<Evaluated>,
}

/// The labels (and target) of the items some fold tested, in their order.
pub(super) struct RescaledItems {
    pub(super) correct: Vec<bool>,
    pub(super) target: Option<Vec<f64>>,
}

impl RescaledItems {
    pub(super) fn sample(&self, confidence: &[f64], options: &CalibrateOptions) -> Sample {
        Sample::new(
            confidence,
            &self.correct,
            self.target.as_deref(),
            options.bins,
        )
        .with_smooth_ece(options.smooth_ece)
    }
}

pub(super) fn rescaled_side(
    data: &CalibrationData,
    params: Option<&RescalerParams>,
    options: &CalibrateOptions,
) -> Result<RescaledSide, CalibrateError> {
    let Some(params) = params else {
        return Ok(RescaledSide {
            out_of_fold: None,
            final_fit: None,
            final_multicalibration: None,
            rescaled_items: None,
            evaluated: None,
        });
    };
    let inputs = params.inputs(&data.confidence);
    let out_of_fold = rescale_out_of_fold(data, params, &inputs, options)?;
    let items = RescaledItems {
        correct: out_of_fold.items.iter().map(|&i| data.correct[i]).collect(),
        target: data
            .target
            .as_ref()
            .map(|t| out_of_fold.items.iter().map(|&i| t[i]).collect()),
    };
    // The final fit is needed only for the report and the calibrator: it
    // runs beside the out-of-fold evaluation rather than the folds' fits.
    let (final_fit, evaluated) = rayon::join(
        || {
            let fit = params
                .fit_inputs(&inputs, &data.correct)
                .map_err(CalibrateError::FinalFit)?;
            let all: Vec<usize> = (0..data.len()).collect();
            let patches = options
                .multicalibration
                .as_ref()
                .map(|mc| multicalibrate(mc, &fit, &inputs, data, &all));
            Ok::<_, CalibrateError>((fit, patches))
        },
        || {
            let sample = items.sample(&out_of_fold.confidence, options);
            evaluate(&sample, &out_of_fold.confidence, &items.correct)
        },
    );
    let (final_fit, final_multicalibration) = final_fit?;
    Ok(RescaledSide {
        out_of_fold: Some(out_of_fold),
        final_fit: Some(final_fit),
        final_multicalibration,
        rescaled_items: Some(items),
        evaluated: Some(evaluated),
    })
}

/// The raw half of [`calibrate`]: the raw evaluation (no intervals yet)
/// and the cutoffs of every procedure.
pub(super) struct RawSide {
    pub(super) sample: Sample,
    pub(super) evaluated: Evaluated,
    pub(super) cutoffs: Cutoffs,
    pub(super) other_procedures: Vec<Cutoffs>,
}

pub(super) fn raw_side(
    data: &CalibrationData,
    options: &CalibrateOptions,
) -> Result<RawSide, CalibrateError> {
    let sample = Sample::new(
        &data.confidence,
        &data.correct,
        data.target.as_deref(),
        options.bins,
    )
    .with_smooth_ece(options.smooth_ece);
    let (evaluated, cutoffs) = rayon::join(
        || evaluate(&sample, &data.confidence, &data.correct),
        || {
            let (confidence, correct) = sample.sorted();
            let ranked =
                RankedItems::from_ascending(confidence, correct, sample.order(), options.seed);
            raw_cutoffs(&ranked, options)
        },
    );
    let (cutoffs, other_procedures) = cutoffs?;
    Ok(RawSide {
        sample,
        evaluated,
        cutoffs,
        other_procedures,
    })
}

impl super::CalibrationReport {
    /// Cutoffs tested afresh on `confidence`, the scores the deployed rule
    /// computes for items its fit never saw, in place of those chosen on
    /// the report's own confidences (which, for a learned combination, are
    /// out of fold: not what is deployed).
    /// `tested` are the items' indices in the report's data.
    pub fn test_on_held_out(
        &mut self,
        tested: &[usize],
        confidence: &[f64],
        correct: &[bool],
        options: &CalibrateOptions,
    ) -> Result<(), CalibrateError> {
        let (cutoffs, other_procedures) = tested_cutoffs(confidence, correct, options)?;
        self.tested_items = Some(tested.to_vec());
        self.cutoffs = cutoffs;
        self.other_procedures = other_procedures;
        super::mark_calibrated_cutoffs(&mut self.cutoffs, self.final_fit.as_ref());
        self.cutoffs_on = "held-out";
        Ok(())
    }
}

/// The cutoffs of the chosen procedure and of the others on `confidence`
/// as given: the scores a deployed rule computes for items its fit never
/// saw (a learned combination's held-out items).
pub(crate) fn tested_cutoffs(
    confidence: &[f64],
    correct: &[bool],
    options: &CalibrateOptions,
) -> Result<(Cutoffs, Vec<Cutoffs>), CalibrateError> {
    raw_cutoffs(
        &RankedItems::new(confidence, correct, options.seed),
        options,
    )
}

/// The cutoffs of the chosen procedure and of the others, on the raw
/// confidence, the one the deployed rule compares: the validated rule is
/// the deployed rule, whatever the rescaler. One ranking serves them all.
fn raw_cutoffs(
    ranked: &RankedItems,
    options: &CalibrateOptions,
) -> Result<(Cutoffs, Vec<Cutoffs>), CalibrateError> {
    let params = options.cutoffs.with_seed(options.seed);
    let cutoffs = params.fit_ranked(ranked)?;
    let other_procedures = Procedure::ALL
        .into_iter()
        .filter(|&p| p != params.procedure && !params.target_precisions.is_empty())
        .map(|procedure| {
            CutoffParams {
                procedure,
                ..params.clone()
            }
            .fit_ranked(ranked)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((cutoffs, other_procedures))
}

/// What the report shows of one set of confidences.
pub(super) struct Evaluated {
    pub(super) evaluation: Evaluation,
    pub(super) bins: Vec<Bin>,
    /// Thinned to at most 202 points.
    pub(super) risk_coverage: Vec<selective::CurvePoint>,
    /// Empty where smooth ECE is off.
    pub(super) smooth: Vec<smooth::SmoothPoint>,
}

/// The metrics, bins and curves of `sample` (whose items are `confidence`
/// and `correct`), without intervals.
fn evaluate(sample: &Sample, confidence: &[f64], correct: &[bool]) -> Evaluated {
    let ((metrics, bins), risk_coverage) = rayon::join(
        || sample.metrics_and_bins(None),
        || selective::thin(&sample.risk_coverage_curve(), 200),
    );
    let sigma = metrics.smooth_ece_sigma;
    let smooth = if sigma.is_finite() {
        smooth::smooth_curve(confidence, correct, sigma, 200)
    } else {
        Vec::new()
    };
    Evaluated {
        evaluation: Evaluation {
            metrics,
            ci: Intervals::new(),
        },
        bins,
        risk_coverage,
        smooth,
    }
}

/// Fits one rescaler per fold on its training items and predicts its test
/// items, from each item's rescaler input ([`RescalerParams::inputs`]).
fn rescale_out_of_fold(
    data: &CalibrationData,
    params: &RescalerParams,
    inputs: &[f64],
    options: &CalibrateOptions,
) -> Result<OutOfFold, CalibrateError> {
    let n = data.len();
    let folds = cv::split(
        options.cv,
        options.folds,
        &data.correct,
        data.groups.as_deref(),
        options.seed,
    )?;
    let fitted: Vec<(FoldFit, Vec<Predicted>)> = (0..folds.test.len())
        .into_par_iter()
        .map(|f| {
            let train = folds.train(f, n);
            let train_inputs: Vec<f64> = train.iter().map(|&i| inputs[i]).collect();
            let labels: Vec<bool> = train.iter().map(|&i| data.correct[i]).collect();
            let rescaler = params
                .fit_inputs(&train_inputs, &labels)
                .map_err(|source| CalibrateError::Fit { fold: f, source })?;
            let multicalibration = options
                .multicalibration
                .as_ref()
                .map(|mc| multicalibrate(mc, &rescaler, inputs, data, &train));
            let predictions = folds.test[f]
                .iter()
                .map(|&i| {
                    let base = rescaler.predict_input(inputs[i]);
                    let patched = multicalibration
                        .as_ref()
                        .map_or(base, |m| m.predict(base, &data.features, i));
                    (i, (base, patched))
                })
                .collect();
            let fit = FoldFit {
                fold: f,
                train_items: train.len(),
                test_items: folds.test[f].len(),
                rescaler,
                multicalibration,
            };
            Ok((fit, predictions))
        })
        .collect::<Result<_, CalibrateError>>()?;
    let mut predicted: Vec<Option<(f64, f64)>> = vec![None; n];
    let mut fits = Vec::with_capacity(fitted.len());
    for (fit, predictions) in fitted {
        for (i, p) in predictions {
            predicted[i] = Some(p);
        }
        fits.push(fit);
    }
    let items: Vec<usize> = (0..n).filter(|&i| predicted[i].is_some()).collect();
    let confidence = items
        .iter()
        .filter_map(|&i| predicted[i].map(|p| p.1))
        .collect();
    let base_confidence = options.multicalibration.is_some().then(|| {
        items
            .iter()
            .filter_map(|&i| predicted[i].map(|p| p.0))
            .collect()
    });
    Ok(OutOfFold {
        items,
        confidence,
        base_confidence,
        fits,
    })
}

/// A tested item, its base prediction and its prediction after the patches
/// (the same without multicalibration).
type Predicted = (usize, (f64, f64));

/// Multicalibration on `items` after `rescaler`, from their rescaler inputs.
/// A rescaler and its multicalibration fitted on `fitted` items only, and
/// each `tested` item's confidence through them: what a calibrator saved
/// from the two computes for it.
pub(crate) struct HeldOutMap {
    pub(crate) rescaler: Rescaler,
    pub(crate) multicalibration: Option<Multicalibrated>,
    pub(crate) confidence: Vec<f64>,
}

pub(crate) fn held_out_map(
    data: &CalibrationData,
    params: &RescalerParams,
    options: &CalibrateOptions,
    fitted: &[usize],
    tested: &[usize],
) -> Result<HeldOutMap, CalibrateError> {
    let inputs = params.inputs(&data.confidence);
    let fit_inputs: Vec<f64> = fitted.iter().map(|&i| inputs[i]).collect();
    let labels: Vec<bool> = fitted.iter().map(|&i| data.correct[i]).collect();
    let rescaler = params
        .fit_inputs(&fit_inputs, &labels)
        .map_err(CalibrateError::FinalFit)?;
    let multicalibration = options
        .multicalibration
        .as_ref()
        .map(|mc| multicalibrate(mc, &rescaler, &inputs, data, fitted));
    let confidence = tested
        .iter()
        .map(|&i| {
            let base = rescaler.predict_input(inputs[i]);
            multicalibration
                .as_ref()
                .map_or(base, |m| m.predict(base, &data.features, i))
        })
        .collect();
    Ok(HeldOutMap {
        rescaler,
        multicalibration,
        confidence,
    })
}

fn multicalibrate(
    params: &MulticalibrationParams,
    rescaler: &Rescaler,
    inputs: &[f64],
    data: &CalibrationData,
    items: &[usize],
) -> Multicalibrated {
    let base: Vec<f64> = items
        .iter()
        .map(|&i| rescaler.predict_input(inputs[i]))
        .collect();
    params.fit(&base, &data.correct, &data.features, items)
}
