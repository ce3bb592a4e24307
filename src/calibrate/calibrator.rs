//! The calibrator file: everything needed to turn a new item's raw
//! confidence into a calibrated one and a decision, saved as versioned JSON.
//!
//! A [`Calibrator`] is built from a [`CalibrationReport`] (its final fit on
//! every labelled item, its cutoffs and its cross-validated metrics) plus
//! where the items came from ([`Provenance`]). It is read back with
//! [`Calibrator::load`], which refuses another format or version, and applied
//! with [`Calibrator::apply`]. This is the one part of `calibrate` that reads
//! and writes a file, because the file *is* its subject; reading items and
//! writing their decisions is the apply stage's (`crate::apply`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::cutoffs::{self, Cutoff, Cutoffs, Decision};
use super::multical::{FeatureValue, Multicalibrated};
use super::rescale::{HistogramBinning, Isotonic, Method, Platt, Rescaler};
use super::{CalibrationReport, CvStrategy};
use crate::artifact::{WriteError, write_atomic};

/// The `format` field of every calibrator file.
pub const FORMAT: &str = "codecal-calibrator";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// A fitted rescaler as saved: tagged by its kind, so that reading is exact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SavedRescaler {
    Logistic(Platt),
    Isotonic(Isotonic),
    Histogram(HistogramBinning),
}

impl From<&Rescaler> for SavedRescaler {
    fn from(rescaler: &Rescaler) -> Self {
        match rescaler {
            Rescaler::Logistic(m) => SavedRescaler::Logistic(m.clone()),
            Rescaler::Isotonic(m) => SavedRescaler::Isotonic(m.clone()),
            Rescaler::Histogram(m) => SavedRescaler::Histogram(m.clone()),
        }
    }
}

impl SavedRescaler {
    fn rescaler(&self) -> Rescaler {
        match self {
            SavedRescaler::Logistic(m) => Rescaler::Logistic(m.clone()),
            SavedRescaler::Isotonic(m) => Rescaler::Isotonic(m.clone()),
            SavedRescaler::Histogram(m) => Rescaler::Histogram(m.clone()),
        }
    }

    /// Why these coefficients cannot be applied, if they cannot, naming the
    /// key: a table of the wrong shape, a value that is not a probability,
    /// or an isotonic table that is not monotone.
    fn defect(&self) -> Option<String> {
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        let unit = |v: f64| (0.0..=1.0).contains(&v);
        match self {
            SavedRescaler::Logistic(m) if !finite(&[m.slope, m.intercept]) => {
                Some("rescaler.slope or rescaler.intercept is not a finite number".into())
            }
            SavedRescaler::Isotonic(m)
                if m.x.is_empty()
                    || m.x.len() != m.y.len()
                    || !finite(&m.x)
                    || !finite(&m.y)
                    || m.x.windows(2).any(|w| w[0] >= w[1]) =>
            {
                Some(
                    "the isotonic table (rescaler.x, rescaler.y) needs equally many finite x and \
                     y, x strictly ascending"
                        .into(),
                )
            }
            SavedRescaler::Isotonic(m) => {
                if let Some(i) = m.y.iter().position(|&y| !unit(y)) {
                    Some(format!(
                        "rescaler.y[{i}] is {}, not a probability in [0, 1]",
                        m.y[i]
                    ))
                } else {
                    m.y.windows(2).position(|w| w[1] < w[0]).map(|i| {
                        format!(
                            "rescaler.y[{}] is {}, below rescaler.y[{i}] {}: an isotonic map never \
                             decreases",
                            i + 1,
                            m.y[i + 1],
                            m.y[i]
                        )
                    })
                }
            }
            SavedRescaler::Histogram(m) if m.values.is_empty() => {
                Some("rescaler.values: the histogram table needs at least one bin".into())
            }
            SavedRescaler::Histogram(m) => m
                .values
                .iter()
                .position(|v| v.is_some_and(|v| !unit(v)))
                .map(|i| {
                    format!(
                        "rescaler.values[{i}] is {}, not a probability in [0, 1]",
                        m.values[i].unwrap_or_default()
                    )
                }),
            _ => None,
        }
    }

    /// Whether this kind of table is what `method` fits.
    fn fits(&self, method: Method) -> bool {
        use crate::calibrate::rescale::Feature;
        match self {
            SavedRescaler::Logistic(m) => matches!(
                (method, m.feature),
                (Method::Platt | Method::Temperature, Feature::Logit)
                    | (Method::PlattLn, Feature::Ln)
                    | (Method::PlattP, Feature::P)
            ),
            SavedRescaler::Isotonic(_) => method == Method::Isotonic,
            SavedRescaler::Histogram(_) => method == Method::Histogram,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            SavedRescaler::Logistic(_) => "logistic",
            SavedRescaler::Isotonic(_) => "isotonic",
            SavedRescaler::Histogram(_) => "histogram",
        }
    }
}

/// What makes one set of saved cutoffs unusable, naming the key under `key`.
/// " for target precision T", or nothing where no target was asked for.
fn for_target(target: &Option<f64>) -> String {
    target.map_or_else(String::new, |t| format!(" for target precision {t}"))
}

/// The first of `all[..i]` whose target is `target`.
fn accept_before(all: &[Cutoff], i: usize, target: f64) -> Option<usize> {
    all[..i].iter().position(|c| c.target_precision == target)
}

fn cutoff_set_defect(key: &str, accept: &[Cutoff], reject: Option<&Cutoff>) -> Option<String> {
    let unit = |x: f64| (0.0..=1.0).contains(&x);
    let reject = reject.and_then(|r| r.cutoff);
    if let Some(r) = reject.filter(|&r| !unit(r)) {
        return Some(format!("{key}.reject.cutoff is {r}, outside [0, 1]"));
    }
    let all = accept;
    for (i, accept) in all.iter().enumerate() {
        let target = accept.target_precision;
        if !(target > 0.0 && target < 1.0) {
            return Some(format!(
                "{key}.accept[{i}].target_precision is {target}, outside (0, 1)"
            ));
        }
        if let Some(j) = accept_before(all, i, target) {
            return Some(format!(
                "{key}.accept[{i}].target_precision {target} repeats {key}.accept[{j}]'s: \
                 `apply --target-precision` could not tell them apart"
            ));
        }
        match (accept.cutoff, reject) {
            (Some(t), _) if !unit(t) => {
                return Some(format!("{key}.accept[{i}].cutoff is {t}, outside [0, 1]"));
            }
            (Some(t), Some(r)) if t < r => {
                return Some(format!(
                    "{key}.accept[{i}].cutoff {t} is below {key}.reject.cutoff {r}"
                ));
            }
            _ => {}
        }
    }
    None
}

/// How "correct" was defined for the training items.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelDefinition {
    /// The column labels came from (a 0/1 column, or the score column thresholded).
    pub column: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thresholds_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operating_point: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
}

/// The generator whose confidences were calibrated, where known.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Generator {
    pub backend: String,
    pub model: String,
    /// sha256 of the model's weights file, where the backend knows it (local).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_sha256: Option<String>,
    /// sha256 of the prompt template (or of the prompts file's template text).
    pub prompt_template_sha256: String,
    /// The decoding parameters, as the generation stage recorded them.
    pub decoding: serde_json::Value,
}

/// Where the training items came from: what the file cannot infer itself.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Provenance {
    /// The confidence measure (the column or measure name).
    pub measure: String,
    pub label: LabelDefinition,
    pub generator: Option<Generator>,
}

/// The training items and how well the calibration did on them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Training {
    pub n: usize,
    pub base_rate: f64,
    pub cv: CvStrategy,
    pub folds: usize,
    pub seed: u64,
    /// The cross-validated metrics: `raw` and `rescaled` as in `calibrate --json`.
    pub metrics: serde_json::Value,
}

/// A saved calibration, ready to apply to new items.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibrator {
    pub format: String,
    pub format_version: u32,
    pub codecal_version: String,
    /// The confidence measure the rescaler expects.
    pub measure: String,
    pub method: Method,
    /// The final fit on every training item; `None` with `--method none` or
    /// when no rescaler could be fitted (the raw confidence is then used).
    pub rescaler: Option<SavedRescaler>,
    /// Patches after the rescaler that calibrate every group of the saved
    /// group features (`--method multicalibration`); `apply` then needs
    /// those columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multicalibration: Option<Multicalibrated>,
    /// Where `measure` is a learned combination of several measures: the
    /// fit that turns their values into the one the rescaler takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub combination: Option<super::combine::Combination>,
    pub label: LabelDefinition,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<Generator>,
    pub training: Training,
    /// The confidences the cutoffs were chosen on: "raw" (the measure as
    /// `apply` reads it), "held-out" (a learned combination's score from
    /// the saved fit, on items it was not fitted on; compared as "raw"),
    /// "held-out-calibrated" (the saved map's multicalibrated confidence, on
    /// items it was not fitted on) or "out-of-fold" (calibrators before 0.1:
    /// the rescaled confidence).
    pub cutoffs_on: String,
    pub cutoffs: Cutoffs,
}

/// Why a calibrator file could not be read or used.
#[derive(Debug, thiserror::Error)]
pub enum CalibratorError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a codecal calibrator: {reason}")]
    NotCalibrator { path: PathBuf, reason: String },
    #[error(
        "{path}: calibrator format version {found}, but codecal {ours} reads version {FORMAT_VERSION}"
    )]
    Version {
        path: PathBuf,
        /// The key's value as the file has it (`"1"`, `1.5`, `missing`).
        found: String,
        ours: &'static str,
    },
    #[error("{path}: {reason}")]
    Invalid { path: PathBuf, reason: String },
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("the calibrator has no accept cutoff{target}; the targets it has: {1}", target = for_target(.0))]
    NoSuchTarget(Option<f64>, String),
}

/// One item's calibrated confidence and decision.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Applied {
    pub calibrated: f64,
    pub decision: Decision,
}

impl Calibrator {
    /// The calibrator a report defines, with its provenance.
    pub fn from_report(report: &CalibrationReport, provenance: Provenance) -> Calibrator {
        let metrics = serde_json::json!({
            "raw": report.raw,
            "rescaled": report.rescaled,
        });
        Calibrator {
            format: FORMAT.to_owned(),
            format_version: FORMAT_VERSION,
            codecal_version: env!("CARGO_PKG_VERSION").to_owned(),
            measure: provenance.measure,
            method: report.method,
            rescaler: report.final_fit.as_ref().map(SavedRescaler::from),
            multicalibration: report.final_multicalibration.clone(),
            combination: None,
            label: provenance.label,
            generator: provenance.generator,
            training: Training {
                n: report.raw.metrics.n,
                base_rate: report.raw.metrics.base_rate,
                cv: report.cv,
                folds: report.folds,
                seed: report.seed,
                metrics,
            },
            cutoffs_on: report.cutoffs_on.to_owned(),
            cutoffs: report.cutoffs.clone(),
        }
    }

    /// Pretty JSON, one trailing newline; floats round-trip exactly.
    pub fn to_json(&self) -> String {
        // Plain structs of numbers and strings: serde_json cannot fail on them.
        let mut text = serde_json::to_string_pretty(self).expect("a calibrator serializes");
        text.push('\n');
        text
    }

    /// Writes the file atomically (a temporary file, then a rename).
    pub fn save(&self, path: &Path) -> Result<(), CalibratorError> {
        write_atomic(path, self.to_json().as_bytes())?;
        Ok(())
    }

    /// Reads a calibrator, checking the format, its version and its tables.
    pub fn load(path: &Path) -> Result<Calibrator, CalibratorError> {
        let text = crate::artifact::read_regular_text(path, crate::artifact::JSON_CAP_BYTES)
            .map_err(|source| CalibratorError::Io {
                path: path.to_owned(),
                source,
            })?;
        Calibrator::parse(path, &text)
    }

    /// [`Calibrator::load`] on text already read; `path` names it in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Calibrator, CalibratorError> {
        let not_calibrator = |reason: String| CalibratorError::NotCalibrator {
            path: path.to_owned(),
            reason,
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| not_calibrator(format!("not JSON: {e}")))?;
        match value.get("format").and_then(|f| f.as_str()) {
            Some(FORMAT) => {}
            Some(other) => return Err(not_calibrator(format!("its format is {other:?}"))),
            None => return Err(not_calibrator(format!("no \"format\": \"{FORMAT}\" key"))),
        }
        let found = value.get("format_version");
        if found.and_then(|v| v.as_u64()) != Some(u64::from(FORMAT_VERSION)) {
            return Err(CalibratorError::Version {
                path: path.to_owned(),
                found: found.map_or("missing".to_owned(), |v| v.to_string()),
                ours: env!("CARGO_PKG_VERSION"),
            });
        }
        let invalid = |reason: String| CalibratorError::Invalid {
            path: path.to_owned(),
            reason,
        };
        // The key path, so that a bad value is found without reading the file.
        let calibrator: Calibrator = serde_path_to_error::deserialize(value)
            .map_err(|e| invalid(format!("{}: {}", e.path(), e.inner())))?;
        if let Some(defect) = calibrator.rescaler.as_ref().and_then(SavedRescaler::defect) {
            return Err(invalid(defect));
        }
        if let Some(defect) = calibrator
            .multicalibration
            .as_ref()
            .and_then(Multicalibrated::defect)
        {
            return Err(invalid(defect));
        }
        match (&calibrator.rescaler, calibrator.method) {
            (Some(r), method) if !r.fits(method) => {
                return Err(invalid(format!(
                    "rescaler.kind is {} (feature as saved), which method {} does not fit",
                    r.kind(),
                    serde_json::to_string(&method).unwrap_or_default()
                )));
            }
            // A single-class training set leaves the raw confidence as it is.
            (None, method)
                if method != Method::None
                    && calibrator.training.base_rate > 0.0
                    && calibrator.training.base_rate < 1.0 =>
            {
                return Err(invalid(format!(
                    "rescaler is missing, but method {} needs one",
                    serde_json::to_string(&method).unwrap_or_default()
                )));
            }
            _ => {}
        }
        if !matches!(
            calibrator.cutoffs_on.as_str(),
            "raw" | "held-out" | "held-out-calibrated" | "out-of-fold"
        ) {
            return Err(invalid(format!(
                "cutoffs_on is {:?}; codecal writes \"raw\", \"held-out\" (a learned \
                 combination's), \"held-out-calibrated\" (multicalibrated per-group cutoffs) \
                 or, before 0.1, \"out-of-fold\"",
                calibrator.cutoffs_on
            )));
        }
        calibrator
            .cutoffs_defect()
            .map_or(Ok(()), |d| Err(invalid(d)))?;
        Ok(calibrator)
    }

    /// What makes the saved cutoffs unusable, naming the key: a target
    /// precision outside (0, 1), a cutoff outside [0, 1], or an accept
    /// cutoff below the reject cutoff (a hand-edited file; codecal writes
    /// none of these).
    fn cutoffs_defect(&self) -> Option<String> {
        let delta = self.cutoffs.delta;
        if !(delta > 0.0 && delta < 1.0) {
            return Some(format!("cutoffs.delta is {delta}, outside (0, 1)"));
        }
        if let Some(defect) = self.combination.as_ref().and_then(|c| c.defect()) {
            return Some(defect);
        }
        let pooled = std::iter::once((
            "cutoffs".to_owned(),
            &self.cutoffs.accept,
            self.cutoffs.reject.as_ref(),
        ));
        let groups = self.cutoffs.groups.iter().flat_map(|by| {
            by.groups.iter().enumerate().map(|(g, group)| {
                (
                    format!("cutoffs.groups.groups[{g}]"),
                    &group.accept,
                    group.reject.as_ref(),
                )
            })
        });
        pooled
            .chain(groups)
            .find_map(|(key, accept, reject)| cutoff_set_defect(&key, accept, reject))
    }

    /// The accept cutoff for `target`, or the first one saved when `None`.
    pub fn accept_cutoff(&self, target: Option<f64>) -> Result<&Cutoff, CalibratorError> {
        let saved = || {
            self.cutoffs
                .accept
                .iter()
                .map(|c| c.target_precision.to_string())
                .reduce(|a, b| a + ", " + &b)
                .unwrap_or_else(|| "none".to_owned())
        };
        let found = match target {
            Some(t) => self.cutoffs.accept_for(t),
            None => self.cutoffs.accept.first(),
        };
        found.ok_or_else(|| CalibratorError::NoSuchTarget(target, saved()))
    }

    /// The calibrated confidence of raw confidence `p`.
    pub fn calibrate(&self, p: f64) -> f64 {
        self.rescaler
            .as_ref()
            .map_or(p, |r| r.rescaler().predict(p))
    }

    /// The calibrated confidence and the decision under `accept` and the
    /// pooled reject cutoff.
    pub fn apply(&self, p: f64, accept: &Cutoff) -> Applied {
        self.apply_with(p, accept, self.cutoffs.reject.as_ref())
    }

    /// The calibrated confidence and the decision under the given cutoffs,
    /// compared on the scale they were chosen on: the raw confidence, or the
    /// calibrated one in calibrators that chose them out of fold.
    pub fn apply_with(&self, p: f64, accept: &Cutoff, reject: Option<&Cutoff>) -> Applied {
        self.decide(p, self.calibrate(p), accept, reject)
    }

    /// The calibrated confidence of raw confidence `p` for an item whose
    /// group features are `features` (in [`Multicalibrated::feature_names`]'
    /// order): the rescaler, then the multicalibration patches.
    pub fn calibrate_in_groups(&self, p: f64, features: &[FeatureValue]) -> f64 {
        let base = self.calibrate(p);
        self.multicalibration
            .as_ref()
            .map_or(base, |m| m.predict_values(base, features))
    }

    /// [`apply_with`](Self::apply_with) for an item with group features.
    pub fn apply_in_groups(
        &self,
        p: f64,
        features: &[FeatureValue],
        accept: &Cutoff,
        reject: Option<&Cutoff>,
    ) -> Applied {
        self.decide(p, self.calibrate_in_groups(p, features), accept, reject)
    }

    fn decide(&self, p: f64, calibrated: f64, accept: &Cutoff, reject: Option<&Cutoff>) -> Applied {
        let compared = if self.compares_calibrated() {
            calibrated
        } else {
            p
        };
        Applied {
            calibrated,
            decision: cutoffs::decide(accept, reject, compared),
        }
    }

    /// Whether the cutoffs compare an item's calibrated confidence rather
    /// than its raw one: multicalibrated per-group cutoffs, tested on
    /// held-out items through the saved map (or, in calibrators before 0.1,
    /// chosen out of fold).
    pub fn compares_calibrated(&self) -> bool {
        matches!(
            self.cutoffs_on.as_str(),
            "held-out-calibrated" | "out-of-fold"
        )
    }

    /// The column whose value picks an item's own cutoffs, if any.
    pub fn group_column(&self) -> Option<&str> {
        self.cutoffs.groups.as_ref().map(|g| g.column.as_str())
    }

    /// The accept and reject cutoffs for an item of `group`: its group's own
    /// where the calibrator has them (a group it never saw gets none, so its
    /// items go to review), else the pooled ones.
    pub fn cutoffs_for(
        &self,
        target: Option<f64>,
        group: Option<&str>,
    ) -> Result<(Cutoff, Option<Cutoff>), CalibratorError> {
        let pooled = self.accept_cutoff(target)?;
        let (Some(by), Some(group)) = (&self.cutoffs.groups, group) else {
            return Ok((pooled.clone(), self.cutoffs.reject.clone()));
        };
        let Some(own) = by.group(group) else {
            return Ok((Cutoff::none(pooled.target_precision), None));
        };
        let accept = own
            .accept
            .iter()
            .find(|c| c.target_precision == pooled.target_precision)
            .cloned()
            .unwrap_or_else(|| Cutoff::none(pooled.target_precision));
        Ok((accept, own.reject.clone()))
    }
}

#[cfg(test)]
mod tests;
