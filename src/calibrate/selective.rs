//! Selective prediction: what happens when only the items a confidence ranks
//! highest are accepted. The risk–coverage curve, AURC, E-AURC, AUGRC and the
//! coverage reachable at a given precision.
//!
//! Not here: choosing a cutoff with a statistical guarantee (that is
//! `cutoffs`), and drawing the curve (that is `report`).
//!
//! Definitions, for n items sorted by confidence, highest first, with E_k
//! errors among the first k (Geifman et al. 2019; Traub et al. 2024, as in
//! torch-uncertainty):
//! - selective risk at coverage k/n is E_k / k, and AURC is its mean over
//!   k = 1..n;
//! - E-AURC is AURC minus the AURC of an oracle that ranks every correct item
//!   first, whose E_k is max(0, k − C) for C correct items;
//! - AUGRC is the mean over k of the generalized risk E_k / n (accepted *and*
//!   wrong, over all items);
//! - coverage at precision q is the largest fraction of items that a cutoff
//!   "accept when confidence ≥ t" can take with precision 1 − E_k/k ≥ q, 0 when
//!   none can.
//!
//! Ties: items of equal confidence cannot be told apart by any cutoff, so
//! within a run of ties E_k is its expectation under a uniformly random
//! order: errors grow linearly across the run. The curve and the coverage at
//! a precision use only the ends of tie runs, which a cutoff can realise.
//! `tests/selective_expected.py` states the same definitions in numpy.

use serde::Serialize;

use super::runs::{Run, runs_descending};

/// The precisions at which coverage is reported.
pub const PRECISION_TARGETS: [f64; 3] = [0.8, 0.9, 0.95];

/// The selective-prediction numbers of one set of confidences.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Selective {
    pub aurc: f64,
    pub e_aurc: f64,
    pub augrc: f64,
    /// Coverage at precision 0.8, 0.9 and 0.95 ([`PRECISION_TARGETS`]).
    pub coverage_at_precision: [f64; 3],
}

/// One realisable point of the risk–coverage curve.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CurvePoint {
    /// The cutoff: items with confidence ≥ this are accepted.
    pub confidence: f64,
    pub coverage: f64,
    pub risk: f64,
}

/// The selective-prediction numbers; NaN when every weight is 0, like the
/// other metrics' 0/0.
///
/// Weights must be whole numbers (bootstrap counts): an item of weight m
/// stands for m positions k.
pub fn selective(
    ascending: &[usize],
    confidence: &[f64],
    correct: &[bool],
    w: &impl Fn(usize) -> f64,
) -> Selective {
    selective_of_runs(&runs_descending(ascending, confidence, correct, w))
}

/// [`selective`] from the tie runs of positive weight, highest confidence first.
pub fn selective_of_runs(runs: &[Run]) -> Selective {
    let total: f64 = runs.iter().map(|r| r.weight).sum();
    if total <= 0.0 {
        return Selective {
            aurc: f64::NAN,
            e_aurc: f64::NAN,
            augrc: f64::NAN,
            coverage_at_precision: [f64::NAN; 3],
        };
    }
    let (mut risk_sum, mut errors_sum) = (0.0, 0.0);
    let (mut taken, mut errors) = (0.0, 0.0);
    let mut coverage = [0.0_f64; 3];
    for run in runs {
        // Weights are whole numbers: the cast is exact.
        let positions = run.weight as u64;
        if positions == 1 {
            // The loop below with one position, without its division.
            let e = errors + run.errors;
            risk_sum += e / (taken + 1.0);
            errors_sum += e;
        } else {
            let per_position = run.errors / run.weight;
            for j in 1..=positions {
                let e = errors + j as f64 * per_position;
                risk_sum += e / (taken + j as f64);
                errors_sum += e;
            }
        }
        taken += run.weight;
        errors += run.errors;
        let precision = 1.0 - errors / taken;
        for (c, &target) in coverage.iter_mut().zip(&PRECISION_TARGETS) {
            if precision >= target {
                *c = taken / total;
            }
        }
    }
    let aurc = risk_sum / total;
    let correct_weight = total - errors;
    Selective {
        aurc,
        e_aurc: aurc - oracle_aurc(total, correct_weight),
        augrc: errors_sum / (total * total),
        coverage_at_precision: coverage,
    }
}

/// AURC of the oracle ranking: every correct item first.
///
/// With c correct among n, the sum Σ_{k=c+1..n} (k − c)/k is
/// (n − c) − c·(H_n − H_c); summed directly when n − c is small, where
/// the difference would cancel, and from the harmonic numbers' asymptotic
/// series otherwise (a test checks 1e-12 against the direct sum).
fn oracle_aurc(total: f64, correct: f64) -> f64 {
    let (n, c) = (total as u64, correct as u64);
    let wrong = n - c;
    let sum: f64 = if wrong <= 64 || c < 16 {
        (c + 1..=n).map(|k| (k - c) as f64 / k as f64).sum()
    } else {
        wrong as f64 - c as f64 * harmonic_difference(n as f64, c as f64)
    };
    sum / total
}

/// H_n − H_c for c ≥ 16: ln(n/c) and the series' terms in 1/n and 1/c.
fn harmonic_difference(n: f64, c: f64) -> f64 {
    let tail = |m: f64| {
        let m2 = m * m;
        1.0 / (2.0 * m) - 1.0 / (12.0 * m2) + 1.0 / (120.0 * m2 * m2) - 1.0 / (252.0 * m2 * m2 * m2)
    };
    ((n - c) / c).ln_1p() + tail(n) - tail(c)
}

/// The risk–coverage curve at every tie-run end, highest cutoff first.
pub fn risk_coverage_curve(confidence: &[f64], correct: &[bool]) -> Vec<CurvePoint> {
    let mut ascending: Vec<usize> = (0..confidence.len()).collect();
    ascending.sort_by(|&a, &b| confidence[a].total_cmp(&confidence[b]));
    curve_of_runs(&runs_descending(&ascending, confidence, correct, &|_| 1.0))
}

/// The risk–coverage curve from the tie runs (highest confidence first).
pub fn curve_of_runs(runs: &[Run]) -> Vec<CurvePoint> {
    let total: f64 = runs.iter().map(|r| r.weight).sum();
    let (mut taken, mut errors) = (0.0, 0.0);
    runs.iter()
        .map(|run| {
            taken += run.weight;
            errors += run.errors;
            CurvePoint {
                confidence: run.confidence,
                coverage: taken / total,
                risk: errors / taken,
            }
        })
        .collect()
}

/// At most `points` + 2 points of `curve`: the first point of each
/// 1/`points` step of coverage, and the last. Enough to draw, small enough
/// for a JSON report.
pub fn thin(curve: &[CurvePoint], points: usize) -> Vec<CurvePoint> {
    let step = |p: &CurvePoint| (p.coverage * points as f64).floor() as usize;
    let mut kept: Vec<CurvePoint> = Vec::new();
    for (i, point) in curve.iter().enumerate() {
        let new_step = kept.last().is_none_or(|last| step(point) > step(last));
        if new_step || i + 1 == curve.len() {
            kept.push(*point);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(confidence: &[f64], correct: &[bool]) -> Selective {
        let mut ascending: Vec<usize> = (0..confidence.len()).collect();
        ascending.sort_by(|&a, &b| confidence[a].total_cmp(&confidence[b]));
        selective(&ascending, confidence, correct, &|_| 1.0)
    }

    #[test]
    fn distinct_confidences_follow_the_definitions_by_hand() {
        // Sorted: 0.9 ok, 0.8 wrong, 0.7 ok, 0.6 wrong.
        // E_k = 0, 1, 1, 2; risks 0, 1/2, 1/3, 1/2; AURC = (0+0.5+1/3+0.5)/4.
        let s = numbers(&[0.6, 0.9, 0.7, 0.8], &[false, true, true, false]);
        let aurc = (0.5 + 1.0 / 3.0 + 0.5) / 4.0;
        assert!((s.aurc - aurc).abs() < 1e-15);
        // Oracle: C = 2, E_k = 0, 0, 1, 2 → risks 0, 0, 1/3, 1/2.
        assert!((s.e_aurc - (aurc - (1.0 / 3.0 + 0.5) / 4.0)).abs() < 1e-15);
        assert!((s.augrc - (0.0 + 1.0 + 1.0 + 2.0) / 16.0).abs() < 1e-15);
        // Precision 1 at coverage 1/4, 2/3 at 3/4, 1/2 at 1.
        assert_eq!(s.coverage_at_precision, [0.25, 0.25, 0.25]);
    }

    #[test]
    fn ties_take_the_expected_risk_of_a_random_order() {
        // Two tied items, one wrong: E_1 = 1/2, E_2 = 1 → risks 1/2, 1/2.
        let s = numbers(&[0.5, 0.5], &[true, false]);
        assert!((s.aurc - 0.5).abs() < 1e-15);
        assert!((s.augrc - (0.5 + 1.0) / 4.0).abs() < 1e-15);
        assert_eq!(s.coverage_at_precision, [0.0; 3]);
    }

    #[test]
    fn weights_count_items_that_many_times() {
        let confidence = [0.2, 0.9, 0.6];
        let correct = [false, true, false];
        let ascending = [0, 2, 1];
        let weighted = selective(&ascending, &confidence, &correct, &|i| [2.0, 1.0, 3.0][i]);
        let repeated = numbers(
            &[0.2, 0.2, 0.9, 0.6, 0.6, 0.6],
            &[false, false, true, false, false, false],
        );
        assert_eq!(weighted, repeated);
    }

    #[test]
    fn the_oracle_aurc_series_is_the_direct_sum() {
        for (n, c) in [
            (100_000u64, 37_000u64),
            (1000, 900),
            (5000, 16),
            (200_000, 199_000),
        ] {
            let direct: f64 =
                (c + 1..=n).map(|k| (k - c) as f64 / k as f64).sum::<f64>() / n as f64;
            let fast = oracle_aurc(n as f64, c as f64);
            assert!(
                ((fast - direct) / direct).abs() < 1e-12,
                "{n} {c}: {fast} vs {direct}"
            );
        }
    }

    #[test]
    fn thinning_keeps_the_ends_and_bounds_the_count() {
        let confidence: Vec<f64> = (0..10_000).map(|i| i as f64 / 10_000.0).collect();
        let correct: Vec<bool> = (0..10_000).map(|i| i % 3 == 0).collect();
        let curve = risk_coverage_curve(&confidence, &correct);
        let thinned = thin(&curve, 200);
        assert!(thinned.len() <= 202, "{}", thinned.len());
        assert!(thinned.len() >= 150, "{}", thinned.len());
        assert_eq!(thinned.first(), curve.first());
        assert_eq!(thinned.last(), curve.last());
    }

    #[test]
    fn the_curve_has_one_point_per_realisable_cutoff() {
        let curve = risk_coverage_curve(&[0.9, 0.5, 0.5, 0.1], &[true, true, false, false]);
        let points: Vec<(f64, f64, f64)> = curve
            .iter()
            .map(|p| (p.confidence, p.coverage, p.risk))
            .collect();
        assert_eq!(
            points,
            vec![(0.9, 0.25, 0.0), (0.5, 0.75, 1.0 / 3.0), (0.1, 1.0, 0.5)]
        );
    }
}
