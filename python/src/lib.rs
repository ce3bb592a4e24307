//! The Python extension `codecal._codecal`: codecal's calibration engine
//! behind a few functions over plain bytes (float64 and uint8 arrays) and
//! JSON text, for the Python layer in `python/codecal/`.
//!
//! What it is not: the Python API. Argument names, defaults, numpy and
//! pandas conversion, and the `ValueError`s a user sees first are
//! `codecal/__init__.py`'s. This layer checks lengths and values again, so
//! that no input reaches the engine unchecked, and raises `ValueError`; it
//! releases the GIL while the engine works.

use codecal::choice::{Choice, parse_choice};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde::Deserialize;

use codecal::apply::decide_items;
use codecal::calibrate::calibrator::LabelDefinition;
use codecal::calibrate::grouped::{GroupColumn, GroupedParams, calibrate_grouped};
use codecal::calibrate::{
    BinSpec, Binning, CalibrateOptions, CalibrationData, CalibrationReport, Calibrator,
    CutoffParams, CvStrategy, Method, Procedure, Provenance, Sample,
};

fn value_error(message: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(argument_names(&message.to_string()))
}

/// The engine's messages name command-line flags (`--target-precision`);
/// from Python they name the keyword argument (`target_precision`).
fn argument_names(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("--") {
        out.push_str(&rest[..at]);
        let flag = &rest[at + 2..];
        let end = flag
            .find(|c: char| !(c.is_ascii_lowercase() || c == '-'))
            .unwrap_or(flag.len());
        match end {
            0 => out.push_str("--"),
            _ => out.push_str(&flag[..end].replace('-', "_")),
        }
        rest = &flag[end..];
    }
    out.push_str(rest);
    out
}

/// Native-endian float64 values; each finite and in [0, 1].
fn probabilities(bytes: &[u8], name: &str) -> PyResult<Vec<f64>> {
    if !bytes.len().is_multiple_of(8) {
        return Err(value_error(format!("{name}: not float64 data")));
    }
    let values: Vec<f64> = bytes
        .chunks_exact(8)
        .map(|chunk| {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            f64::from_ne_bytes(word)
        })
        .collect();
    match values.iter().position(|p| !(0.0..=1.0).contains(p)) {
        Some(i) => Err(value_error(format!(
            "{name}[{i}] is {}, not a probability in [0, 1]",
            values[i]
        ))),
        None => Ok(values),
    }
}

/// uint8 values, each 0 or 1.
fn labels(bytes: &[u8], name: &str) -> PyResult<Vec<bool>> {
    match bytes.iter().position(|&b| b > 1) {
        Some(i) => Err(value_error(format!(
            "{name}[{i}] is {}, not 0 or 1",
            bytes[i]
        ))),
        None => Ok(bytes.iter().map(|&b| b == 1).collect()),
    }
}

fn same_length(n: usize, other: usize, name: &str) -> PyResult<()> {
    match n == other {
        true => Ok(()),
        false => Err(value_error(format!(
            "{name} has {other} items, confidence {n}"
        ))),
    }
}

fn choice<T: Choice>(text: &str, name: &str) -> PyResult<T> {
    parse_choice::<T>(text).map_err(|e| {
        value_error(format!(
            "{name}={text:?}; use one of {}",
            e.expected.join(", ")
        ))
    })
}

/// The settings of `codecal.calibrate`, as the Python layer sends them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    measure: String,
    method: String,
    penalty: bool,
    cv: Option<String>,
    folds: usize,
    bins: usize,
    binning: String,
    bootstrap: usize,
    bootstrap_by_group: bool,
    seed: u64,
    target_precision: Vec<f64>,
    delta: f64,
    reject_precision: Option<f64>,
    procedure: String,
    min_coverage: Option<f64>,
    rescale_by: Option<String>,
}

impl Settings {
    /// The options `codecal calibrate` would build from the same flags.
    fn options(&self, grouped: bool) -> PyResult<CalibrateOptions> {
        let defaults = CutoffParams::default();
        let cv = match &self.cv {
            Some(text) => choice::<CvStrategy>(text, "cv")?,
            None if grouped => CvStrategy::Group,
            None => CvStrategy::Kfold,
        };
        Ok(CalibrateOptions {
            method: choice::<Method>(&self.method, "method")?,
            penalty: self.penalty,
            cv,
            folds: self.folds,
            bins: BinSpec {
                count: self.bins,
                binning: choice::<Binning>(&self.binning, "binning")?,
            },
            bootstrap: self.bootstrap,
            bootstrap_by_group: self.bootstrap_by_group,
            bootstrap_metrics: None,
            seed: self.seed,
            cutoffs: CutoffParams {
                target_precisions: match self.target_precision.is_empty() {
                    true => defaults.target_precisions.clone(),
                    false => self.target_precision.clone(),
                },
                delta: self.delta,
                reject_precision: self.reject_precision,
                procedure: choice::<Procedure>(&self.procedure, "procedure")?,
                min_coverage: self.min_coverage,
                ..defaults
            },
            smooth_ece: true,
            multicalibration: None,
        })
    }
}

/// A finished calibration: the report and the calibrator it defines.
#[pyclass(module = "codecal._codecal", frozen)]
struct Calibration {
    report: CalibrationReport,
    calibrator: Calibrator,
}

#[pymethods]
impl Calibration {
    /// The report as `codecal calibrate --json` prints it.
    fn json(&self) -> String {
        codecal::report::json(&self.report)
    }

    fn markdown(&self) -> String {
        codecal::report::markdown(&self.report)
    }

    fn calibrator(&self) -> PyCalibrator {
        PyCalibrator {
            inner: self.calibrator.clone(),
        }
    }

    fn reliability_svg(&self) -> String {
        codecal::report::reliability_svg(&self.report)
    }

    fn risk_coverage_svg(&self) -> String {
        codecal::report::risk_coverage_svg(&self.report)
    }

    /// Each item's out-of-fold rescaled confidence, NaN where no fold tested it.
    fn out_of_fold<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes: Vec<u8> = self
            .report
            .out_of_fold_confidence
            .iter()
            .flat_map(|p| p.unwrap_or(f64::NAN).to_ne_bytes())
            .collect();
        PyBytes::new(py, &bytes)
    }
}

/// `codecal.calibrate`'s engine: `codecal calibrate` on in-memory columns.
#[pyfunction]
#[pyo3(signature = (confidence, correct, groups, by, settings))]
fn calibrate(
    py: Python<'_>,
    confidence: &[u8],
    correct: &[u8],
    groups: Option<Vec<String>>,
    by: Vec<(String, Vec<String>)>,
    settings: &str,
) -> PyResult<Calibration> {
    let settings: Settings = serde_json::from_str(settings).map_err(value_error)?;
    let confidence = probabilities(confidence, "confidence")?;
    let correct = labels(correct, "correct")?;
    same_length(confidence.len(), correct.len(), "correct")?;
    if let Some(groups) = &groups {
        same_length(confidence.len(), groups.len(), "groups")?;
    }
    let options = settings.options(groups.is_some())?;
    let grouped = GroupedParams {
        cutoffs_by_first: !by.is_empty() && !settings.target_precision.is_empty(),
        by: by
            .into_iter()
            .map(|(name, values)| GroupColumn { name, values })
            .collect(),
        rescale_by: settings.rescale_by.clone(),
    };
    let data = CalibrationData {
        confidence,
        correct,
        groups,
        target: None,
        features: Vec::new(),
    };
    let report = py
        .detach(|| calibrate_grouped(&data, &options, &grouped))
        .map_err(value_error)?;
    let provenance = Provenance {
        measure: settings.measure.clone(),
        label: LabelDefinition {
            column: "correct".into(),
            ..LabelDefinition::default()
        },
        generator: None,
    };
    let calibrator = Calibrator::from_report(&report, provenance);
    Ok(Calibration { report, calibrator })
}

/// Every metric of the engine on one set of confidences, as JSON.
#[pyfunction]
fn metrics(
    py: Python<'_>,
    confidence: &[u8],
    correct: &[u8],
    bins: usize,
    binning: &str,
) -> PyResult<String> {
    let confidence = probabilities(confidence, "confidence")?;
    let correct = labels(correct, "correct")?;
    same_length(confidence.len(), correct.len(), "correct")?;
    if confidence.is_empty() || bins == 0 {
        return Err(value_error("metrics need at least one item and one bin"));
    }
    let spec = BinSpec {
        count: bins,
        binning: choice::<Binning>(binning, "binning")?,
    };
    let metrics = py.detach(|| Sample::new(&confidence, &correct, None, spec).metrics(None));
    serde_json::to_string(&metrics).map_err(value_error)
}

/// An SVG document as PNG bytes.
#[pyfunction]
fn svg_to_png<'py>(py: Python<'py>, svg: &str) -> PyResult<Bound<'py, PyBytes>> {
    let (png, _warnings) = codecal::report::render_png(svg).map_err(value_error)?;
    Ok(PyBytes::new(py, &png))
}

/// A saved calibrator (`codecal calibrate --save`), to rescale and decide.
#[pyclass(name = "Calibrator", module = "codecal._codecal", frozen)]
struct PyCalibrator {
    inner: Calibrator,
}

#[pymethods]
impl PyCalibrator {
    #[staticmethod]
    fn load(path: std::path::PathBuf) -> PyResult<Self> {
        Calibrator::load(&path)
            .map(|inner| PyCalibrator { inner })
            .map_err(|e| PyOSError::new_err(e.to_string()))
    }

    fn save(&self, path: std::path::PathBuf) -> PyResult<()> {
        self.inner
            .save(&path)
            .map_err(|e| PyOSError::new_err(e.to_string()))
    }

    fn to_json(&self) -> String {
        self.inner.to_json()
    }

    /// The measure, method and group column the calibrator was made with.
    fn describe(&self) -> (String, String, Option<String>) {
        let method = self.inner.method.to_string();
        let group = self.inner.group_column().map(str::to_owned);
        (self.inner.measure.clone(), method, group)
    }

    /// The calibrated confidence of each raw confidence.
    fn transform<'py>(&self, py: Python<'py>, confidence: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        let confidence = probabilities(confidence, "confidence")?;
        self.check_single_measure()?;
        let calibrated: Vec<u8> = confidence
            .iter()
            .flat_map(|&p| self.inner.calibrate(p).to_ne_bytes())
            .collect();
        Ok(PyBytes::new(py, &calibrated))
    }

    /// Calibrated confidences and decisions, as `codecal apply` gives them.
    #[pyo3(signature = (confidence, target_precision=None, groups=None))]
    fn decide<'py>(
        &self,
        py: Python<'py>,
        confidence: &[u8],
        target_precision: Option<f64>,
        groups: Option<Vec<String>>,
    ) -> PyResult<(Bound<'py, PyBytes>, Vec<&'static str>)> {
        let confidence = probabilities(confidence, "confidence")?;
        self.check_single_measure()?;
        match (self.inner.group_column(), &groups) {
            (Some(column), None) => {
                return Err(value_error(format!(
                    "groups: the calibrator's cutoffs are per group of {column:?}; pass each item's group"
                )));
            }
            (_, Some(groups)) => same_length(confidence.len(), groups.len(), "groups")?,
            (None, None) => {}
        }
        self.inner
            .accept_cutoff(target_precision)
            .map_err(value_error)?;
        let applied = py
            .detach(|| {
                decide_items(
                    &self.inner,
                    &confidence,
                    groups.as_deref(),
                    None,
                    target_precision,
                )
            })
            .map_err(value_error)?;
        let calibrated: Vec<u8> = applied
            .iter()
            .flat_map(|a| a.calibrated.to_ne_bytes())
            .collect();
        let decisions = applied.iter().map(|a| a.decision.as_str()).collect();
        Ok((PyBytes::new(py, &calibrated), decisions))
    }
}

impl PyCalibrator {
    /// Python decides on one measure's confidences; a calibrator that
    /// combines measures or multicalibrates needs what `codecal apply` reads.
    fn check_single_measure(&self) -> PyResult<()> {
        if self.inner.combination.is_some() {
            return Err(value_error(
                "this calibrator combines several measures; use `codecal apply` on a table holding them",
            ));
        }
        if self.inner.multicalibration.is_some() {
            return Err(value_error(
                "this calibrator is multicalibrated; use `codecal apply` on a table holding its group features",
            ));
        }
        Ok(())
    }
}

#[pymodule]
fn _codecal(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(calibrate, module)?)?;
    module.add_function(wrap_pyfunction!(metrics, module)?)?;
    module.add_function(wrap_pyfunction!(svg_to_png, module)?)?;
    module.add_class::<Calibration>()?;
    module.add_class::<PyCalibrator>()?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
