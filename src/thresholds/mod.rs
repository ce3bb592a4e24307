//! Thresholds on a similarity metric, chosen against human ratings.
//!
//! For one metric's scores and the items' human labels, [`derive`] gives the
//! ROC and precision-recall curves, the AUC, and three operating points (best
//! F1, high precision, high recall), each with a bootstrap interval. An item is
//! predicted positive when its score is at or above the threshold. Reading the
//! ratings is `ratings`; computing the scores is `score`; no file IO here.

pub mod file;
pub mod ratings;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

pub use ratings::{GenericColumns, LabelRule, RatedItem, RatingsError, Scale};

use crate::score::{EmbedError, Embedder, Pair, Scorer, Tokenization, lexical_scores};

/// The metrics to evaluate, by name, one value per item: codecal's scores of
/// the texts (all of `codecal score` with a scorer, the lexical ones without),
/// then the precomputed columns, and (x+1)/2 of each `cosine_columns` entry as
/// `NAME01`.
pub fn metric_values<E: Embedder>(
    items: &[RatedItem],
    scorer: Option<&mut Scorer<E>>,
    tokenization: Tokenization,
    text_metrics: bool,
    cosine_columns: &[String],
) -> Result<Vec<(String, Vec<f64>)>, EmbedError> {
    let mut rows: Vec<Vec<(String, f64)>> = if !text_metrics {
        vec![vec![]; items.len()]
    } else if let Some(scorer) = scorer {
        let pairs: Vec<Pair> = items
            .iter()
            .map(|i| Pair {
                id: i.id.clone(),
                reference: i.reference.clone(),
                candidate: i.candidate.clone(),
            })
            .collect();
        let scores = scorer.score(&pairs, |_, _| {})?;
        scores.iter().map(|s| s.named_values()).collect()
    } else {
        items
            .iter()
            .map(|i| {
                let tokens = |text: &str| tokenization.tokenize(text);
                lexical_scores(&tokens(&i.reference), &tokens(&i.candidate)).named_values()
            })
            .collect()
    };
    for (row, item) in rows.iter_mut().zip(items) {
        for (name, &value) in &item.columns {
            row.push((name.clone(), value));
            if cosine_columns.contains(name) {
                row.push((format!("{name}01"), (value + 1.0) / 2.0));
            }
        }
    }
    let names: Vec<String> = rows
        .first()
        .map(|r| r.iter().map(|(n, _)| n.clone()).collect())
        .unwrap_or_default();
    Ok(names
        .into_iter()
        .enumerate()
        .map(|(m, name)| (name, rows.iter().map(|r| r[m].1).collect()))
        .collect())
}

/// Where thresholds are searched.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum Search {
    /// Every distinct score value.
    Exact,
    /// Multiples of the step on [0, 1], as the summarization seed's notebook.
    Grid(f64),
}

/// Options of a derivation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThresholdOptions {
    pub search: Search,
    pub bootstrap: usize,
    pub seed: u64,
}

/// Precision, recall and F1 of predicting positive at `score >= threshold`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct OperatingPoint {
    pub threshold: f64,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    /// 95% bootstrap interval of the threshold; `None` without a bootstrap.
    pub threshold_ci: Option<[f64; 2]>,
    /// The precision or recall floor used, when the first choice (0.9) had no threshold.
    pub floor: Option<f64>,
}

/// Everything derived for one metric.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MetricThresholds {
    pub metric: String,
    pub n: usize,
    pub positives: usize,
    pub auc: f64,
    pub auc_ci: Option<[f64; 2]>,
    pub best_f1: OperatingPoint,
    pub high_precision: Option<OperatingPoint>,
    pub high_recall: Option<OperatingPoint>,
    /// (false positive rate, true positive rate), from (0, 0) to (1, 1).
    pub roc: Vec<[f64; 2]>,
    /// (recall, precision) at each distinct score, highest score first.
    pub pr: Vec<[f64; 2]>,
}

#[derive(Debug, PartialEq, thiserror::Error)]
pub enum ThresholdError {
    #[error("metric '{metric}': every item has the same label, so no threshold separates them")]
    SingleClass { metric: String },
    #[error("metric '{metric}': {count} scores for {labels} labels")]
    LengthMismatch {
        metric: String,
        count: usize,
        labels: usize,
    },
    #[error("metric '{metric}': a score is not a finite number")]
    NotFinite { metric: String },
    #[error("--grid must be in (0, 1], got {0}")]
    Grid(f64),
    #[error("--metric {name}: no such metric (have: {available})")]
    UnknownMetric { name: String, available: String },
}

/// [`derive`] for each metric in `values` that `wanted` names (all when empty).
pub fn derive_selected(
    values: &[(String, Vec<f64>)],
    wanted: &[String],
    labels: &[bool],
    options: &ThresholdOptions,
) -> Result<Vec<MetricThresholds>, ThresholdError> {
    if let Some(name) = wanted.iter().find(|w| values.iter().all(|(n, _)| n != *w)) {
        let available: Vec<&str> = values.iter().map(|(n, _)| n.as_str()).collect();
        return Err(ThresholdError::UnknownMetric {
            name: name.clone(),
            available: available.join(", "),
        });
    }
    values
        .iter()
        .filter(|(name, _)| wanted.is_empty() || wanted.contains(name))
        .map(|(name, scores)| derive(name, scores, labels, options))
        .collect()
}

/// The target a high-precision or high-recall point must exceed, then its fallback.
const FLOORS: [f64; 2] = [0.9, 0.8];

/// Derives curves, AUC and operating points for one metric.
pub fn derive(
    metric: &str,
    scores: &[f64],
    labels: &[bool],
    options: &ThresholdOptions,
) -> Result<MetricThresholds, ThresholdError> {
    if scores.len() != labels.len() {
        return Err(ThresholdError::LengthMismatch {
            metric: metric.to_owned(),
            count: scores.len(),
            labels: labels.len(),
        });
    }
    if scores.iter().any(|s| !s.is_finite()) {
        return Err(ThresholdError::NotFinite {
            metric: metric.to_owned(),
        });
    }
    if let Search::Grid(step) = options.search
        && !(step > 0.0 && step <= 1.0)
    {
        return Err(ThresholdError::Grid(step));
    }
    let curves = Curves::new(scores, labels).ok_or_else(|| ThresholdError::SingleClass {
        metric: metric.to_owned(),
    })?;
    let points = curves.points(options.search);
    let mut best_f1 = best_f1(&points);
    let mut high_precision = floored(&points, |p| p.precision, high_precision_rank);
    let mut high_recall = floored(&points, |p| p.recall, high_recall_rank);
    let mut auc_ci = None;
    if options.bootstrap > 0 {
        let draws = bootstrap(scores, labels, options);
        auc_ci = interval(draws.iter().map(|d| d.0).collect());
        best_f1.threshold_ci = interval(draws.iter().filter_map(|d| d.1).collect());
        if let Some(p) = high_precision.as_mut() {
            p.threshold_ci = interval(draws.iter().filter_map(|d| d.2).collect());
        }
        if let Some(p) = high_recall.as_mut() {
            p.threshold_ci = interval(draws.iter().filter_map(|d| d.3).collect());
        }
    }
    Ok(MetricThresholds {
        metric: metric.to_owned(),
        n: scores.len(),
        positives: curves.positives,
        auc: curves.auc(),
        auc_ci,
        best_f1,
        high_precision,
        high_recall,
        roc: curves.roc(),
        pr: curves
            .points(Search::Exact)
            .iter()
            .map(|p| [p.recall, p.precision])
            .collect(),
    })
}

/// Scores sorted descending with running true-positive counts.
struct Curves {
    /// Scores, highest first.
    sorted: Vec<f64>,
    /// true_positives[k]: positives among the k highest scores.
    true_positives: Vec<usize>,
    positives: usize,
}

impl Curves {
    /// `None` when the labels have a single class.
    fn new(scores: &[f64], labels: &[bool]) -> Option<Curves> {
        let mut order: Vec<usize> = (0..scores.len()).collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
        let mut true_positives = Vec::with_capacity(scores.len() + 1);
        true_positives.push(0);
        for &i in &order {
            true_positives
                .push(true_positives.last().copied().unwrap_or(0) + usize::from(labels[i]));
        }
        let positives = *true_positives.last()?;
        (positives > 0 && positives < scores.len()).then(|| Curves {
            sorted: order.iter().map(|&i| scores[i]).collect(),
            true_positives,
            positives,
        })
    }

    fn at(&self, threshold: f64) -> OperatingPoint {
        let predicted = self.sorted.partition_point(|&s| s >= threshold);
        let tp = self.true_positives[predicted] as f64;
        let precision = if predicted > 0 {
            tp / predicted as f64
        } else {
            0.0
        };
        let recall = tp / self.positives as f64;
        let f1 = if tp > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        };
        OperatingPoint {
            threshold,
            precision,
            recall,
            f1,
            threshold_ci: None,
            floor: None,
        }
    }

    fn distinct(&self) -> Vec<f64> {
        let mut values = self.sorted.clone();
        values.dedup();
        values
    }

    fn points(&self, search: Search) -> Vec<OperatingPoint> {
        let thresholds: Vec<f64> = match search {
            Search::Exact => self.distinct(),
            Search::Grid(step) => {
                let steps = (1.0 / step).round() as usize;
                (0..=steps).rev().map(|k| k as f64 / steps as f64).collect()
            }
        };
        thresholds.into_iter().map(|t| self.at(t)).collect()
    }

    fn roc(&self) -> Vec<[f64; 2]> {
        let negatives = (self.sorted.len() - self.positives) as f64;
        let mut points = vec![[0.0, 0.0]];
        for t in self.distinct() {
            let predicted = self.sorted.partition_point(|&s| s >= t);
            let tp = self.true_positives[predicted];
            points.push([
                (predicted - tp) as f64 / negatives,
                tp as f64 / self.positives as f64,
            ]);
        }
        points
    }

    /// Area under the ROC curve by trapezoids (ties count half, as Mann-Whitney).
    fn auc(&self) -> f64 {
        self.roc()
            .windows(2)
            .map(|w| (w[1][0] - w[0][0]) * (w[1][1] + w[0][1]) / 2.0)
            .sum()
    }
}

/// Highest F1; ties go to higher precision, then the higher threshold.
fn best_f1(points: &[OperatingPoint]) -> OperatingPoint {
    let key = |p: &OperatingPoint| (p.f1, p.precision, p.threshold);
    *points
        .iter()
        .max_by(|a, b| {
            key(a)
                .partial_cmp(&key(b))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        // `derive` needs both classes (`Curves::new`), so there is a point.
        .expect("at least one threshold")
}

/// High precision: the highest recall; among equal recalls the lowest threshold,
/// which reproduces the summarization seed's point (0.9745 on Haque's cosine).
fn high_precision_rank(p: &OperatingPoint) -> (f64, f64) {
    (p.recall, -p.threshold)
}

/// High recall: the highest precision; among equal precisions the highest threshold.
fn high_recall_rank(p: &OperatingPoint) -> (f64, f64) {
    (p.precision, p.threshold)
}

/// Among points whose `guarded` value exceeds 0.9 (else 0.8), the one with the largest `rank`.
fn floored(
    points: &[OperatingPoint],
    guarded: impl Fn(&OperatingPoint) -> f64,
    rank: impl Fn(&OperatingPoint) -> (f64, f64),
) -> Option<OperatingPoint> {
    FLOORS.iter().enumerate().find_map(|(attempt, &floor)| {
        let best = points
            .iter()
            .filter(|p| guarded(p) > floor)
            .max_by(|a, b| {
                rank(a)
                    .partial_cmp(&rank(b))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })?;
        Some(OperatingPoint {
            floor: (attempt > 0).then_some(floor),
            ..*best
        })
    })
}

/// Per resample: AUC and the three thresholds (None where undefined).
type Draw = (f64, Option<f64>, Option<f64>, Option<f64>);

fn bootstrap(scores: &[f64], labels: &[bool], options: &ThresholdOptions) -> Vec<Draw> {
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    let n = scores.len();
    let mut draws = Vec::with_capacity(options.bootstrap);
    for _ in 0..options.bootstrap {
        let picks: Vec<usize> = (0..n).map(|_| rng.random_range(0..n)).collect();
        let s: Vec<f64> = picks.iter().map(|&i| scores[i]).collect();
        let l: Vec<bool> = picks.iter().map(|&i| labels[i]).collect();
        // A resample with one class says nothing about a threshold; skip it.
        let Some(curves) = Curves::new(&s, &l) else {
            continue;
        };
        let points = curves.points(options.search);
        draws.push((
            curves.auc(),
            Some(best_f1(&points).threshold),
            floored(&points, |p| p.precision, high_precision_rank).map(|p| p.threshold),
            floored(&points, |p| p.recall, high_recall_rank).map(|p| p.threshold),
        ));
    }
    draws
}

/// The central 95% of `values`, as the calibration intervals.
fn interval(values: Vec<f64>) -> Option<[f64; 2]> {
    crate::calibrate::bootstrap::percentile_interval(values, 0.95)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXACT: ThresholdOptions = ThresholdOptions {
        search: Search::Exact,
        bootstrap: 0,
        seed: 0,
    };

    #[test]
    fn auc_counts_ties_half() {
        let m = derive(
            "m",
            &[0.1, 0.5, 0.5, 0.9],
            &[false, false, true, true],
            &EXACT,
        )
        .unwrap();
        assert!((m.auc - 0.875).abs() < 1e-12);
        assert_eq!(m.roc.first(), Some(&[0.0, 0.0]));
        assert_eq!(m.roc.last(), Some(&[1.0, 1.0]));
    }

    #[test]
    fn operating_points_follow_their_rules() {
        let scores = [0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3];
        let labels = [true, true, true, false, true, false, false, false];
        let m = derive("m", &scores, &labels, &EXACT).unwrap();
        assert_eq!(m.best_f1.threshold, 0.6);
        assert!((m.best_f1.f1 - 8.0 / 9.0).abs() < 1e-12);
        let hp = m.high_precision.unwrap();
        assert_eq!((hp.threshold, hp.precision, hp.recall), (0.8, 1.0, 0.75));
        let hr = m.high_recall.unwrap();
        assert_eq!(hr.threshold, 0.6);
        assert_eq!(hr.recall, 1.0);
    }

    #[test]
    fn precision_floor_falls_back_and_says_so() {
        // Negatives at ranks 0, 1 and 15: precision peaks at 13/15, above 0.8, never above 0.9.
        let scores: Vec<f64> = (0..20).map(|i| 1.0 - i as f64 / 100.0).collect();
        let labels: Vec<bool> = (0..20).map(|i| ![0, 1, 15].contains(&i)).collect();
        let m = derive("m", &scores, &labels, &EXACT).unwrap();
        let hp = m.high_precision.unwrap();
        assert_eq!(hp.floor, Some(0.8));
        assert!(hp.precision > 0.8 && hp.precision <= 0.9);
    }

    #[test]
    fn unknown_metric_names_the_ones_there_are() {
        let values = vec![("bleu1".to_owned(), vec![0.1, 0.9])];
        let err = derive_selected(&values, &["rouge9".into()], &[false, true], &EXACT).unwrap_err();
        assert_eq!(
            err,
            ThresholdError::UnknownMetric {
                name: "rouge9".into(),
                available: "bleu1".into()
            }
        );
        let all = derive_selected(&values, &[], &[false, true], &EXACT).unwrap();
        assert_eq!(all.len(), 1);
    }

    #[test]
    fn single_class_is_an_error() {
        assert_eq!(
            derive("bleu1", &[0.1, 0.2], &[true, true], &EXACT),
            Err(ThresholdError::SingleClass {
                metric: "bleu1".into()
            })
        );
    }

    #[test]
    fn grid_search_uses_multiples_of_the_step() {
        let options = ThresholdOptions {
            search: Search::Grid(0.1),
            ..EXACT
        };
        let m = derive(
            "m",
            &[0.12, 0.55, 0.58, 0.91],
            &[false, false, true, true],
            &options,
        )
        .unwrap();
        // F1 0.8 from 0.2 up to 0.5 (the three top scores): ties go to the higher threshold.
        assert_eq!(m.best_f1.threshold, 0.5);
        assert!((m.best_f1.f1 - 0.8).abs() < 1e-12);
    }
}
