//! Reads an operating point back from a thresholds file that `report`
//! wrote (`thresholds/*.toml`), so later stages name a threshold by file and
//! operating point instead of copying a number.

use std::path::{Path, PathBuf};

/// The three operating points a thresholds file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OperatingPointName {
    BestF1,
    HighPrecision,
    HighRecall,
}

impl OperatingPointName {
    /// The TOML section of this point.
    pub fn section(self) -> &'static str {
        match self {
            OperatingPointName::BestF1 => "best-f1",
            OperatingPointName::HighPrecision => "high-precision",
            OperatingPointName::HighRecall => "high-recall",
        }
    }
}

/// A threshold taken from a file.
#[derive(Clone, Debug, PartialEq)]
pub struct FileThreshold {
    pub metric: String,
    pub threshold: f64,
}

#[derive(Debug, thiserror::Error)]
pub enum ThresholdFileError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: no key '{key}'")]
    Missing { path: PathBuf, key: String },
    #[error("{path}:{line}: '{value}' is not a number")]
    NotANumber {
        path: PathBuf,
        line: usize,
        value: String,
    },
}

/// The metric and the threshold of `point` in the thresholds file at `path`.
pub fn read_threshold(
    path: &Path,
    point: OperatingPointName,
) -> Result<FileThreshold, ThresholdFileError> {
    let text = crate::artifact::read_regular_text(path, crate::artifact::JSON_CAP_BYTES).map_err(
        |source| ThresholdFileError::Io {
            path: path.to_owned(),
            source,
        },
    )?;
    let missing = |key: String| ThresholdFileError::Missing {
        path: path.to_owned(),
        key,
    };
    let mut section = String::new();
    let (mut metric, mut threshold) = (None, None);
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_owned();
            continue;
        }
        let Some((key, value)) = line.split_once(" = ") else {
            continue;
        };
        if section.is_empty() && key == "metric" {
            metric = Some(value.trim_matches('"').to_owned());
        }
        if section == point.section() && key == "threshold" {
            // "nan" and "inf" parse as floats, but no score is above NaN.
            let parsed = value
                .parse::<f64>()
                .ok()
                .filter(|t| t.is_finite())
                .ok_or_else(|| ThresholdFileError::NotANumber {
                    path: path.to_owned(),
                    line: number + 1,
                    value: value.to_owned(),
                })?;
            threshold = Some(parsed);
        }
    }
    Ok(FileThreshold {
        metric: metric.ok_or_else(|| missing("metric".to_owned()))?,
        threshold: threshold.ok_or_else(|| missing(format!("[{}] threshold", point.section())))?,
    })
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
}
