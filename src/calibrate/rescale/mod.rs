//! Rescalers: maps from a raw confidence to a calibrated probability.
//!
//! Each rescaler follows linfa's shape: parameters, `check`, `fit` on
//! (confidences, labels), then a fitted model that can `predict`. This module
//! adds [`Method`], the user's choice, and [`Rescaler`], any fitted model.
//! Which items a rescaler is fitted on is cross-validation's business.

mod histogram;
mod isotonic;
mod logistic;

use std::borrow::Cow;

use serde::Serialize;

pub use histogram::{HistogramBinning, HistogramParamError, HistogramParams, HistogramValidParams};
pub use isotonic::{Isotonic, IsotonicParams};
pub use logistic::{CLIP, Feature, FitError, ParamError, Platt, PlattParams, PlattValidParams};

/// The rescaling methods `codecal calibrate --method` offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Logistic regression on logit(p) (Platt scaling).
    Platt,
    /// Logistic regression on ln(p), as worded in seed 000.
    PlattLn,
    /// Logistic regression on p itself, "Open the Oyster"'s Eq. 4.
    PlattP,
    /// Slope on logit(p) only, no intercept.
    Temperature,
    /// Pool-adjacent-violators isotonic regression.
    Isotonic,
    /// Success rate per equal-width confidence bin.
    Histogram,
    /// No rescaling: report raw metrics only.
    None,
}

crate::choices!(Method { Platt => "platt", PlattLn => "platt-ln", PlattP => "platt-p", Temperature => "temperature", Isotonic => "isotonic", Histogram => "histogram", None => "none" });

/// What a calibration fits: one rescaler, or multicalibration on top of a
/// base rescaler (`calibrate --method`, a run's `calibration.method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodChoice {
    Rescale(Method),
    Multicalibration,
}

impl MethodChoice {
    /// The rescaler fitted first: the method itself, or `base` under
    /// multicalibration.
    pub fn base(self, base: Method) -> Method {
        match self {
            MethodChoice::Rescale(method) => method,
            MethodChoice::Multicalibration => base,
        }
    }
}

impl crate::choice::Choice for MethodChoice {
    const NAMES: &'static [(Self, &'static str)] = &[
        (MethodChoice::Rescale(Method::Platt), "platt"),
        (MethodChoice::Rescale(Method::PlattLn), "platt-ln"),
        (MethodChoice::Rescale(Method::PlattP), "platt-p"),
        (MethodChoice::Rescale(Method::Temperature), "temperature"),
        (MethodChoice::Rescale(Method::Isotonic), "isotonic"),
        (MethodChoice::Rescale(Method::Histogram), "histogram"),
        (MethodChoice::Rescale(Method::None), "none"),
        (MethodChoice::Multicalibration, "multicalibration"),
    ];
}
crate::choice_io!(MethodChoice);

/// Checked settings for fitting the chosen [`Method`].
#[derive(Clone, Debug)]
pub enum RescalerParams {
    Logistic(PlattValidParams),
    Isotonic(IsotonicParams),
    Histogram(HistogramValidParams),
}

/// A bad setting for the chosen method.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum RescalerParamError {
    #[error(transparent)]
    Logistic(#[from] ParamError),
    #[error(transparent)]
    Histogram(#[from] HistogramParamError),
}

impl RescalerParams {
    /// Parameters for `method`; `penalty` keeps scikit-learn's C = 1 on the
    /// logistic slope, `bins` sizes histogram binning. `None` for `Method::None`.
    pub fn new(
        method: Method,
        penalty: bool,
        bins: usize,
    ) -> Result<Option<RescalerParams>, RescalerParamError> {
        let logistic = |params: PlattParams| -> Result<_, RescalerParamError> {
            let c = penalty.then_some(1.0);
            Ok(Some(RescalerParams::Logistic(
                params.inverse_penalty(c).check()?,
            )))
        };
        match method {
            Method::Platt => logistic(Platt::params()),
            Method::PlattLn => logistic(Platt::params().feature(Feature::Ln)),
            Method::PlattP => logistic(Platt::params().feature(Feature::P)),
            Method::Temperature => logistic(Platt::temperature()),
            Method::Isotonic => Ok(Some(RescalerParams::Isotonic(Isotonic::params()))),
            Method::Histogram => Ok(Some(RescalerParams::Histogram(
                HistogramBinning::params().bins(bins).check()?,
            ))),
            Method::None => Ok(None),
        }
    }

    /// What the rescaler is fitted on, item by item: a logistic rescaler's
    /// feature of each confidence, or the confidence itself. Computed once,
    /// it serves every fold and the final fit.
    pub fn inputs<'c>(&self, confidences: &'c [f64]) -> Cow<'c, [f64]> {
        match self {
            RescalerParams::Logistic(p) => Cow::Owned(p.features(confidences)),
            RescalerParams::Isotonic(_) | RescalerParams::Histogram(_) => {
                Cow::Borrowed(confidences)
            }
        }
    }

    /// Fits on [`inputs`](Self::inputs); the same fit as [`fit`](Self::fit).
    pub fn fit_inputs(&self, inputs: &[f64], labels: &[bool]) -> Result<Rescaler, FitError> {
        Ok(match self {
            RescalerParams::Logistic(p) => Rescaler::Logistic(p.fit_features(inputs, labels)?),
            _ => self.fit(inputs, labels)?,
        })
    }

    pub fn fit(&self, confidences: &[f64], labels: &[bool]) -> Result<Rescaler, FitError> {
        Ok(match self {
            RescalerParams::Logistic(p) => Rescaler::Logistic(p.fit(confidences, labels)?),
            RescalerParams::Isotonic(p) => Rescaler::Isotonic(p.fit(confidences, labels)?),
            RescalerParams::Histogram(p) => Rescaler::Histogram(p.fit(confidences, labels)?),
        })
    }
}

/// Any fitted rescaler. Serializes as its coefficients.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Rescaler {
    Logistic(Platt),
    Isotonic(Isotonic),
    Histogram(HistogramBinning),
}

impl Rescaler {
    pub fn predict(&self, p: f64) -> f64 {
        match self {
            Rescaler::Logistic(m) => m.predict(p),
            Rescaler::Isotonic(m) => m.predict(p),
            Rescaler::Histogram(m) => m.predict(p),
        }
    }

    /// The prediction from [`RescalerParams::inputs`]' value for a confidence.
    pub fn predict_input(&self, input: f64) -> f64 {
        match self {
            Rescaler::Logistic(m) => m.predict_feature(input),
            _ => self.predict(input),
        }
    }
}
