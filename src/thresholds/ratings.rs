//! Human similarity ratings of (reference, candidate) summary pairs, read from
//! the Haque et al. `final_megafile.csv` layout or a generic one.

use std::collections::BTreeMap;

use crate::table::{Column, Location, Table, TableError};

/// One rated pair: its texts, its ratings, and any precomputed metric values.
#[derive(Clone, Debug, PartialEq)]
pub struct RatedItem {
    pub id: String,
    pub reference: String,
    pub candidate: String,
    /// Ratings of the candidate against the reference (Haque: rows with source = baseline).
    pub ratings: Vec<f64>,
    /// Every rating of the item (Haque: also the rows with source = reference).
    pub all_ratings: Vec<f64>,
    /// Values of the `--column` metrics, by column name.
    pub columns: BTreeMap<String, f64>,
}

impl RatedItem {
    fn new(id: &str, reference: &str, candidate: &str) -> RatedItem {
        RatedItem {
            id: id.to_owned(),
            reference: reference.to_owned(),
            candidate: candidate.to_owned(),
            ratings: vec![],
            all_ratings: vec![],
            columns: BTreeMap::new(),
        }
    }
}

/// The columns `names` of `table`, each with its name.
fn named_columns<'t>(
    table: &'t Table,
    names: &[String],
) -> Result<Vec<(String, Column<'t>)>, TableError> {
    names
        .iter()
        .map(|name| Ok((name.clone(), table.column(name)?)))
        .collect()
}

/// Which ratings decide an item's label, and the cutoff on their mean.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LabelRule {
    /// Mean of the ratings of the candidate (Haque: source = baseline), as the summarization seed.
    BaselineMean,
    /// Mean of every rating of the item (Haque: all six).
    AllMean,
}

crate::choices!(LabelRule { BaselineMean => "baseline-mean", AllMean => "all-mean" });

/// The rating scale; ratings outside it are errors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    pub min: f64,
    pub max: f64,
}

/// Columns of the generic layout: one or more rows per id.
#[derive(Clone, Debug, PartialEq)]
pub struct GenericColumns {
    pub id: String,
    pub reference: String,
    pub candidate: String,
    pub ratings: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum RatingsError {
    #[error(transparent)]
    Table(#[from] TableError),
    #[error("{at}: rating {value} is outside the scale [{min}, {max}]")]
    OutOfScale {
        at: Location,
        value: f64,
        min: f64,
        max: f64,
    },
    #[error("{path}: function {id} has no rows with source = baseline")]
    NoBaseline { path: String, id: String },
    #[error("{at}: '{value}' is neither baseline nor reference")]
    UnknownSource { at: Location, value: String },
}

/// The columns the Haque et al. layout has; their presence selects it.
pub const HAQUE_COLUMNS: [&str; 5] = ["function_id", "source", "similarity", "text", "text.1"];

/// The Haque et al. scale: 1 (strongly disagree) to 4 (strongly agree).
pub const HAQUE_SCALE: Scale = Scale { min: 1.0, max: 4.0 };

/// Whether `table` is in the Haque et al. layout.
pub fn is_haque(table: &Table) -> bool {
    HAQUE_COLUMNS.iter().all(|c| table.column(c).is_ok())
}

/// Reads the Haque et al. layout: three raters per function saw the generated
/// summary (source = baseline: generated in `text`, reference in `text.1`) and
/// three saw the reference itself (source = reference).
pub fn read_haque(
    table: &Table,
    metric_columns: &[String],
) -> Result<Vec<RatedItem>, RatingsError> {
    let [id, source, rating, generated, reference] = HAQUE_COLUMNS.map(|c| table.column(c));
    let (id, source, rating, generated, reference) =
        (id?, source?, rating?, generated?, reference?);
    let metrics = named_columns(table, metric_columns)?;
    let mut items: BTreeMap<String, RatedItem> = BTreeMap::new();
    for row in 0..table.len() {
        let item = items
            .entry(id.text(row)?.to_owned())
            .or_insert_with_key(|key| RatedItem::new(key, "", ""));
        let value = scaled_rating(&rating, row, HAQUE_SCALE)?;
        item.all_ratings.push(value);
        match source.text(row)? {
            "baseline" => {
                item.ratings.push(value);
                item.candidate = generated.text(row).unwrap_or("").to_owned();
                item.reference = reference.text(row).unwrap_or("").to_owned();
                for (name, column) in &metrics {
                    item.columns.insert(name.clone(), column.number(row)?);
                }
            }
            "reference" => {}
            other => {
                return Err(RatingsError::UnknownSource {
                    at: source.location(row),
                    value: other.to_owned(),
                });
            }
        }
    }
    let items: Vec<RatedItem> = items.into_values().collect();
    if let Some(item) = items.iter().find(|i| i.ratings.is_empty()) {
        return Err(RatingsError::NoBaseline {
            path: table.path().display().to_string(),
            id: item.id.clone(),
        });
    }
    Ok(items)
}

/// Reads the generic layout: every row of an id adds its `ratings` columns.
pub fn read_generic(
    table: &Table,
    columns: &GenericColumns,
    scale: Scale,
    metric_columns: &[String],
) -> Result<Vec<RatedItem>, RatingsError> {
    let (id, reference, candidate) = (
        table.column(&columns.id)?,
        table.column(&columns.reference)?,
        table.column(&columns.candidate)?,
    );
    let ratings = columns
        .ratings
        .iter()
        .map(|c| table.column(c))
        .collect::<Result<Vec<_>, _>>()?;
    let metrics = named_columns(table, metric_columns)?;
    let mut items: BTreeMap<String, RatedItem> = BTreeMap::new();
    for row in 0..table.len() {
        let item = items
            .entry(id.text(row)?.to_owned())
            .or_insert_with_key(|key| {
                let text = |column: &Column| column.text(row).unwrap_or("").to_owned();
                RatedItem::new(key, &text(&reference), &text(&candidate))
            });
        for column in &ratings {
            let value = scaled_rating(column, row, scale)?;
            item.ratings.push(value);
            item.all_ratings.push(value);
        }
        for (name, column) in &metrics {
            item.columns.insert(name.clone(), column.number(row)?);
        }
    }
    Ok(items.into_values().collect())
}

fn scaled_rating(
    column: &crate::table::Column,
    row: usize,
    scale: Scale,
) -> Result<f64, RatingsError> {
    let value = column.number(row)?;
    if !(scale.min..=scale.max).contains(&value) {
        return Err(RatingsError::OutOfScale {
            at: column.location(row),
            value,
            min: scale.min,
            max: scale.max,
        });
    }
    Ok(value)
}

/// The label of each item: mean of the ratings `rule` selects >= `cutoff`.
pub fn labels(items: &[RatedItem], rule: LabelRule, cutoff: f64) -> Vec<bool> {
    items
        .iter()
        .map(|item| {
            let ratings = match rule {
                LabelRule::BaselineMean => &item.ratings,
                LabelRule::AllMean => &item.all_ratings,
            };
            ratings.iter().sum::<f64>() / ratings.len() as f64 >= cutoff
        })
        .collect()
}
