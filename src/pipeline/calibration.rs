//! The `[calibration]` section of a run config as the calibration engine's
//! options, shared by every flow's report. Not the reports themselves.

use super::PipelineError;
use super::config::{RunConfig, enum_value};
use crate::calibrate::{BinSpec, Binning, CalibrateOptions, CutoffParams};

/// The `[calibration]` section as the engine's options.
pub(crate) fn calibrate_options(config: &RunConfig) -> Result<CalibrateOptions, PipelineError> {
    Ok(CalibrateOptions {
        method: enum_value("calibration.method", &config.calibration.method)?,
        penalty: true,
        cv: enum_value("calibration.cv", &config.calibration.cv)?,
        folds: config.calibration.folds,
        bins: BinSpec {
            count: config.calibration.bins,
            binning: Binning::EqualWidth,
        },
        bootstrap: config.calibration.bootstrap,
        bootstrap_by_group: false,
        seed: config.calibration.seed,
        cutoffs: CutoffParams {
            target_precisions: config.calibration.target_precision.clone(),
            delta: config.calibration.delta,
            reject_precision: config.calibration.reject_precision,
            ..CutoffParams::default()
        },
    })
}
