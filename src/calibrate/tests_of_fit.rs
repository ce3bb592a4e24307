//! A calibration test and a debiased calibration error: statistics whose
//! point is to say whether a gap is more than noise.
//!
//! Spiegelhalter's Z: Σ(y − p)(1 − 2p) / √Σ(1 − 2p)² p(1 − p), with the
//! one-sided p-value 1 − Φ(Z) of MAPIE 1.6.0's `spiegelhalter_p_value`
//! (computed as ½·erfc(Z/√2), which keeps the tail where 1 − Φ rounds to 0).
//! A large n rejects tiny departures.
//!
//! Debiased L2 calibration error (Kumar, Liang and Ma 2019), as the
//! `uncertainty-calibration` package's `get_calibration_error(debias=True)`:
//! 15 equal-mass bins cut halfway between neighbouring runs of the sorted
//! confidences; per bin (n_b ≥ 2) the squared gap less its variance term
//! ȳ_b(1 − ȳ_b)/(n_b − 1); the weighted sum clipped at 0, then the root.
//!
//! Not here: the binned and smooth ECEs (`metrics`, `smooth`).

use super::runs::{Run, runs_descending};

/// Spiegelhalter's Z and its one-sided p-value; `None` when every
/// confidence is 0, ½ or 1 (no variance to scale by).
pub fn spiegelhalter(
    confidence: &[f64],
    correct: &[bool],
    w: &impl Fn(usize) -> f64,
) -> Option<(f64, f64)> {
    let (mut numerator, mut variance) = (0.0, 0.0);
    for (i, (&p, &y)) in confidence.iter().zip(correct).enumerate() {
        let y = if y { 1.0 } else { 0.0 };
        numerator += w(i) * (y - p) * (1.0 - 2.0 * p);
        variance += w(i) * (1.0 - 2.0 * p).powi(2) * p * (1.0 - p);
    }
    spiegelhalter_of_sums(numerator, variance)
}

/// Spiegelhalter's Z and p-value from its numerator Σ w (y − f)(1 − 2f) and
/// variance Σ w (1 − 2f)² f(1 − f).
pub fn spiegelhalter_of_sums(numerator: f64, variance: f64) -> Option<(f64, f64)> {
    (variance > 0.0).then(|| {
        let z = numerator / variance.sqrt();
        (z, 0.5 * erfc(z / std::f64::consts::SQRT_2))
    })
}

/// The complementary error function to about 1e-15: its Taylor series
/// below 2, Lentz's continued fraction above, and erfc(−x) = 2 − erfc(x).
pub fn erfc(x: f64) -> f64 {
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 2.0 {
        // erf(x) = 2/√π Σ (−1)^n x^(2n+1) / (n! (2n+1)).
        let (mut term, mut sum, mut n) = (x, x, 0.0);
        while term.abs() > 1e-17 * sum.abs() {
            n += 1.0;
            term *= -x * x / n;
            sum += term / (2.0 * n + 1.0);
        }
        return 1.0 - 2.0 / std::f64::consts::PI.sqrt() * sum;
    }
    // erfc(x) = e^(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))).
    let tiny = 1e-300;
    let (mut f, mut c, mut d) = (x, x, 0.0);
    for k in 1..500 {
        let a = k as f64 / 2.0;
        d = x + a * d;
        d = if d.abs() < tiny { tiny } else { d };
        c = x + a / c;
        c = if c.abs() < tiny { tiny } else { c };
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x * x).exp() / std::f64::consts::PI.sqrt() / f
}

/// Bins of the debiased estimate.
const DEBIAS_BINS: u64 = 15;

/// The debiased L2 calibration error over `ascending` (items by confidence),
/// item i counted `w(i)` times (a whole number).
pub fn debiased_l2_ce(
    ascending: &[usize],
    confidence: &[f64],
    correct: &[bool],
    w: &impl Fn(usize) -> f64,
) -> f64 {
    debiased_l2_ce_of_runs(&runs_descending(ascending, confidence, correct, w))
}

/// [`debiased_l2_ce`] from the tie runs of positive (whole) weight, highest
/// confidence first.
pub fn debiased_l2_ce_of_runs(runs: &[Run]) -> f64 {
    // Weights are whole numbers: the casts are exact.
    let total: u64 = runs.iter().map(|r| r.weight as u64).sum();
    if total == 0 {
        return f64::NAN;
    }
    // numpy's array_split sizes; each cut halfway between the values on
    // either side of a boundary of the sorted list (each item repeated),
    // found in one walk up the runs; and 1.
    let ascending: Vec<&Run> = runs.iter().rev().collect();
    let bins = DEBIAS_BINS.min(total);
    let (base, extra) = (total / bins, total % bins);
    let mut cuts = Vec::with_capacity(bins as usize);
    // `run` holds positions below..below + its weight.
    let (mut run, mut below, mut boundary) = (0, 0u64, 0u64);
    for b in 0..bins - 1 {
        boundary += base + u64::from(b < extra);
        while below + (ascending[run].weight as u64) < boundary {
            below += ascending[run].weight as u64;
            run += 1;
        }
        let last_below = ascending[run].confidence;
        let first_above = if below + (ascending[run].weight as u64) > boundary {
            last_below
        } else {
            ascending[run + 1].confidence
        };
        cuts.push((last_below + first_above) / 2.0);
    }
    cuts.push(1.0);
    cuts.sort_by(f64::total_cmp);
    cuts.dedup();
    let mut sums = vec![(0.0_f64, 0.0_f64, 0.0_f64); cuts.len()];
    // Runs come in ascending confidence, so each one's bin (the first cut
    // at or above it) is found by walking on from the previous one's.
    let mut bin = 0;
    for run in ascending {
        let p = run.confidence;
        while bin + 1 < cuts.len() && cuts[bin] < p {
            bin += 1;
        }
        sums[bin].0 += run.weight;
        sums[bin].1 += run.weight * p;
        sums[bin].2 += run.right();
    }
    let estimate: f64 = sums
        .iter()
        .filter(|s| s.0 >= 2.0)
        .map(|&(n, conf, pos)| {
            let (mean, rate) = (conf / n, pos / n);
            n / total as f64 * ((mean - rate).powi(2) - rate * (1.0 - rate) / (n - 1.0))
        })
        .sum();
    estimate.max(0.0).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::metrics::tests::fixture;

    #[test]
    fn erfc_matches_known_values() {
        // math.erfc in Python.
        for (x, expected) in [
            (0.0, 1.0),
            (0.5, 0.4795001221869535),
            (1.9, 0.0072095707647425325),
            (2.1, 0.002979466656332984),
            (5.0, 1.5374597944280351e-12),
            (-1.0, 1.842700792949715),
        ] {
            let got = erfc(x);
            assert!(
                ((got - expected) / expected).abs() < 1e-13,
                "erfc({x}) = {got}, not {expected}"
            );
        }
    }

    // Expected values: tests/metrics_expected.py (MAPIE 1.6.0 and uncertainty-calibration 0.1.4).
    #[test]
    fn spiegelhalter_and_debiased_ce_match_their_packages() {
        let f = fixture();
        let (z, p) = spiegelhalter(&f.confidence, &f.correct, &|_| 1.0).unwrap();
        assert!((z - 2.9926483923770117).abs() < 1e-9, "{z}");
        assert!((p - 0.001382840886197334).abs() < 1e-9, "{p}");
        let mut ascending: Vec<usize> = (0..f.confidence.len()).collect();
        ascending.sort_by(|&a, &b| f.confidence[a].total_cmp(&f.confidence[b]));
        let ce = debiased_l2_ce(&ascending, &f.confidence, &f.correct, &|_| 1.0);
        assert!((ce - 0.2123331887274936).abs() < 1e-9, "{ce}");
    }
}
