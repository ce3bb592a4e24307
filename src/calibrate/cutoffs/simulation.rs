//! Seeded calibration sets drawn from populations whose precision at every
//! cutoff is known in closed form, to check that a cutoff procedure keeps
//! its guarantee (validity) and to measure how much it accepts (power)
//! beside the oracle that knows the population.
//!
//! Confidence C ~ Beta(3, 2), drawn as the third smallest of four uniforms,
//! with density 12c²(1 − c); P(correct | c) is c (calibrated), c²
//! (overconfident) or √c (underconfident). Not here: the procedures
//! themselves (`procedures`), or MAPIE's runs of the same draws (the bench).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::CutoffParams;

/// A population of (confidence, correct) pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Population {
    Calibrated,
    Overconfident,
    Underconfident,
}

impl Population {
    pub const ALL: [Population; 3] = [
        Population::Calibrated,
        Population::Overconfident,
        Population::Underconfident,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Population::Calibrated => "calibrated, P(correct | c) = c",
            Population::Overconfident => "overconfident, P(correct | c) = c²",
            Population::Underconfident => "underconfident, P(correct | c) = √c",
        }
    }

    fn truth(self, c: f64) -> f64 {
        match self {
            Population::Calibrated => c,
            Population::Overconfident => c * c,
            Population::Underconfident => c.sqrt(),
        }
    }

    /// ∫₀ᵗ P(correct | c) 12c²(1 − c) dc.
    fn correct_mass_below(self, t: f64) -> f64 {
        match self {
            Population::Calibrated => 3.0 * t.powi(4) - 12.0 * t.powi(5) / 5.0,
            Population::Overconfident => 12.0 * t.powi(5) / 5.0 - 2.0 * t.powi(6),
            Population::Underconfident => 12.0 * (t.powf(3.5) / 3.5 - t.powf(4.5) / 4.5),
        }
    }

    /// P(C ≥ t).
    pub fn coverage(self, t: f64) -> f64 {
        // 1 − (4t³ − 3t⁴) in u = 1 − t, without cancellation near t = 1.
        let u = 1.0 - t.clamp(0.0, 1.0);
        6.0 * u * u - 8.0 * u.powi(3) + 3.0 * u.powi(4)
    }

    /// P(correct | C ≥ t).
    pub fn precision(self, t: f64) -> f64 {
        let t = t.clamp(0.0, 1.0 - 1e-12);
        (self.correct_mass_below(1.0) - self.correct_mass_below(t)) / self.coverage(t)
    }

    /// The loosest cutoff whose population precision reaches `target`, and
    /// its coverage; `None` when none does. Precision rises with t here.
    pub fn oracle(self, target: f64) -> Option<(f64, f64)> {
        if self.precision(1.0 - 1e-4) < target {
            return None;
        }
        if self.precision(0.0) >= target {
            return Some((0.0, 1.0));
        }
        let (mut lo, mut hi) = (0.0, 1.0 - 1e-4);
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if self.precision(mid) >= target {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some((hi, self.coverage(hi)))
    }

    pub fn draw(self, n: usize, rng: &mut impl Rng) -> (Vec<f64>, Vec<bool>) {
        let confidence: Vec<f64> = (0..n)
            .map(|_| {
                let mut u: [f64; 4] = std::array::from_fn(|_| rng.random());
                u.sort_by(f64::total_cmp);
                u[2]
            })
            .collect();
        let correct = confidence
            .iter()
            .map(|&c| rng.random::<f64>() < self.truth(c))
            .collect();
        (confidence, correct)
    }
}

/// What one procedure did over many draws at one target.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub draws: usize,
    /// Draws where a cutoff was chosen.
    pub found: usize,
    /// Draws whose chosen cutoff has population precision below the target.
    pub failures: usize,
    /// Mean population coverage of the chosen cutoff (0 where none).
    pub mean_coverage: f64,
    /// The oracle's coverage.
    pub oracle_coverage: f64,
}

impl Outcome {
    pub fn failure_rate(&self) -> f64 {
        self.failures as f64 / self.draws as f64
    }

    /// δ plus three binomial standard errors of the draw count.
    pub fn allowed_failure_rate(&self, delta: f64) -> f64 {
        delta + 3.0 * (delta * (1.0 - delta) / self.draws as f64).sqrt()
    }
}

/// The seeded calibration set `index` of a run: the same set for every
/// procedure, so their outcomes compare on the same data.
pub fn draw_set(
    population: Population,
    n: usize,
    seed: u64,
    index: usize,
) -> (Vec<f64>, Vec<bool>) {
    let mut rng =
        ChaCha8Rng::seed_from_u64(seed.wrapping_mul(1_000_003).wrapping_add(index as u64));
    population.draw(n, &mut rng)
}

/// Runs `params` (its first target) on `draws` seeded sets of `n` items.
pub fn simulate(
    population: Population,
    params: &CutoffParams,
    n: usize,
    draws: usize,
    seed: u64,
) -> Outcome {
    let target = params.target_precisions[0];
    let mut outcome = Outcome {
        draws,
        found: 0,
        failures: 0,
        mean_coverage: 0.0,
        oracle_coverage: population.oracle(target).map_or(0.0, |o| o.1),
    };
    for index in 0..draws {
        let (confidence, correct) = draw_set(population, n, seed, index);
        let params = CutoffParams {
            seed: seed.wrapping_add(index as u64),
            ..params.clone()
        };
        let Ok(cutoffs) = params.fit(&confidence, &correct) else {
            continue;
        };
        let Some(t) = cutoffs.accept[0].cutoff else {
            continue;
        };
        outcome.found += 1;
        outcome.mean_coverage += population.coverage(t);
        if population.precision(t) < target {
            outcome.failures += 1;
        }
    }
    outcome.mean_coverage /= draws as f64;
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue "decisions with power": on Beta(3, 2) calibrated confidences the
    /// oracle accepts every c ≥ 0.846, 11.5% of items, at precision 0.9.
    #[test]
    fn the_oracle_matches_the_issue_s_figures() {
        let (t, coverage) = Population::Calibrated.oracle(0.9).unwrap();
        assert!((t - 0.846).abs() < 0.001, "{t}");
        assert!((coverage - 0.115).abs() < 0.001, "{coverage}");
        for population in Population::ALL {
            assert!((population.coverage(0.0) - 1.0).abs() < 1e-12);
            // The base rate is E[P(correct | C)]: 0.6, 0.4 and 12 (1/3.5 − 1/4.5).
            let base = population.precision(0.0);
            let expected = match population {
                Population::Calibrated => 0.6,
                Population::Overconfident => 0.4,
                Population::Underconfident => 12.0 * (1.0 / 3.5 - 1.0 / 4.5),
            };
            assert!((base - expected).abs() < 1e-12, "{population:?} {base}");
        }
    }

    #[test]
    fn draws_follow_the_population() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let (confidence, correct) = Population::Calibrated.draw(40_000, &mut rng);
        let mean = confidence.iter().sum::<f64>() / confidence.len() as f64;
        assert!((mean - 0.6).abs() < 0.005, "{mean}");
        let above = confidence.iter().filter(|&&c| c >= 0.846).count() as f64 / 40_000.0;
        assert!((above - 0.115).abs() < 0.006, "{above}");
        let rate = correct.iter().filter(|&&y| y).count() as f64 / 40_000.0;
        assert!((rate - 0.6).abs() < 0.01, "{rate}");
    }
}
