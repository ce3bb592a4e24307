//! Reads an operating point back from a thresholds file that `report`
//! wrote (`thresholds/*.toml`), so later stages name a threshold by file and
//! operating point instead of copying a number.

use std::path::{Path, PathBuf};

/// The three operating points a thresholds file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperatingPointName {
    BestF1,
    HighPrecision,
    HighRecall,
}

crate::choices!(OperatingPointName { BestF1 => "best-f1", HighPrecision => "high-precision", HighRecall => "high-recall" });

impl OperatingPointName {
    /// The TOML section of this point.
    pub fn section(self) -> &'static str {
        crate::choice::Choice::choice_name(self)
    }
}

/// A threshold taken from a file.
#[derive(Clone, Debug, PartialEq)]
pub struct FileThreshold {
    pub metric: String,
    pub threshold: f64,
}

/// What a thresholds file says about the metric as a whole: how it was
/// made and how well it separates the human ratings (the report's Table II).
#[derive(Clone, Debug, PartialEq)]
pub struct ThresholdsSummary {
    pub command: Option<String>,
    pub auc: Option<f64>,
    pub auc_ci: Option<[f64; 2]>,
}

#[derive(Debug, thiserror::Error)]
pub enum ThresholdFileError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not TOML: {message}")]
    Toml { path: PathBuf, message: String },
    #[error("{path}: no key '{key}'")]
    Missing { path: PathBuf, key: String },
    #[error("{path}: '{key}' = {value} is not a finite number")]
    NotANumber {
        path: PathBuf,
        key: String,
        value: String,
    },
}

/// The metric and the threshold of `point` in the thresholds file at `path`.
pub fn read_threshold(
    path: &Path,
    point: OperatingPointName,
) -> Result<FileThreshold, ThresholdFileError> {
    let table = read_table(path)?;
    let missing = |key: String| ThresholdFileError::Missing {
        path: path.to_owned(),
        key,
    };
    let metric = table
        .get("metric")
        .and_then(toml::Value::as_str)
        .ok_or_else(|| missing("metric".to_owned()))?;
    let key = format!("[{}] threshold", point.section());
    let value = table
        .get(point.section())
        .and_then(|section| section.get("threshold"))
        .ok_or_else(|| missing(key.clone()))?;
    // "nan" and "inf" are TOML floats, but no score is above NaN.
    let threshold =
        number(value)
            .filter(|t| t.is_finite())
            .ok_or_else(|| ThresholdFileError::NotANumber {
                path: path.to_owned(),
                key,
                value: value.to_string(),
            })?;
    Ok(FileThreshold {
        metric: metric.to_owned(),
        threshold,
    })
}

/// The command, AUC and AUC interval at the top of the thresholds file at
/// `path`, each `None` where the file leaves it out.
pub fn read_summary(path: &Path) -> Result<ThresholdsSummary, ThresholdFileError> {
    let table = read_table(path)?;
    let auc_ci = table.get("auc_ci").and_then(|v| {
        let pair = v.as_array()?;
        Some([number(pair.first()?)?, number(pair.get(1)?)?])
    });
    Ok(ThresholdsSummary {
        command: table
            .get("command")
            .and_then(toml::Value::as_str)
            .map(str::to_owned),
        auc: table.get("auc").and_then(number),
        auc_ci,
    })
}

fn read_table(path: &Path) -> Result<toml::Table, ThresholdFileError> {
    let text = crate::artifact::read_regular_text(path, crate::artifact::JSON_CAP_BYTES).map_err(
        |source| ThresholdFileError::Io {
            path: path.to_owned(),
            source,
        },
    )?;
    text.parse::<toml::Table>()
        .map_err(|e| ThresholdFileError::Toml {
            path: path.to_owned(),
            message: e.to_string().lines().next().unwrap_or_default().to_owned(),
        })
}

/// A TOML float, or an integer read as one.
fn number(value: &toml::Value) -> Option<f64> {
    value
        .as_float()
        .or_else(|| value.as_integer().map(|i| i as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_committed_sbert_file() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("thresholds/sbert-minilm.toml");
        let best = read_threshold(&path, OperatingPointName::BestF1).unwrap();
        let recall = read_threshold(&path, OperatingPointName::HighRecall).unwrap();
        assert_eq!(best.metric, "sbert_cosine01");
        assert!(recall.threshold < best.threshold && best.threshold < 1.0);
    }

    #[test]
    fn missing_point_names_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.toml");
        std::fs::write(&path, "metric = \"m\"\n\n[best-f1]\nthreshold = 0.5\n").unwrap();
        let err = read_threshold(&path, OperatingPointName::HighPrecision).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("no key '[high-precision] threshold'"),
            "{err}"
        );
    }

    #[test]
    fn a_threshold_that_is_not_a_finite_number_is_refused_naming_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.toml");
        for value in ["nan", "\"high\""] {
            let text = format!("metric = \"m\"\n\n[best-f1]\nthreshold = {value}\n");
            std::fs::write(&path, text).unwrap();
            let err = read_threshold(&path, OperatingPointName::BestF1).unwrap_err();
            assert!(
                err.to_string().ends_with(&format!(
                    "'[best-f1] threshold' = {value} is not a finite number"
                )),
                "{err}"
            );
        }
    }

    #[test]
    fn the_summary_reads_the_committed_file_with_toml() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("thresholds/sbert-minilm.toml");
        let summary = read_summary(&path).unwrap();
        assert_eq!(summary.auc, Some(0.915509));
        assert_eq!(summary.auc_ci, Some([0.87023, 0.949012]));
        assert!(
            summary
                .command
                .unwrap()
                .starts_with("codecal thresholds --ratings")
        );
    }
}
