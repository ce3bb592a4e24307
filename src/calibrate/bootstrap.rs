//! Percentile bootstrap intervals for every metric.
//!
//! A resample is a vector of draw counts over items (or over groups, spread to
//! their items); metrics take counts as weights, so nothing is copied or
//! re-sorted per resample. Resample b draws from its own ChaCha stream of the
//! seed, so the intervals do not depend on the number of threads.
//! The rescaler is not refitted per resample: the intervals describe the
//! evaluation sample, given the out-of-fold predictions.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::metrics::{METRIC_COUNT, METRIC_NAMES, Sample};

/// How to resample.
#[derive(Clone, Debug, PartialEq)]
pub struct BootstrapSpec {
    pub resamples: usize,
    pub seed: u64,
    /// Coverage of the interval, e.g. 0.95.
    pub level: f64,
    /// The metrics that get intervals; smooth ECE, the costliest, is left
    /// out of the resamples when it is not among them.
    pub metrics: Vec<&'static str>,
}

/// Each item's resampling unit: itself, or its group.
#[derive(Clone, Debug, PartialEq)]
pub struct Units {
    pub of_item: Vec<usize>,
    pub count: usize,
}

impl Units {
    /// Every item its own unit.
    pub fn items(n: usize) -> Units {
        Units {
            of_item: (0..n).collect(),
            count: n,
        }
    }

    /// One unit per distinct group label, numbered by first appearance.
    pub fn groups(groups: &[String]) -> Units {
        let mut ids: BTreeMap<&str, usize> = BTreeMap::new();
        for g in groups {
            let next = ids.len();
            ids.entry(g).or_insert(next);
        }
        Units {
            of_item: groups.iter().map(|g| ids[g.as_str()]).collect(),
            count: ids.len(),
        }
    }
}

/// A [low, high] interval per metric name; `None` where the metric was undefined in every resample.
pub type Intervals = BTreeMap<&'static str, Option<[f64; 2]>>;

/// Intervals for several samples resampled together (paired), e.g. raw and rescaled.
///
/// `samples[s]` covers the items `members[s]` (indices into the `n` items); `units`
/// maps each item to its resampling unit (itself, or its group).
pub fn intervals(
    samples: &[(&Sample, &[usize])],
    units: &[usize],
    unit_count: usize,
    spec: &BootstrapSpec,
) -> Vec<Intervals> {
    let smooth = spec.metrics.contains(&"smooth_ece");
    // Each sample's items in its own (confidence) order, as resampling units.
    let unit_in_order: Vec<Vec<usize>> = samples
        .iter()
        .map(|(sample, members)| sample.order().iter().map(|&k| units[members[k]]).collect())
        .collect();
    let draws: Vec<Vec<[Option<f64>; METRIC_COUNT]>> = (0..spec.resamples)
        .into_par_iter()
        .map(|b| {
            let unit_draws = draws_of(spec.seed, b, unit_count);
            samples
                .iter()
                .zip(&unit_in_order)
                .map(|((sample, _), unit_of)| {
                    let weights: Vec<u32> = unit_of.iter().map(|&u| unit_draws[u]).collect();
                    if weights.iter().all(|&w| w == 0) {
                        return [None; METRIC_COUNT];
                    }
                    sample.metrics_with(Some(&weights), smooth).values()
                })
                .collect()
        })
        .collect();
    (0..samples.len())
        .map(|s| {
            METRIC_NAMES
                .iter()
                .enumerate()
                .filter(|(_, name)| spec.metrics.contains(name))
                .map(|(m, &name)| {
                    let values: Vec<f64> = draws.iter().filter_map(|d| d[s][m]).collect();
                    (name, percentile_interval(values, spec.level))
                })
                .collect()
        })
        .collect()
}

/// How often resample `b` of `seed` draws each of `unit_count` units: its
/// own ChaCha stream, so the draws do not depend on the thread count.
pub(crate) fn draws_of(seed: u64, b: usize, unit_count: usize) -> Vec<u32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(b as u64 + 1);
    let mut unit_draws = vec![0u32; unit_count];
    for _ in 0..unit_count {
        unit_draws[rng.random_range(0..unit_count)] += 1;
    }
    unit_draws
}

/// The central `level` interval of `values`, with numpy's linear interpolation.
pub(crate) fn percentile_interval(mut values: Vec<f64>, level: f64) -> Option<[f64; 2]> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some([quantile(&values, tail), quantile(&values, 1.0 - tail)])
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = (below + 1).min(sorted.len() - 1);
    sorted[below] + (sorted[above] - sorted[below]) * (position - below as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::metrics::tests::fixture;
    use crate::calibrate::metrics::{BinSpec, Binning};

    #[test]
    fn quantiles_interpolate_like_numpy() {
        // numpy.percentile([1, 2, 3, 4], [2.5, 97.5]) == [1.075, 3.925]
        let [lo, hi] = percentile_interval(vec![4.0, 1.0, 3.0, 2.0], 0.95).unwrap();
        assert!((lo - 1.075).abs() < 1e-12 && (hi - 3.925).abs() < 1e-12);
    }

    fn spec(resamples: usize, seed: u64) -> BootstrapSpec {
        BootstrapSpec {
            resamples,
            seed,
            level: 0.95,
            metrics: METRIC_NAMES.to_vec(),
        }
    }

    #[test]
    fn intervals_are_seeded_and_cover_the_estimate() {
        let f = fixture();
        let bins = BinSpec {
            count: 10,
            binning: Binning::EqualWidth,
        };
        let sample = Sample::new(&f.confidence, &f.correct, Some(&f.similarity), bins);
        let all: Vec<usize> = (0..f.confidence.len()).collect();
        let a = intervals(&[(&sample, &all)], &all, all.len(), &spec(200, 3));
        let b = intervals(&[(&sample, &all)], &all, all.len(), &spec(200, 3));
        assert_eq!(a, b);
        let brier = sample.metrics(None).brier;
        let [lo, hi] = a[0]["brier"].unwrap();
        assert!(lo < brier && brier < hi, "{lo} < {brier} < {hi}");
        let other = intervals(&[(&sample, &all)], &all, all.len(), &spec(200, 4));
        assert_ne!(a, other);
    }

    /// The resampling that weights items (the fast path) against the plain
    /// one that copies each drawn row and evaluates the copies as a new
    /// sample: the same draws give every metric and every interval to
    /// 1e-12, in both binnings, with ties, 0s and 1s (the 240-item extremes
    /// fixture) and with rescaled-like distinct confidences.
    #[test]
    fn weighting_items_is_resampling_rows() {
        let extremes: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/metrics_extremes.json"))
                .unwrap();
        let read = |key: &str| -> Vec<f64> {
            extremes[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect()
        };
        let (ties, tie_labels) = (read("confidence"), read("correct"));
        let tie_labels: Vec<bool> = tie_labels.iter().map(|&y| y == 1.0).collect();
        let distinct: Vec<f64> = (0..300)
            .map(|i| ((i * 7919) % 1000) as f64 / 1001.0 + 1e-4)
            .collect();
        let distinct_labels: Vec<bool> = (0..300).map(|i| (i * 104_729) % 10 < 6).collect();
        let close = |a: Option<f64>, b: Option<f64>, what: &str| match (a, b) {
            (Some(a), Some(b)) if a.is_nan() && b.is_nan() => {}
            (Some(a), Some(b)) => assert!(
                (a - b).abs() <= 1e-12 * b.abs().max(1.0),
                "{what}: weighted {a} vs copied {b}"
            ),
            (a, b) => assert_eq!(a.is_some(), b.is_some(), "{what}: {a:?} vs {b:?}"),
        };
        for (confidence, correct) in [(&ties, &tie_labels), (&distinct, &distinct_labels)] {
            for binning in [Binning::EqualWidth, Binning::EqualMass] {
                let bins = BinSpec { count: 10, binning };
                let sample = Sample::new(confidence, correct, None, bins);
                let n = confidence.len();
                let all: Vec<usize> = (0..n).collect();
                let fast = intervals(&[(&sample, &all)], &all, n, &spec(60, 9));
                let mut copied_values: Vec<Vec<f64>> = vec![Vec::new(); METRIC_COUNT];
                for b in 0..60 {
                    let draws = draws_of(9, b, n);
                    let (mut rows, mut labels) = (Vec::new(), Vec::new());
                    for (i, &count) in draws.iter().enumerate() {
                        for _ in 0..count {
                            rows.push(confidence[i]);
                            labels.push(correct[i]);
                        }
                    }
                    let copied = Sample::new(&rows, &labels, None, bins)
                        .metrics(None)
                        .values();
                    let weighted = sample.metrics(Some(&draws)).values();
                    for (m, name) in METRIC_NAMES.iter().enumerate() {
                        close(weighted[m], copied[m], name);
                        if let Some(v) = copied[m] {
                            copied_values[m].push(v);
                        }
                    }
                }
                for (m, name) in METRIC_NAMES.iter().enumerate() {
                    let plain = percentile_interval(copied_values[m].clone(), 0.95);
                    let got = fast[0][name];
                    close(got.map(|i| i[0]), plain.map(|i| i[0]), name);
                    close(got.map(|i| i[1]), plain.map(|i| i[1]), name);
                }
            }
        }
    }
}
