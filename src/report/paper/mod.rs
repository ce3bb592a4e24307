//! The seed papers' own tables, built from plain per-cell results: the
//! summarization seed's Tables III-VII ([`summarization`]), seed
//! 000's Tables 5, 6 and 8 ([`seed000`]), "Open the Oyster"'s table
//! ([`oyster`]) and Turbulence's Tables I and II with its classes and
//! Figure 4 ([`turbulence`]). Each function takes what a flow measured and returns the
//! table's cells, in the paper's columns and order.
//! Nothing here reads a run directory, calibrates or writes a file: the
//! flows in `pipeline` do that and hand the results over.

pub mod oyster;
pub mod seed000;
pub mod summarization;
pub mod turbulence;

use crate::calibrate::CalibrationReport;

/// One model × confidence measure, as the papers' tables read it.
#[derive(Clone, Copy)]
pub struct MeasureResult<'a> {
    pub model: &'a str,
    pub measure: &'a str,
    /// The run's calibration of the measure: raw, and rescaled where it could be.
    pub report: &'a CalibrationReport,
    /// Items with no value for the measure, counted at confidence 0.
    pub missing: usize,
    /// Items whose confidence is exactly 0 or 1.
    pub extremes: usize,
}

/// `model`, `measure`, then `columns`: the key every per-measure row starts with.
fn keyed(model: &str, measure: &str, columns: Vec<String>) -> Vec<String> {
    let mut row = vec![model.to_owned(), measure.to_owned()];
    row.extend(columns);
    row
}
