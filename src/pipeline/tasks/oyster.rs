//! "Open the Oyster"'s Eq. 4 for a task run's cells: Platt on p itself,
//! fitted by plain maximum likelihood as the paper fits it, with the
//! penalised fit (said so in a note) where plain likelihood has no unique
//! optimum. Not the cells' own calibration (`cells`).

use crate::calibrate::{CalibrateOptions, CalibrationData, CalibrationReport, Method, calibrate};
use crate::pipeline::PipelineError;
use crate::pipeline::cells::calibrate_or_raw;

/// The cell rescaled with "Open the Oyster"'s Eq. 4 (Platt on p) as the
/// paper fits it, by plain maximum likelihood: no L2 penalty, which would
/// shrink the slope of a feature as small as a total probability (~1e-5)
/// to zero (issue "fidelity, third pass", item 4). Reuses the run's own
/// calibration where that already is an unpenalised `platt-p`.
pub(super) fn oyster_calibration(
    data: &CalibrationData,
    options: &CalibrateOptions,
    report: &CalibrationReport,
    notes: &mut Vec<String>,
    label: &str,
    measure: &str,
) -> Result<CalibrationReport, PipelineError> {
    if options.method == Method::PlattP && !options.penalty {
        return Ok(report.clone());
    }
    let platt_p = CalibrateOptions {
        method: Method::PlattP,
        penalty: false,
        multicalibration: None,
        ..options.clone()
    };
    // Plain likelihood has no unique optimum for a confidence that does not
    // vary (or separates the classes): then the penalised fit, said so. (A
    // single-class cell's note comes from the cell's own calibration.)
    match calibrate(data, &platt_p) {
        Ok(report) => Ok(report),
        Err(e) => {
            notes.push(format!(
                "{label} {measure}: Eq. 4 without a penalty has no unique fit ({e}); the \
                 Oyster table uses scikit-learn's C = 1 for it"
            ));
            let penalised = CalibrateOptions {
                penalty: true,
                ..platt_p
            };
            calibrate_or_raw(
                data,
                &penalised,
                notes,
                label,
                &format!("{label} {measure} (platt-p)"),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::Rescaler;
    use crate::calibrate::metrics::tests::fixture;

    /// Eq. 4 is fitted without a penalty: scikit-learn's
    /// LogisticRegression(penalty=None) on p gives slope 2.70815 and
    /// intercept -1.60405 on the small fixture (`tests/sklearn_expected.py`),
    /// and on p / 10^5 (a total probability's scale) the slope scales by 10^5,
    /// where the default C = 1 would shrink it to nearly 0.
    #[test]
    fn the_oyster_table_fits_eq_4_without_a_penalty() {
        for scale in [1.0, 1e-5] {
            let f = fixture();
            let data = CalibrationData {
                confidence: f.confidence.iter().map(|p| p * scale).collect(),
                correct: f.correct,
                groups: Some(f.repo),
                target: None,
                features: Vec::new(),
            };
            let options = CalibrateOptions {
                bootstrap: 0,
                ..CalibrateOptions::default()
            };
            let report = calibrate(&data, &options).unwrap();
            let oyster =
                oyster_calibration(&data, &options, &report, &mut Vec::new(), "m", "p").unwrap();
            let Some(Rescaler::Logistic(fit)) = oyster.final_fit else {
                panic!("no logistic fit")
            };
            let slope = 2.7081472808551674 / scale;
            assert!(
                (fit.slope - slope).abs() <= 1e-6 * slope,
                "{} vs {slope}",
                fit.slope
            );
            assert!(
                (fit.intercept + 1.604047749613074).abs() <= 1e-6,
                "{}",
                fit.intercept
            );
        }
    }
}
