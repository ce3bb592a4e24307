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
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BootstrapSpec {
    pub resamples: usize,
    pub seed: u64,
    /// Coverage of the interval, e.g. 0.95.
    pub level: f64,
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
    spec: BootstrapSpec,
) -> Vec<Intervals> {
    // Each sample's items in its own (confidence) order, as resampling units.
    let unit_in_order: Vec<Vec<usize>> = samples
        .iter()
        .map(|(sample, members)| sample.order().iter().map(|&k| units[members[k]]).collect())
        .collect();
    let draws: Vec<Vec<[Option<f64>; METRIC_COUNT]>> = (0..spec.resamples)
        .into_par_iter()
        .map(|b| {
            let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
            rng.set_stream(b as u64 + 1);
            let mut unit_draws = vec![0u32; unit_count];
            for _ in 0..unit_count {
                unit_draws[rng.random_range(0..unit_count)] += 1;
            }
            samples
                .iter()
                .zip(&unit_in_order)
                .map(|((sample, _), unit_of)| {
                    let weights: Vec<u32> = unit_of.iter().map(|&u| unit_draws[u]).collect();
                    if weights.iter().all(|&w| w == 0) {
                        return [None; METRIC_COUNT];
                    }
                    sample.metrics_in_order(Some(&weights)).values()
                })
                .collect()
        })
        .collect();
    (0..samples.len())
        .map(|s| {
            METRIC_NAMES
                .iter()
                .enumerate()
                .map(|(m, &name)| {
                    let values: Vec<f64> = draws.iter().filter_map(|d| d[s][m]).collect();
                    (name, percentile_interval(values, spec.level))
                })
                .collect()
        })
        .collect()
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

    #[test]
    fn intervals_are_seeded_and_cover_the_estimate() {
        let f = fixture();
        let bins = BinSpec {
            count: 10,
            binning: Binning::EqualWidth,
        };
        let sample = Sample::new(&f.confidence, &f.correct, Some(&f.similarity), bins);
        let all: Vec<usize> = (0..f.confidence.len()).collect();
        let spec = BootstrapSpec {
            resamples: 200,
            seed: 3,
            level: 0.95,
        };
        let a = intervals(&[(&sample, &all)], &all, all.len(), spec);
        let b = intervals(&[(&sample, &all)], &all, all.len(), spec);
        assert_eq!(a, b);
        let brier = sample.metrics(None).brier;
        let [lo, hi] = a[0]["brier"].unwrap();
        assert!(lo < brier && brier < hi, "{lo} < {brier} < {hi}");
        let other = intervals(
            &[(&sample, &all)],
            &all,
            all.len(),
            BootstrapSpec { seed: 4, ..spec },
        );
        assert_ne!(a, other);
    }
}
