//! Whether a deployed accept rule still holds on new labelled items, read in
//! arrival order: an anytime-valid test of "the mistake rate among accepted
//! items is at most α" (precision at least its target), so it may be looked
//! at after every item or batch without inflating its error.
//!
//! The test is a betting e-process (Waudby-Smith and Ramdas 2024; Shafer and
//! Vovk): for a bet λ ∈ (0, 1/α), K_n(λ) = Π (1 + λ (e_i − α)) over the
//! accepted items' mistakes e_i ∈ {0, 1}. While every accepted item's chance
//! of being a mistake is at most α, K_n(λ) is a non-negative supermartingale,
//! and so is the average over a fixed grid of bets; by Ville's inequality it
//! ever reaches 1/δ with probability at most δ. The alarm is raised the first
//! time it does. The same e-process at other rates α' gives the printed bound:
//! the largest α' it currently rejects is a lower bound on the mistake rate,
//! and one minus it an upper bound on the precision.
//!
//! Not here: which items are accepted (the calibrator's `apply`), or reading
//! files (`commands::monitor`).

use serde::Serialize;

/// Bets λ = j / ((BETS + 1) α), j = 1..=BETS.
const BETS: usize = 20;

/// The state after one accepted item.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Checkpoint {
    /// Accepted items so far, and the mistakes among them.
    pub accepted: usize,
    pub mistakes: usize,
    pub running_precision: f64,
    /// The e-process at the target's α.
    pub e_value: f64,
    /// Whether the e-process has reached 1/δ (now or before).
    pub alarm: bool,
}

/// ln of the e-process for H0: mistake rate ≤ `alpha` after `n` accepted
/// items with `k` mistakes. The bets are fixed, so the product depends on
/// the counts alone: K(λ) = (1 + λ(1 − α))^k (1 − λα)^(n − k), averaged
/// over λ = j / ((BETS + 1) α).
fn log_e_value(n: usize, k: usize, alpha: f64) -> f64 {
    let logs: Vec<f64> = (1..=BETS)
        .map(|j| {
            let lambda = j as f64 / ((BETS + 1) as f64 * alpha);
            k as f64 * (lambda * (1.0 - alpha)).ln_1p() + (n - k) as f64 * (-lambda * alpha).ln_1p()
        })
        .collect();
    let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = logs.iter().map(|w| (w - top).exp()).sum();
    top + (sum / BETS as f64).ln()
}

/// The largest mistake rate α' the e-process rejects after (n, k), by
/// bisection (0 when it rejects none, e.g. before any mistake).
fn rejected_rate(n: usize, k: usize, threshold: f64) -> f64 {
    let mut hi = k as f64 / n as f64;
    if hi <= 0.0 || log_e_value(n, k, hi * 1e-6) < threshold {
        return 0.0;
    }
    let mut lo = hi * 1e-6;
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        if log_e_value(n, k, mid) >= threshold {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// An upper bound on the precision after `accepted` items with `mistakes`:
/// 1 − the largest mistake rate the e-process rejects now at level `delta`
/// (1 when it rejects none).
pub fn precision_bound(accepted: usize, mistakes: usize, delta: f64) -> f64 {
    1.0 - rejected_rate(accepted, mistakes, (1.0 / delta).ln())
}

/// Runs the test over the accepted items' mistakes, in arrival order, for
/// target precision 1 − `alpha` at level `delta`: one checkpoint per item.
pub fn monitor(mistakes: &[bool], alpha: f64, delta: f64) -> Vec<Checkpoint> {
    let threshold = (1.0 / delta).ln();
    let mut alarm = false;
    let mut wrong = 0;
    mistakes
        .iter()
        .enumerate()
        .map(|(i, &mistake)| {
            let n = i + 1;
            wrong += usize::from(mistake);
            let log_e = log_e_value(n, wrong, alpha);
            alarm |= log_e >= threshold;
            Checkpoint {
                accepted: n,
                mistakes: wrong,
                running_precision: 1.0 - wrong as f64 / n as f64,
                e_value: log_e.exp(),
                alarm,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn stream(rng: &mut ChaCha8Rng, parts: &[(usize, f64)]) -> Vec<bool> {
        parts
            .iter()
            .flat_map(|&(n, precision)| (0..n).map(move |_| precision))
            .map(|precision| rng.random::<f64>() >= precision)
            .collect()
    }

    /// A stream that holds exactly at the target raises the alarm in at most
    /// δ of 400 seeded streams (plus three standard errors).
    #[test]
    fn a_stream_that_holds_rarely_raises_the_alarm() {
        let (alpha, delta, seeds) = (0.1, 0.1, 400);
        let mut alarms = 0;
        for seed in 0..seeds {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mistakes = stream(&mut rng, &[(2_000, 0.9)]);
            alarms += usize::from(monitor(&mistakes, alpha, delta).last().unwrap().alarm);
        }
        let rate = alarms as f64 / seeds as f64;
        let allowed = delta + 3.0 * (delta * (1.0 - delta) / seeds as f64).sqrt();
        println!(
            "holding at the target: {alarms} alarms in {seeds} streams ({rate:.3}, allowed {allowed:.3})"
        );
        assert!(rate <= allowed);
    }

    /// Precision 0.95 for 500 accepted items, then 0.7: the alarm comes
    /// within 500 items of the drop in at least 95 of 100 streams.
    #[test]
    fn a_drop_halfway_raises_the_alarm_within_a_bounded_delay() {
        let (alpha, delta) = (0.1, 0.1);
        let mut delays = Vec::new();
        for seed in 0..100 {
            let mut rng = ChaCha8Rng::seed_from_u64(1_000 + seed);
            let mistakes = stream(&mut rng, &[(500, 0.95), (1_000, 0.7)]);
            let checkpoints = monitor(&mistakes, alpha, delta);
            if let Some(first) = checkpoints.iter().position(|c| c.alarm) {
                delays.push(first as i64 - 500);
            }
        }
        delays.sort();
        let early = delays.iter().filter(|&&d| d < 0).count();
        let within = delays.iter().filter(|&&d| d <= 500).count();
        println!(
            "drop at 500: alarms in {} of 100, delay median {:?}, 95th {:?}; {early} before the drop",
            delays.len(),
            delays.get(delays.len() / 2),
            delays.get(delays.len() * 95 / 100)
        );
        assert!(within >= 95, "{delays:?}");
    }

    #[test]
    fn the_bound_covers_the_running_precision_and_tightens() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mistakes = stream(&mut rng, &[(3_000, 0.8)]);
        let checkpoints = monitor(&mistakes, 0.1, 0.1);
        let last = checkpoints.last().unwrap();
        assert!(last.alarm);
        let bound = |c: &Checkpoint| precision_bound(c.accepted, c.mistakes, 0.1);
        assert!(bound(last) >= last.running_precision - 1e-12);
        assert!(bound(last) < 0.85, "{last:?} {}", bound(last));
        assert!(bound(&checkpoints[10]) > bound(last));
        assert_eq!(precision_bound(50, 0, 0.1), 1.0);
    }
}
