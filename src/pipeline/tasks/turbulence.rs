//! What a Turbulence run adds to the task flow: its answers read from the
//! verdicts with their question and instance (`answers`), self-consistency
//! across rounds as a confidence measure, and the calibration views that
//! only neighbourhoods make possible: calibration per neighbourhood and the
//! worst one, confidence turbulence (the spread of confidence inside a
//! neighbourhood beside the spread of correctness), and the overconfident
//! blind spots.
//!
//! Not for: the paper's own tables and Figure 4 (`report::paper::turbulence`),
//! judging (the `task::turbulence` worker) or calibrating (the task report
//! hands in each cell's out-of-fold confidences).

use std::collections::BTreeMap;

use crate::calibrate::metrics::{BinSpec, Sample};
use crate::report::run::ReportTable;
use crate::report::table::header;
use crate::task::turbulence::job_params;
use crate::task::{Oracle, Problem, VerdictRow};

use crate::report::paper::turbulence::by_question;
pub(super) use crate::report::paper::turbulence::{Answer, histogram_svg, paper_tables};

/// The confidence measure built from agreement across rounds.
pub(super) const SELF_CONSISTENCY: &str = "self-consistency";

/// One model x measure's confidences, in the answers' order.
pub(super) struct MeasureView {
    pub model: String,
    pub measure: String,
    /// Out-of-fold rescaled where there is one, else raw.
    pub confidence: Vec<f64>,
    /// Whether `confidence` is rescaled (false where no rescaler could be fitted).
    pub rescaled: bool,
    /// The strictest acceptance cutoff found, if any.
    pub accept_cutoff: Option<f64>,
}

/// The answers of one model's verdict rows, read with their problems.
pub(super) fn answers(problems: &[Problem], verdicts: &[VerdictRow]) -> Vec<Answer> {
    let by_id: BTreeMap<&str, &Problem> = problems.iter().map(|p| (p.id.as_str(), p)).collect();
    verdicts
        .iter()
        .filter_map(|verdict| {
            let problem = by_id.get(verdict.id.as_str())?;
            let Oracle::Turbulence {
                question,
                instance,
                job,
                ..
            } = &problem.oracle
            else {
                return None;
            };
            Some(Answer {
                id: verdict.id.clone(),
                question: *question,
                instance: *instance,
                params: job_params(job),
                correct: verdict.verdict.correct,
                reason: verdict.verdict.reason,
            })
        })
        .collect()
}

/// Each answer's self-consistency: the share of the other rounds of its
/// instance whose answers behaved the same on the fuzz inputs (equal
/// fingerprints); `None` when the instance has one round.
pub(super) fn self_consistency(answers: &[Answer], verdicts: &[VerdictRow]) -> Vec<Option<f64>> {
    let fingerprint = |row: &VerdictRow| row.verdict.fingerprint.clone().unwrap_or_default();
    let mut by_instance: BTreeMap<(u32, u32), Vec<String>> = BTreeMap::new();
    for (answer, verdict) in answers.iter().zip(verdicts) {
        by_instance
            .entry((answer.question, answer.instance))
            .or_default()
            .push(fingerprint(verdict));
    }
    answers
        .iter()
        .zip(verdicts)
        .map(|(answer, verdict)| {
            let rounds = &by_instance[&(answer.question, answer.instance)];
            let others = rounds.len().checked_sub(1).filter(|&n| n > 0)?;
            let own = fingerprint(verdict);
            let alike = rounds.iter().filter(|f| **f == own).count() - 1;
            Some(alike as f64 / others as f64)
        })
        .collect()
}

/// Calibration per neighbourhood, the worst one, confidence turbulence and
/// the overconfident blind spots, for every model x measure.
pub(super) fn calibration_tables(
    models: &[(String, Vec<Answer>)],
    views: &[MeasureView],
    spec: BinSpec,
) -> Vec<ReportTable> {
    let mut per_question = Vec::new();
    let mut worst = Vec::new();
    let mut blind = Vec::new();
    for view in views {
        let Some((_, answers)) = models.iter().find(|(m, _)| *m == view.model) else {
            continue;
        };
        let correct: Vec<bool> = answers.iter().map(|a| a.correct).collect();
        let sample = Sample::new(&view.confidence, &correct, None, spec);
        let pooled = sample.metrics(None);
        let mut worst_here: Option<(f64, u32)> = None;
        for question in by_question(answers).keys() {
            let (row, ece) = neighbourhood_row(view, answers, &sample, *question);
            per_question.push(row);
            if worst_here.is_none_or(|(worst, _)| ece > worst) {
                worst_here = Some((ece, *question));
            }
        }
        if let Some((ece, question)) = worst_here {
            worst.push(vec![
                view.model.clone(),
                view.measure.clone(),
                format!("{:.3}", pooled.ece),
                format!("Q{question}"),
                format!("{ece:.3}"),
            ]);
        }
        blind.push(blind_spots(view, answers));
    }
    vec![
        ReportTable {
            file: "turbulence_neighbourhoods".into(),
            title: format!(
                "Turbulence: calibration per neighbourhood (out-of-fold confidences, folds split \
                 by question, or raw where no rescaler could be fitted); confidence turbulence is \
                 the spread of confidence inside a \
                 neighbourhood beside the spread of correctness; ECE with {} {:?} bins",
                spec.count, spec.binning
            ),
            header: header(
                &[
                    "model",
                    "measure",
                    "confidence",
                    "question",
                    "n",
                    "success rate",
                    "correctness sd",
                    "mean confidence",
                    "confidence sd",
                    "confidence range",
                    "ECE",
                    "skill score",
                ],
                &[],
            ),
            rows: per_question,
        },
        ReportTable {
            file: "turbulence_worst".into(),
            title: "Turbulence: the pooled ECE beside the worst neighbourhood's".into(),
            header: header(
                &[
                    "model",
                    "measure",
                    "pooled ECE",
                    "worst question",
                    "its ECE",
                ],
                &[],
            ),
            rows: worst,
        },
        ReportTable {
            file: "turbulence_blind_spots".into(),
            title: "Turbulence: overconfident blind spots, answers to instances failed in every \
                    round whose confidence (out-of-fold rescaled, or raw where no rescaler \
                    could be fitted) is above the acceptance cutoff (0.5 where there is none), \
                    the five most confident as examples"
                .into(),
            header: header(
                &[
                    "model",
                    "measure",
                    "confidence",
                    "above",
                    "answers",
                    "examples",
                ],
                &[],
            ),
            rows: blind,
        },
    ]
}

/// One neighbourhood's row of the calibration table, and its ECE.
fn neighbourhood_row(
    view: &MeasureView,
    answers: &[Answer],
    sample: &Sample,
    question: u32,
) -> (Vec<String>, f64) {
    let weights: Vec<u32> = answers
        .iter()
        .map(|a| u32::from(a.question == question))
        .collect();
    let metrics = sample.metrics(Some(&weights));
    let confidences: Vec<f64> = answers
        .iter()
        .zip(&view.confidence)
        .filter(|(a, _)| a.question == question)
        .map(|(_, &c)| c)
        .collect();
    let (sd, range) = spread(&confidences);
    let p = metrics.base_rate;
    let row = vec![
        view.model.clone(),
        view.measure.clone(),
        kind_of(view).into(),
        format!("Q{question}"),
        metrics.n.to_string(),
        format!("{p:.3}"),
        format!("{:.3}", (p * (1.0 - p)).sqrt()),
        format!("{:.3}", mean(&confidences)),
        format!("{sd:.3}"),
        format!("{range:.3}"),
        format!("{:.3}", metrics.ece),
        metrics
            .skill_score
            .map_or("-".into(), |s| format!("{s:.3}")),
    ];
    (row, metrics.ece)
}

fn blind_spots(view: &MeasureView, answers: &[Answer]) -> Vec<String> {
    let threshold = view.accept_cutoff.unwrap_or(0.5);
    let mut failed_everywhere: BTreeMap<(u32, u32), bool> = BTreeMap::new();
    for answer in answers {
        let entry = failed_everywhere
            .entry((answer.question, answer.instance))
            .or_insert(true);
        *entry &= !answer.correct;
    }
    let mut spots: Vec<(&Answer, f64)> = answers
        .iter()
        .zip(&view.confidence)
        .filter(|(a, c)| failed_everywhere[&(a.question, a.instance)] && **c > threshold)
        .map(|(a, c)| (a, *c))
        .collect();
    // The most confident first; ties in answer order.
    spots.sort_by(|a, b| b.1.total_cmp(&a.1));
    let examples: Vec<&str> = spots.iter().take(5).map(|(a, _)| a.id.as_str()).collect();
    vec![
        view.model.clone(),
        view.measure.clone(),
        kind_of(view).into(),
        format!("{threshold:.3}"),
        spots.len().to_string(),
        examples.join(" "),
    ]
}

/// Which confidences a view holds, as the tables say it.
fn kind_of(view: &MeasureView) -> &'static str {
    if view.rescaled {
        "out-of-fold"
    } else {
        "raw (not rescaled)"
    }
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

/// Population standard deviation and range (max - min).
fn spread(values: &[f64]) -> (f64, f64) {
    let m = mean(values);
    let var = values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / values.len().max(1) as f64;
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (var.sqrt(), if values.is_empty() { 0.0 } else { hi - lo })
}
