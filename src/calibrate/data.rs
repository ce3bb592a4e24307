//! The calibration engine's input: one confidence and one correctness label
//! per item, with an optional group and target, taken from a [`Table`].

use super::multical::{FeatureColumn, FeatureValues};
use crate::table::{Location, Table, TableError};

/// Columns of calibration data, one entry per item.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CalibrationData {
    /// Model confidence in [0, 1].
    pub confidence: Vec<f64>,
    pub correct: Vec<bool>,
    /// Group of each item (e.g. repository), for group-split CV and group bootstrap.
    pub groups: Option<Vec<String>>,
    /// A continuous quality value (e.g. similarity) for Spearman's rho.
    pub target: Option<Vec<f64>>,
    /// Group features for multicalibration (`--group-features`).
    pub features: Vec<FeatureColumn>,
}

/// Where correctness comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum LabelSource {
    /// A 0/1 or true/false column.
    Column(String),
    /// correct = score >= threshold.
    Threshold { column: String, threshold: f64 },
}

/// Which columns hold what.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnSpec {
    pub confidence: String,
    pub label: LabelSource,
    pub group: Option<String>,
    pub target: Option<String>,
}

/// A cell that is present but not a valid value for calibration.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error(transparent)]
    Table(#[from] TableError),
    #[error("{at}: confidence {value} is outside [0, 1]")]
    ConfidenceOutOfRange { at: Location, value: f64 },
    #[error("{at}: confidence is NaN")]
    ConfidenceNan { at: Location },
    #[error("{at}: '{value}' is not a label; use 0/1 or true/false")]
    BadLabel { at: Location, value: String },
    #[error("{at}: score is not a finite number")]
    ScoreNotFinite { at: Location },
    #[error("{at}: target is not a finite number")]
    TargetNotFinite { at: Location },
}

impl CalibrationData {
    /// Reads and validates the columns `spec` names from `table`.
    pub fn from_table(table: &Table, spec: &ColumnSpec) -> Result<CalibrationData, DataError> {
        let n = table.len();
        let confidence_column = table.column(&spec.confidence)?;
        // The two columns every calibration reads are parsed side by side;
        // the first error in file order is the confidence column's.
        let (confidence, correct) = rayon::join(
            || {
                (0..n)
                    .map(|row| confidence(&confidence_column, row))
                    .collect::<Result<Vec<f64>, _>>()
            },
            || labels(table, &spec.label, n),
        );
        let mut data = CalibrationData {
            confidence: confidence?,
            correct: correct?,
            groups: None,
            target: None,
            features: Vec::new(),
        };
        if let Some(name) = &spec.group {
            data.groups = Some(table.column(name)?.texts()?);
        }
        if let Some(name) = &spec.target {
            let column = table.column(name)?;
            let target = (0..n).map(|row| {
                let value = column.number(row)?;
                if value.is_finite() {
                    Ok(value)
                } else {
                    Err(DataError::TargetNotFinite {
                        at: column.location(row),
                    })
                }
            });
            data.target = Some(target.collect::<Result<_, _>>()?);
        }
        Ok(data)
    }

    /// Adds the group features `names` from `table`: a column whose every
    /// cell is a finite number is numeric, any other is categorical. An
    /// empty cell is an error naming its line and column.
    pub fn read_features(&mut self, table: &Table, names: &[String]) -> Result<(), DataError> {
        for name in names {
            let cells = table.column(name)?.texts()?;
            self.features.push(FeatureColumn {
                name: name.clone(),
                values: FeatureValues::from_cells(cells),
            });
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.confidence.len()
    }

    pub fn is_empty(&self) -> bool {
        self.confidence.is_empty()
    }
}

/// Each row's label: a 0/1 column, or a score column against its threshold.
fn labels(table: &Table, source: &LabelSource, n: usize) -> Result<Vec<bool>, DataError> {
    match source {
        LabelSource::Column(name) => {
            let column = table.column(name)?;
            (0..n).map(|row| label(&column, row)).collect()
        }
        LabelSource::Threshold { column, threshold } => {
            let column = table.column(column)?;
            (0..n)
                .map(|row| {
                    let score = column.number(row)?;
                    if !score.is_finite() {
                        return Err(DataError::ScoreNotFinite {
                            at: column.location(row),
                        });
                    }
                    Ok(score >= *threshold)
                })
                .collect()
        }
    }
}

fn confidence(column: &crate::table::Column, row: usize) -> Result<f64, DataError> {
    let value = column.number(row)?;
    if value.is_nan() {
        return Err(DataError::ConfidenceNan {
            at: column.location(row),
        });
    }
    if !(0.0..=1.0).contains(&value) {
        return Err(DataError::ConfidenceOutOfRange {
            at: column.location(row),
            value,
        });
    }
    Ok(value)
}

/// A 0/1 or true/false label cell.
pub fn label(column: &crate::table::Column, row: usize) -> Result<bool, DataError> {
    let text = column.text(row)?;
    let is = |word: &str| text.eq_ignore_ascii_case(word);
    if text == "1" || text == "1.0" || is("true") {
        Ok(true)
    } else if text == "0" || text == "0.0" || is("false") {
        Ok(false)
    } else {
        Err(DataError::BadLabel {
            at: column.location(row),
            value: text.to_owned(),
        })
    }
}
