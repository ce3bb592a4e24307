//! The columns a task run calibrates: for each measure, every item's
//! confidence and whether the answer it speaks of was right, with what
//! counts as missing; and the learned combination's column. Not the
//! calibration or the tables (`report`).

use std::collections::BTreeMap;

use crate::calibrate::combine::{HeldOut, held_out, in_calibration_folds};
use crate::calibrate::{CalibrateOptions, CalibrationData};
use crate::confidence::length::LengthBaseline;
use crate::confidence::reflective::Measure;
use crate::confidence::token_measures;
use crate::generate::row::GenerationRow;
use crate::pipeline::config::LENGTH_BASELINE;
use crate::task::{Verdict, VerdictRow};

pub(super) const ASK_TRUE: &str = "ask-true";

/// P(True) / (P(True) + P(False)) of the `ask-true` measure, reported beside it.
pub(super) const ASK_TRUE_NORMALIZED: &str = "ask-true-normalized";

/// One model x measure's confidences and outcomes, every item included.
pub(super) struct Column {
    pub data: CalibrationData,
    pub missing: usize,
}

/// Every item's confidence under `measure` and its verdict; a missing value
/// counts as 0.
pub(super) fn measure_column(
    generations: &[GenerationRow],
    verdicts: &[VerdictRow],
    answer_measures: &[Option<AnswerMeasures>],
    measure: &str,
    baseline: Option<LengthBaseline>,
    groups: &BTreeMap<&str, &str>,
) -> Column {
    let mut data = CalibrationData {
        confidence: Vec::new(),
        correct: Vec::new(),
        groups: Some(Vec::new()),
        target: None,
        features: Vec::new(),
    };
    let mut missing = 0;
    for ((generation, verdict), answer) in generations.iter().zip(verdicts).zip(answer_measures) {
        let answer_length = verdict.answer.chars().count();
        let over_answer = answer
            .as_ref()
            .and_then(|measures| measures.get(measure).copied());
        let confidence = over_answer
            .unwrap_or_else(|| confidence_of(generation, measure, baseline, answer_length));
        missing += usize::from(confidence.is_none());
        data.confidence.push(confidence.unwrap_or(0.0));
        data.correct.push(correct_for(generation, verdict, measure));
        let id = &generation.id;
        let group = groups
            .get(id.as_str())
            .map_or(id.clone(), |g| g.to_string());
        if let Some(column) = data.groups.as_mut() {
            column.push(group);
        }
    }
    Column { data, missing }
}

/// Why the learned combination could not be made.
#[derive(Debug, thiserror::Error)]
pub(super) enum CombinationError {
    #[error("{0} was not calibrated")]
    NotCalibrated(String),
    #[error(transparent)]
    Fit(#[from] crate::calibrate::combine::CombineError),
}

/// The learned combination of the `combine` measures (already calibrated
/// in `seen`): its out-of-fold confidences in the calibration's own folds,
/// on the items and labels of the main answer (for the tables, beside the
/// single measures), and the fit it deploys with the held-out items its
/// cutoffs are tested on (`combine::held_out`).
pub(super) fn combination_column(
    combine: &[String],
    seen: &BTreeMap<String, CalibrationData>,
    options: &CalibrateOptions,
) -> Result<(Column, HeldOut), CombinationError> {
    let named: Vec<&CalibrationData> = combine
        .iter()
        .map(|m| {
            seen.get(m)
                .ok_or_else(|| CombinationError::NotCalibrated(m.clone()))
        })
        .collect::<Result<_, _>>()?;
    let first = named[0];
    let columns: Vec<Vec<f64>> = named.iter().map(|d| d.confidence.clone()).collect();
    let groups = first.groups.as_deref();
    let confidence = in_calibration_folds(combine, &columns, &first.correct, groups, options)?;
    let held = held_out(combine, &columns, &first.correct, groups, options)?;
    let data = CalibrationData {
        confidence,
        target: None,
        features: Vec::new(),
        ..first.clone()
    };
    Ok((Column { data, missing: 0 }, held))
}

/// The held-out items of `data` with their deployed scores: what a fixed
/// rule on the combination is tested on.
pub(super) fn held_out_data(data: &CalibrationData, held: &HeldOut) -> CalibrationData {
    let pick = |i: &usize| data.correct[*i];
    CalibrationData {
        confidence: held.scores.clone(),
        correct: held.tested.iter().map(pick).collect(),
        groups: data
            .groups
            .as_ref()
            .map(|g| held.tested.iter().map(|&i| g[i].clone()).collect()),
        target: None,
        features: Vec::new(),
    }
}

/// Whether the answer `measure` speaks of was right. "Open the Oyster"
/// (seed 003 §3, step 1): one answer per question, the intrinsic reply's,
/// which the intrinsic confidence belongs to and which reassess and
/// reflective judge (their `follows`); the other measures speak of the
/// main answer. Rows generated before reflective judged the intrinsic
/// answer have no `follows` on it, and keep the main answer.
pub(super) fn correct_for(generation: &GenerationRow, verdict: &VerdictRow, measure: &str) -> bool {
    let intrinsic = Measure::OysterIntrinsic.name();
    let own_answer = measure == intrinsic
        || (is_oyster_follow_up(measure)
            && generation
                .reflective
                .get(measure)
                .and_then(|r| r.follows.as_deref())
                == Some(intrinsic));
    let judged: &Verdict = match &verdict.intrinsic {
        Some(judged) if own_answer => &judged.verdict,
        _ => &verdict.verdict,
    };
    judged.correct
}

fn is_oyster_follow_up(measure: &str) -> bool {
    measure == Measure::OysterReassess.name() || measure == Measure::OysterReflective.name()
}

/// Every token measure by name over one answer's tokens.
pub(super) type AnswerMeasures = BTreeMap<String, Option<f64>>;

/// The token measures over the tokens of the answer the verdict judged (its
/// `answer_tokens`), not over the whole reply; `None` where the verdict
/// records no span. An answer with no tokens of its own (an empty answer) is
/// measured over the whole reply, so the item keeps a value.
pub(super) fn answer_token_measures(
    generation: &GenerationRow,
    verdict: &VerdictRow,
    first_k: Option<usize>,
) -> Option<AnswerMeasures> {
    let [start, end] = verdict.answer_tokens?;
    let tokens = &generation.tokens;
    let span = tokens
        .get(start..end)
        .filter(|s| !s.is_empty())
        .unwrap_or(tokens);
    Some(token_measures(span, first_k).into_iter().collect())
}

pub(super) fn confidence_of(
    generation: &GenerationRow,
    measure: &str,
    baseline: Option<LengthBaseline>,
    answer_length: usize,
) -> Option<f64> {
    if measure == LENGTH_BASELINE {
        return baseline.map(|b| b.confidence(answer_length));
    }
    if measure == ASK_TRUE_NORMALIZED {
        return generation.reflective.get(ASK_TRUE)?.p_true_normalized;
    }
    let fell_back = generation.reflective.get(measure).and_then(|r| r.fallback) == Some(true);
    if is_oyster_follow_up(measure) && fell_back {
        return None;
    }
    generation.measure(measure)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::row::ReflectiveReading;

    /// Issue "fidelity, third pass", item 2: a reassess or reflective reply
    /// without a confidence is missing, as an intrinsic one is, not 0.5.
    #[test]
    fn every_oyster_strategy_counts_a_missing_confidence_alike() {
        let reading = |confidence: Option<f64>, fallback: Option<bool>| ReflectiveReading {
            confidence,
            fallback,
            ..ReflectiveReading::default()
        };
        let row = GenerationRow {
            reflective: [
                ("oyster-intrinsic", reading(None, None)),
                ("oyster-reassess", reading(Some(0.5), Some(true))),
                ("oyster-reflective", reading(Some(0.7), Some(false))),
                ("verbalized-probability", reading(Some(0.5), Some(true))),
            ]
            .into_iter()
            .map(|(name, r)| (name.to_owned(), r))
            .collect(),
            ..GenerationRow::default()
        };
        let of = |m: &str| confidence_of(&row, m, None, 0);
        assert_eq!(of("oyster-intrinsic"), None);
        assert_eq!(of("oyster-reassess"), None);
        assert_eq!(of("oyster-reflective"), Some(0.7));
        // Seed 000's verbalized probability keeps its own fallback.
        assert_eq!(of("verbalized-probability"), Some(0.5));
    }
}
