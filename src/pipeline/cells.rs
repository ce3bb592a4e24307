//! One calibrated cell, as both flows make it: the `[calibration]` section as
//! the engine's options; calibration with the raw numbers kept, and a note
//! said, where rescaling cannot be had; the generator a cell's calibrator
//! records; and the cell's files (its calibration directory and calibrator)
//! with its view for the page. Not which cells a flow has, nor any table.

use std::path::Path;

use super::PipelineError;
use super::artifacts::stage_error;
use super::config::RunConfig;
use super::generation::generation_params;
use crate::artifact::create_dir;
use crate::calibrate::calibrator::{Generator, LabelDefinition};
use crate::calibrate::combine::Combination;
use crate::calibrate::{
    BinSpec, Binning, CalibrateOptions, CalibrationData, CalibrationReport, Calibrator,
    CutoffParams, Method, MethodChoice, Provenance, calibrate,
};
use crate::digest::sha256_hex;
use crate::generate::row::GenerationRow;
use crate::report::run::CellView;

/// The `[calibration]` section as the engine's options.
pub(crate) fn calibrate_options(config: &RunConfig) -> Result<CalibrateOptions, PipelineError> {
    let c = &config.calibration;
    let method = c.method.base(c.base.unwrap_or(Method::Platt));
    let multicalibration = (c.method == MethodChoice::Multicalibration)
        .then(|| c.multicalibration.clone().unwrap_or_default());
    Ok(CalibrateOptions {
        method,
        penalty: true,
        cv: config.calibration.cv,
        folds: config.calibration.folds,
        bins: BinSpec {
            count: config.calibration.bins,
            binning: Binning::EqualWidth,
        },
        bootstrap: config.calibration.bootstrap,
        // Resample whole groups (repositories, problems, neighbourhoods): items
        // of one group are not independent, and an item bootstrap would
        // narrow the intervals for every duplicate (issue "fidelity, third
        // pass", item 5). Every cell of a run carries its groups.
        bootstrap_by_group: true,
        bootstrap_metrics: None,
        seed: config.calibration.seed,
        cutoffs: CutoffParams {
            target_precisions: config.calibration.target_precision.clone(),
            delta: config.calibration.delta,
            reject_precision: config.calibration.reject_precision,
            procedure: config.calibration.procedure.unwrap_or_default(),
            min_coverage: config.calibration.min_coverage,
            ..CutoffParams::default()
        },
        smooth_ece: true,
        multicalibration,
    })
}

/// Calibrates a cell; where rescaling cannot be had (a training fold with
/// one class, a confidence that does not vary), keeps the raw numbers and
/// says so in `notes` as "`subject`: not rescaled (why)". A warning that the
/// cell's items are all of one class (so no skill score and no rescaled row),
/// or that its groups are too few for group cross-validation, becomes a note
/// "`model`: warning", said once however many cells share it.
pub(crate) fn calibrate_or_raw(
    data: &CalibrationData,
    options: &CalibrateOptions,
    notes: &mut Vec<String>,
    model: &str,
    subject: &str,
) -> Result<CalibrationReport, PipelineError> {
    match calibrate(data, options) {
        Ok(report) => {
            let said_once = |w: &&String| w.starts_with("all ") || w.starts_with("few groups");
            for warning in report.warnings.iter().filter(said_once) {
                let note = format!("{model}: {warning}");
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
            Ok(report)
        }
        Err(e) => {
            notes.push(format!("{subject}: not rescaled ({e})"));
            let raw_only = CalibrateOptions {
                method: Method::None,
                multicalibration: None,
                ..options.clone()
            };
            calibrate(data, &raw_only).map_err(stage_error)
        }
    }
}

/// Where one calibrated cell's files go, and what its calibrator records.
pub(crate) struct CellFiles<'a> {
    /// Path components under `calibration/` and `calibrators/`, e.g.
    /// language, model, measure and operating point.
    pub parts: Vec<&'a str>,
    pub measure: &'a str,
    pub label: LabelDefinition,
    pub generator: Option<Generator>,
}

impl CellFiles<'_> {
    /// `calibration/<parts>` (the files of `codecal calibrate --out`).
    pub(crate) fn calibration_dir(&self) -> String {
        format!("calibration/{}", self.parts.join("/"))
    }

    /// `calibrators/<parts>.json`.
    pub(crate) fn calibrator_file(&self) -> String {
        format!("calibrators/{}.json", self.parts.join("/"))
    }

    /// Writes the calibration directory and the calibrator file under `dir`;
    /// `combination` is the learned combination of measures the cell's
    /// measure is, if it is one, saved in its calibrator.
    pub(crate) fn write(
        self,
        dir: &Path,
        report: &CalibrationReport,
        combination: Option<Combination>,
    ) -> Result<(), PipelineError> {
        crate::report::write_calibration_dir(&dir.join(self.calibration_dir()), report)
            .map_err(stage_error)?;
        let path = dir.join(self.calibrator_file());
        if let Some(parent) = path.parent() {
            create_dir(parent)?;
        }
        let provenance = Provenance {
            measure: self.measure.to_owned(),
            label: self.label,
            generator: self.generator,
        };
        let mut calibrator = Calibrator::from_report(report, provenance);
        calibrator.combination = combination;
        calibrator.save(&path).map_err(stage_error)
    }
}

/// The generator behind a model's generation rows: its backend and model as
/// the rows name them, the prompt recipe's hash and the decoding parameters.
pub(crate) fn generator(
    config: &RunConfig,
    rows: &[GenerationRow],
    prompt_template: &str,
) -> Result<Generator, PipelineError> {
    let first = rows.first();
    let params = generation_params(config)?;
    Ok(Generator {
        backend: first.map(|r| r.backend.clone()).unwrap_or_default(),
        model: first.map(|r| r.model.clone()).unwrap_or_default(),
        model_sha256: first
            .map(|r| r.model_sha256.clone())
            .filter(|s| !s.is_empty()),
        prompt_template_sha256: sha256_hex(prompt_template.as_bytes()),
        decoding: serde_json::to_value(&params).unwrap_or_default(),
    })
}

/// A calibrated cell's key for the page: the names of its key columns and
/// its values, e.g. `["model", "measure"]` and `["qwen", "total_prob"]`.
pub(crate) struct CellKey<'a> {
    pub names: &'a [&'a str],
    pub values: Vec<String>,
}

/// Writes a calibrated cell's files and returns its view for the page:
/// `item_indices` are its items' positions in the report's item list, in
/// the order of `data`.
pub(crate) fn write_cell(
    dir: &Path,
    files: CellFiles,
    key: CellKey,
    report: &CalibrationReport,
    data: &CalibrationData,
    item_indices: &[usize],
    combination: Option<Combination>,
) -> Result<CellView, PipelineError> {
    let view = CellView::new(
        key.names,
        key.values,
        files.calibration_dir(),
        report,
        &data.confidence,
        &data.correct,
        item_indices,
    );
    files.write(dir, report, combination)?;
    Ok(view)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::RunConfig;

    /// Issue "fidelity, third pass", item 5: a run's intervals resample whole
    /// groups (repositories, problems, neighbourhoods), not items.
    #[test]
    fn a_run_bootstraps_by_group() {
        let default = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/default.toml");
        let config = RunConfig::read(Path::new(default)).unwrap();
        assert!(calibrate_options(&config).unwrap().bootstrap_by_group);
    }

    fn data(correct: &[bool]) -> CalibrationData {
        CalibrationData {
            confidence: (0..correct.len())
                .map(|i| (i as f64 + 0.5) / correct.len() as f64)
                .collect(),
            correct: correct.to_vec(),
            groups: None,
            target: None,
            features: Vec::new(),
        }
    }

    #[test]
    fn a_cell_that_cannot_be_rescaled_keeps_its_raw_numbers_with_a_note() {
        let options = CalibrateOptions {
            bootstrap: 0,
            ..CalibrateOptions::default()
        };
        let mut notes = Vec::new();
        // One correct item among twenty: some training fold has none.
        let mut correct = vec![false; 20];
        correct[19] = true;
        let report =
            calibrate_or_raw(&data(&correct), &options, &mut notes, "m", "m total").unwrap();
        assert!(report.rescaled.is_none());
        assert_eq!(report.raw.metrics.n, 20);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("m total: not rescaled ("), "{notes:?}");
        // A model that got nothing right: said once, however many cells.
        let mut notes = Vec::new();
        for measure in ["m a", "m b"] {
            calibrate_or_raw(&data(&[false; 20]), &options, &mut notes, "m", measure).unwrap();
        }
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("m: all 20 items are incorrect"),
            "{notes:?}"
        );
    }
}
