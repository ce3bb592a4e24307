//! The apply stage: items that carry a confidence measure, each written back
//! with its calibrated confidence and its decision (accept, review, reject)
//! under a saved calibrator. No labels and no references are needed.
//!
//! Rows are passed on byte for byte: a JSONL row keeps its text and gains two
//! keys at its end; a CSV row keeps its cells and gains two columns. What a
//! calibrator is and how it decides is `calibrate::calibrator`'s.

use std::path::{Path, PathBuf};

use crate::calibrate::calibrator::{Applied, Calibrator, CalibratorError};
use crate::calibrate::multical::FeatureValue;
use crate::table::{Format, Table, TableError};
use crate::task::examples::is_sandbox_measure;

/// Which column or measure to read, and which cutoff to decide with.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ApplyOptions {
    /// The measure's column; the calibrator's own measure when `None`.
    pub confidence: Option<String>,
    /// The accept cutoff's target precision; the calibrator's first when `None`.
    pub target_precision: Option<f64>,
    pub format: Option<Format>,
}

/// Why items could not be decided.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Table(#[from] TableError),
    #[error(transparent)]
    Calibrator(#[from] CalibratorError),
    #[error(
        "--confidence {given}, but the calibrator was made for measure {saved}; a rescaler fitted on one measure means nothing for another"
    )]
    OtherMeasure { given: String, saved: String },
    #[error(
        "{path}: no column {measure} (the calibrator's measure), and no \"confidence\" or \"reflective\" object holding it; columns: {available}"
    )]
    NoMeasure {
        path: PathBuf,
        measure: String,
        available: String,
    },
    #[error(
        "{path}: no column {measure}: it comes from running each answer in the sandbox on its prompt's examples or the model's tests; decide the lines of a task run's examples/<model>.jsonl, which hold it"
    )]
    NoSpecMeasure { path: PathBuf, measure: String },
    #[error("{path}:{line}: {column} is {value}, not a probability in [0, 1]")]
    NotProbability {
        path: PathBuf,
        line: u64,
        column: String,
        value: String,
    },
    #[error("{path}:{line}: the item's model is {found}, but the calibrator was made for {saved}")]
    OtherModel {
        path: PathBuf,
        line: u64,
        found: String,
        saved: String,
    },
    #[error("{path}: no column {column}, which the calibrator's per-group cutoffs are chosen by")]
    NoGroup { path: PathBuf, column: String },
    #[error("{path}: no column {column}, a group feature of the calibrator's multicalibration")]
    NoFeature { path: PathBuf, column: String },
    #[error(
        "{path}:{line}: {column} is {value:?}, not a finite number; the calibrator cuts group feature {column} into numeric bins"
    )]
    NotNumber {
        path: PathBuf,
        line: u64,
        column: String,
        value: String,
    },
    #[error("{path}: already has a {column} column; codecal apply would overwrite it")]
    Taken { path: PathBuf, column: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Decides every item of `input` and returns the output file's text.
pub fn apply_file(
    calibrator: &Calibrator,
    input: &Path,
    options: &ApplyOptions,
) -> Result<String, ApplyError> {
    let measure = calibrator_measure(calibrator, options.confidence.as_deref())?;
    calibrator.accept_cutoff(options.target_precision)?;
    let table = Table::read(input, options.format)?;
    for column in ["calibrated", "decision"] {
        if table.column_names().iter().any(|c| c == column) {
            return Err(ApplyError::Taken {
                path: input.to_owned(),
                column: column.to_owned(),
            });
        }
    }
    check_model(calibrator, &table)?;
    let confidences = match &calibrator.combination {
        Some(combination) => combined_values(&table, combination)?,
        None => measure_values(&table, &measure)?,
    };
    let applied = decide_rows(calibrator, &table, &confidences, options.target_precision)?;
    let decided: Vec<(String, String)> = applied
        .iter()
        .map(|applied| {
            (
                serde_json::Number::from_f64(applied.calibrated)
                    .map_or_else(|| "null".to_owned(), |n| n.to_string()),
                applied.decision.as_str().to_owned(),
            )
        })
        .collect();
    let format = options
        .format
        .or_else(|| Format::from_extension(input))
        .unwrap_or(Format::Jsonl);
    match format {
        Format::Jsonl => jsonl_with_decisions(input, &table, &decided),
        Format::Csv => csv_with_decisions(&table, &decided),
    }
}

/// The calibrator's measure; a `--confidence` naming another is refused,
/// because a rescaler fitted on one measure means nothing for another.
pub fn calibrator_measure(
    calibrator: &Calibrator,
    given: Option<&str>,
) -> Result<String, ApplyError> {
    match given {
        Some(given) if given != calibrator.measure => Err(ApplyError::OtherMeasure {
            given: given.to_owned(),
            saved: calibrator.measure.clone(),
        }),
        _ => Ok(calibrator.measure.clone()),
    }
}

/// Each row's calibrated confidence and decision, under its group's own
/// cutoffs where the calibrator has them.
pub fn decide_rows(
    calibrator: &Calibrator,
    table: &Table,
    confidences: &[f64],
    target: Option<f64>,
) -> Result<Vec<Applied>, ApplyError> {
    let groups = match calibrator.group_column() {
        Some(name) => {
            let column = table.column(name).map_err(|_| ApplyError::NoGroup {
                path: table.path().to_owned(),
                column: name.to_owned(),
            })?;
            Some(column.texts()?)
        }
        None => None,
    };
    let features = feature_cells(calibrator, table)?;
    Ok(decide_items(
        calibrator,
        confidences,
        groups.as_deref(),
        features.as_deref(),
        target,
    )?)
}

/// Each item's calibrated confidence and decision, under its group's own
/// cutoffs where the calibrator has them (`groups`, one per item) and its
/// group features where it multicalibrates (`features`, one column per
/// feature in the calibrator's order). The lengths are the caller's to check.
pub fn decide_items(
    calibrator: &Calibrator,
    confidences: &[f64],
    groups: Option<&[String]>,
    features: Option<&[Vec<String>]>,
    target: Option<f64>,
) -> Result<Vec<Applied>, CalibratorError> {
    confidences
        .iter()
        .enumerate()
        .map(|(row, &p)| {
            let group = groups.map(|g| g[row].as_str());
            let (accept, reject) = calibrator.cutoffs_for(target, group)?;
            Ok(match features {
                Some(columns) => {
                    let values: Vec<FeatureValue> = columns
                        .iter()
                        .map(|c| FeatureValue::Text(&c[row]))
                        .collect();
                    calibrator.apply_in_groups(p, &values, &accept, reject.as_ref())
                }
                None => calibrator.apply_with(p, &accept, reject.as_ref()),
            })
        })
        .collect()
}

/// Each group feature's cells, where the calibrator multicalibrates; a
/// missing column or an empty cell is refused, naming it.
fn feature_cells(
    calibrator: &Calibrator,
    table: &Table,
) -> Result<Option<Vec<Vec<String>>>, ApplyError> {
    let Some(fit) = &calibrator.multicalibration else {
        return Ok(None);
    };
    let columns = fit.feature_names().enumerate().map(|(feature, name)| {
        let column = table.column(name).map_err(|_| ApplyError::NoFeature {
            path: table.path().to_owned(),
            column: name.to_owned(),
        })?;
        let cells = column.texts()?;
        // A number that is not finite, or text, would otherwise fall in the
        // lowest bin or in no group, silently.
        let is_number = |cell: &String| cell.trim().parse::<f64>().is_ok_and(f64::is_finite);
        if fit.is_numeric(feature)
            && let Some(row) = cells.iter().position(|cell| !is_number(cell))
        {
            return Err(ApplyError::NotNumber {
                path: table.path().to_owned(),
                line: column.location(row).line,
                column: name.to_owned(),
                value: cells[row].clone(),
            });
        }
        Ok::<_, ApplyError>(cells)
    });
    Ok(Some(columns.collect::<Result<_, _>>()?))
}

/// Refuses rows generated by another model than the calibrator's.
pub fn check_model(calibrator: &Calibrator, table: &Table) -> Result<(), ApplyError> {
    let (Some(generator), Ok(models)) = (&calibrator.generator, table.column("model")) else {
        return Ok(());
    };
    for row in 0..table.len() {
        if let Some(found) = models.raw(row).filter(|m| *m != generator.model) {
            return Err(ApplyError::OtherModel {
                path: table.path().to_owned(),
                line: models.location(row).line,
                found: found.to_owned(),
                saved: generator.model.clone(),
            });
        }
    }
    Ok(())
}

/// Each row's combined confidence, from the values of every measure the
/// combination was fitted on.
fn combined_values(
    table: &Table,
    combination: &crate::calibrate::combine::Combination,
) -> Result<Vec<f64>, ApplyError> {
    let columns = combination
        .measures
        .iter()
        .map(|measure| measure_values(table, measure))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((0..table.len())
        .map(|row| {
            let values: Vec<f64> = columns.iter().map(|c| c[row]).collect();
            combination.predict(&values)
        })
        .collect())
}

/// Each row's value of `measure`: its own column, or a key of the
/// `confidence` or `reflective` object that `codecal generate` writes.
pub fn measure_values(table: &Table, measure: &str) -> Result<Vec<f64>, ApplyError> {
    let not_probability =
        |column: &crate::table::Column, row: usize, value: String| ApplyError::NotProbability {
            path: table.path().to_owned(),
            line: column.location(row).line,
            column: column.location(row).column,
            value,
        };
    let check = |p: f64| p.is_finite() && (0.0..=1.0).contains(&p);
    let holds_objects = |column: &crate::table::Column| {
        (0..table.len()).any(|row| column.raw(row).is_some_and(|c| c.starts_with('{')))
    };
    if let Some(column) = table.column(measure).ok().filter(|c| !holds_objects(c)) {
        return (0..table.len())
            .map(|row| {
                let p = column.number(row)?;
                check(p)
                    .then_some(p)
                    .ok_or_else(|| not_probability(&column, row, p.to_string()))
            })
            .collect();
    }
    for object in ["confidence", "reflective"] {
        let Ok(column) = table.column(object) else {
            continue;
        };
        let inner = |row: usize| {
            let cell = column.raw(row)?;
            let value: serde_json::Value = serde_json::from_str(cell).ok()?;
            value.get(measure).cloned()
        };
        if (0..table.len()).all(|row| inner(row).is_none()) {
            continue;
        }
        return (0..table.len())
            .map(|row| match inner(row) {
                Some(serde_json::Value::Number(n)) if n.as_f64().is_some_and(check) => {
                    Ok(n.as_f64().unwrap_or_default())
                }
                // A prompt that shows no example (or got no test) has no
                // value; the run counted it at 0 (review), so the deployed
                // rule does too.
                Some(serde_json::Value::Null) if is_sandbox_measure(measure) => Ok(0.0),
                other => Err(not_probability(
                    &column,
                    row,
                    format!(
                        "{measure} = {}",
                        other.map_or_else(|| "absent".to_owned(), |v| v.to_string())
                    ),
                )),
            })
            .collect();
    }
    if is_sandbox_measure(measure) {
        return Err(ApplyError::NoSpecMeasure {
            path: table.path().to_owned(),
            measure: measure.to_owned(),
        });
    }
    Err(ApplyError::NoMeasure {
        path: table.path().to_owned(),
        measure: measure.to_owned(),
        available: table.column_names().join(", "),
    })
}

/// The input's JSONL rows, each closed with `"calibrated"` and `"decision"`.
fn jsonl_with_decisions(
    input: &Path,
    table: &Table,
    decided: &[(String, String)],
) -> Result<String, ApplyError> {
    let text = crate::artifact::read_regular_text(input, crate::artifact::TABLE_CAP_BYTES)
        .map_err(|source| ApplyError::Io {
            path: input.to_owned(),
            source,
        })?;
    let lines: Vec<&str> = text.lines().collect();
    let first = table.column(&table.column_names()[0])?;
    let mut out = String::with_capacity(text.len() + decided.len() * 48);
    for (row, (calibrated, decision)) in decided.iter().enumerate() {
        let line = lines[first.location(row).line as usize - 1].trim_end();
        // The reader checked it is one JSON object, so it ends with '}'.
        let body = line[..line.len() - 1].trim_end();
        let separator = if body.trim() == "{" { "" } else { "," };
        out.push_str(&format!(
            "{body}{separator}\"calibrated\":{calibrated},\"decision\":\"{decision}\"}}\n"
        ));
    }
    Ok(out)
}

/// The input's CSV cells, with two more columns.
fn csv_with_decisions(table: &Table, decided: &[(String, String)]) -> Result<String, ApplyError> {
    let names = table.column_names();
    let columns = names
        .iter()
        .map(|name| table.column(name))
        .collect::<Result<Vec<_>, _>>()?;
    let mut header: Vec<String> = names.to_vec();
    header.extend(["calibrated".to_owned(), "decision".to_owned()]);
    let rows: Vec<Vec<String>> = decided
        .iter()
        .enumerate()
        .map(|(row, (calibrated, decision))| {
            let mut record: Vec<String> = columns
                .iter()
                .map(|c| c.raw(row).unwrap_or("").to_owned())
                .collect();
            record.extend([calibrated.clone(), decision.clone()]);
            record
        })
        .collect();
    Ok(crate::report::table::grid_csv(&header, &rows))
}
