//! Acceptance and rejection cutoffs with a finite-sample guarantee, chosen by
//! Learn-then-Test with fixed-sequence testing (Angelopoulos et al. 2021).
//!
//! For a target precision 1 − α among accepted items and a level δ, the
//! accept cutoff is the loosest grid cutoff t such that, with probability at
//! least 1 − δ over exchangeable calibration items, the error rate among
//! items with confidence ≥ t is at most α. The grid is fixed before the data
//! is seen (steps of 1/`grid` from strict to loose). At each cutoff the null
//! "error rate > α" is tested with the exact one-sided binomial
//! (Clopper–Pearson) p-value P(Binomial(n_t, α) ≤ k_t) for k_t errors among
//! n_t accepted items; the walk stops at the first p-value above δ, and
//! because the order is fixed no multiplicity correction is needed. A grid
//! cutoff that accepts too few items to pass with no mistake at all
//! ((1 − α)^n > δ; none, or fewer than 22 at α = 0.1, δ = 0.1) is passed
//! over: that looks at the confidences only, never at the labels, so the
//! order of the tests is still fixed before any label is seen. The reject cutoff is the mirror image: walking up from loose,
//! the highest r such that the *correct* rate among items below r is at most
//! its α.
//!
//! Not here: which confidences go in (out-of-fold rescaled ones, never those
//! the rescaler was fitted on; that is `calibrate`), and the rescaler itself.

use serde::{Deserialize, Serialize};

use super::binomial::{binomial_cdf, clopper_pearson_upper};

/// What to choose cutoffs for.
#[derive(Clone, Debug, PartialEq)]
pub struct CutoffParams {
    /// Precision targets 1 − α among accepted items, each in (0, 1).
    pub target_precisions: Vec<f64>,
    /// The chance the guarantee may fail, in (0, 1).
    pub delta: f64,
    /// Target for the rejected items' error rate (the precision of
    /// "reject"); `None` rejects nothing.
    pub reject_precision: Option<f64>,
    /// Grid steps on [0, 1]: cutoffs are multiples of 1/grid.
    pub grid: usize,
    /// Pass over cutoffs that decide too few items to pass with no mistake
    /// (the default); `false` is the plain fixed-sequence walk of MAPIE and
    /// Angelopoulos et al., which stops at such a cutoff.
    pub pass_over_small: bool,
}

impl Default for CutoffParams {
    fn default() -> Self {
        CutoffParams {
            target_precisions: vec![0.8, 0.9, 0.95],
            delta: 0.1,
            reject_precision: None,
            grid: 100,
            pass_over_small: true,
        }
    }
}

/// A bad cutoff setting, named as its flag.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum CutoffParamError {
    #[error("--target-precision must be in (0, 1), got {0}")]
    Target(f64),
    #[error("--delta must be in (0, 1), got {0}")]
    Delta(f64),
    #[error("--reject-precision must be in (0, 1), got {0}")]
    Reject(f64),
    #[error("the cutoff grid needs 1 to 100000 steps, got {0}")]
    Grid(usize),
}

impl CutoffParams {
    pub fn check(&self) -> Result<(), CutoffParamError> {
        let open_unit = |x: f64| x > 0.0 && x < 1.0;
        if let Some(&t) = self.target_precisions.iter().find(|&&t| !open_unit(t)) {
            return Err(CutoffParamError::Target(t));
        }
        if !open_unit(self.delta) {
            return Err(CutoffParamError::Delta(self.delta));
        }
        if let Some(r) = self.reject_precision.filter(|&r| !open_unit(r)) {
            return Err(CutoffParamError::Reject(r));
        }
        if !(1..=100_000).contains(&self.grid) {
            return Err(CutoffParamError::Grid(self.grid));
        }
        Ok(())
    }

    /// Chooses every cutoff on (confidence, correct) pairs.
    pub fn fit(&self, confidence: &[f64], correct: &[bool]) -> Result<Cutoffs, CutoffParamError> {
        self.check()?;
        let accept = self
            .target_precisions
            .iter()
            .map(|&target| self.accept_cutoff(target, confidence, correct))
            .collect();
        let reject = self
            .reject_precision
            .map(|target| self.reject_cutoff(target, confidence, correct));
        Ok(Cutoffs {
            delta: self.delta,
            grid: self.grid,
            items: confidence.len(),
            accept,
            reject,
        })
    }

    fn accept_cutoff(&self, target: f64, confidence: &[f64], correct: &[bool]) -> Cutoff {
        // Strict to loose: t = 1, 1 − 1/grid, …, 0.
        let grid = (0..=self.grid).rev().map(|j| j as f64 / self.grid as f64);
        let side = |t: f64, p: f64| p >= t;
        self.walk(target, grid, side, confidence, correct, false)
    }

    fn reject_cutoff(&self, target: f64, confidence: &[f64], correct: &[bool]) -> Cutoff {
        // Loose to strict: r = 0, 1/grid, …, 1; items below r are rejected.
        let grid = (0..=self.grid).map(|j| j as f64 / self.grid as f64);
        let side = |r: f64, p: f64| p < r;
        self.walk(target, grid, side, confidence, correct, true)
    }

    /// The fixed-sequence walk. `side(t, p)` says whether an item of
    /// confidence p is decided at cutoff t; a decided item is a mistake when
    /// it is wrong (accepting) or right (`rejecting`).
    fn walk(
        &self,
        target: f64,
        grid: impl Iterator<Item = f64>,
        side: impl Fn(f64, f64) -> bool,
        confidence: &[f64],
        correct: &[bool],
        rejecting: bool,
    ) -> Cutoff {
        let alpha = 1.0 - target;
        let mut chosen = Cutoff::none(target);
        for t in grid {
            let (mut decided, mut mistakes) = (0, 0);
            for (&p, &y) in confidence.iter().zip(correct) {
                if side(t, p) {
                    decided += 1;
                    mistakes += usize::from(y == rejecting);
                }
            }
            // A cutoff that decides too few items to pass even with no
            // mistake ((1 − α)^n > δ) is passed over: that depends on the
            // confidences alone, never the labels, so the guarantee holds,
            // and the walk is not stopped by a strict cutoff with 2 items.
            let too_small = !can_pass(decided, alpha, self.delta);
            if decided == 0 || (self.pass_over_small && too_small) {
                continue;
            }
            if binomial_cdf(mistakes, decided, alpha) > self.delta {
                break;
            }
            chosen = Cutoff {
                target_precision: target,
                cutoff: Some(t),
                decided,
                mistakes,
                mistake_bound: Some(clopper_pearson_upper(mistakes, decided, self.delta)),
                coverage: decided as f64 / confidence.len() as f64,
                realised_precision: Some(1.0 - mistakes as f64 / decided as f64),
            };
        }
        chosen
    }
}

/// Whether `n` decided items could pass the exact test at mistake rate
/// `alpha` and level `delta` at all, i.e. with no mistake: (1 − α)^n ≤ δ.
fn can_pass(n: usize, alpha: f64, delta: f64) -> bool {
    binomial_cdf(0, n, alpha) <= delta
}

/// The fewest decided items, all correct, that pass the exact test at
/// precision `target` and level `delta` (the walk passes over cutoffs with
/// fewer): 11, 22 and 45 at 0.8, 0.9 and 0.95 with δ = 0.1.
pub fn fewest_to_pass(target: f64, delta: f64) -> usize {
    if target <= 0.0 || delta >= 1.0 {
        return 1;
    }
    if target >= 1.0 || delta <= 0.0 {
        return usize::MAX;
    }
    let alpha = 1.0 - target;
    // The closed form, then settled on the walk's own test at the boundary.
    let mut n = (delta.ln() / target.ln()).ceil().max(1.0) as usize;
    while n > 1 && can_pass(n - 1, alpha, delta) {
        n -= 1;
    }
    while !can_pass(n, alpha, delta) {
        n += 1;
    }
    n
}

/// One chosen cutoff and what it did on the calibration items.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cutoff {
    /// The target precision of the decision (1 − α).
    pub target_precision: f64,
    /// `None` when no grid cutoff meets the target.
    pub cutoff: Option<f64>,
    /// Items the cutoff decides (accepts, or rejects): n_t.
    pub decided: usize,
    /// Wrong decisions among them (accepted but wrong, rejected but right): k_t.
    pub mistakes: usize,
    /// The one-sided Clopper–Pearson upper bound on the mistake rate at 1 − δ.
    pub mistake_bound: Option<f64>,
    /// Fraction of the calibration items decided.
    pub coverage: f64,
    /// 1 − k_t / n_t on the calibration items.
    pub realised_precision: Option<f64>,
}

impl Cutoff {
    fn none(target: f64) -> Cutoff {
        Cutoff {
            target_precision: target,
            cutoff: None,
            decided: 0,
            mistakes: 0,
            mistake_bound: None,
            coverage: 0.0,
            realised_precision: None,
        }
    }
}

/// Every cutoff chosen for one set of confidences.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cutoffs {
    pub delta: f64,
    pub grid: usize,
    /// Calibration items the cutoffs were chosen on.
    pub items: usize,
    /// One per target precision, in the order asked.
    pub accept: Vec<Cutoff>,
    pub reject: Option<Cutoff>,
}

/// What to do with one item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Accept,
    Review,
    Reject,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Accept => "accept",
            Decision::Review => "review",
            Decision::Reject => "reject",
        }
    }
}

impl Cutoffs {
    /// The accept cutoff chosen for `target`, if that target was asked for.
    pub fn accept_for(&self, target: f64) -> Option<&Cutoff> {
        self.accept
            .iter()
            .find(|c| (c.target_precision - target).abs() < 1e-12)
    }

    /// The decision for confidence `p` under the accept cutoff `accept`:
    /// accept at or above it, reject below the reject cutoff, review between.
    /// Without an accept cutoff nothing is accepted.
    pub fn decide(&self, accept: &Cutoff, p: f64) -> Decision {
        if accept.cutoff.is_some_and(|t| p >= t) {
            Decision::Accept
        } else if self
            .reject
            .as_ref()
            .and_then(|r| r.cutoff)
            .is_some_and(|r| p < r)
        {
            Decision::Reject
        } else {
            Decision::Review
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn a_weak_confidence_gets_no_cutoff_and_everything_is_reviewed() {
        // Base rate 0.1 and confidence unrelated to it: nothing reaches 0.9.
        let confidence: Vec<f64> = (0..500).map(|i| (i % 97) as f64 / 97.0).collect();
        let correct: Vec<bool> = (0..500).map(|i| i % 10 == 0).collect();
        let cutoffs = CutoffParams::default().fit(&confidence, &correct).unwrap();
        let at_90 = cutoffs.accept_for(0.9).unwrap();
        assert_eq!(at_90.cutoff, None);
        assert_eq!(cutoffs.decide(at_90, 0.99), Decision::Review);
    }

    /// Issue "decisions with power": a strict cutoff that holds 2 items, one
    /// of them wrong, can never pass the exact test at δ = 0.1, so it is
    /// passed over instead of ending the walk before the cutoffs with
    /// enough items.
    #[test]
    fn strict_cutoffs_with_too_few_items_do_not_stop_the_walk() {
        let mut confidence = vec![0.995, 0.995];
        let mut correct = vec![true, false];
        for i in 0..300 {
            confidence.push(0.9);
            correct.push(i % 20 != 0);
        }
        let params = CutoffParams {
            target_precisions: vec![0.8],
            ..CutoffParams::default()
        };
        let cutoffs = params.fit(&confidence, &correct).unwrap();
        let accept = &cutoffs.accept[0];
        assert!(accept.cutoff.is_some_and(|t| t <= 0.9), "{accept:?}");
        assert_eq!((accept.decided, accept.mistakes), (302, 16));
    }

    /// 0.9^22 = 0.098 ≤ 0.1 < 0.9^21 = 0.109.
    #[test]
    fn a_cutoff_needs_enough_correct_items_to_pass_the_exact_test() {
        assert_eq!(fewest_to_pass(0.9, 0.1), 22);
        assert_eq!(fewest_to_pass(0.8, 0.1), 11);
        assert_eq!(fewest_to_pass(0.95, 0.1), 45);
        assert!(0.9f64.powi(22) <= 0.1 && 0.9f64.powi(21) > 0.1);
    }

    #[test]
    fn rejection_takes_the_confidently_wrong_tail() {
        // 10,000 items, confidence i/10,000, correct from 0.4 up. Rejecting below r
        // keeps the correct share (r − 0.4)/r under 5% up to r ≈ 0.421; accepting
        // at t keeps the error share (0.4 − t)/(1 − t) under 5% down to t ≈ 0.368.
        let n = 10_000;
        let confidence: Vec<f64> = (0..n).map(|i| i as f64 / n as f64).collect();
        let correct: Vec<bool> = (0..n).map(|i| i >= 4_000).collect();
        let params = CutoffParams {
            reject_precision: Some(0.95),
            ..CutoffParams::default()
        };
        let cutoffs = params.fit(&confidence, &correct).unwrap();
        let reject = cutoffs.reject.as_ref().unwrap();
        let r = reject.cutoff.unwrap();
        assert!((0.40..=0.42).contains(&r), "{r}");
        assert!(reject.realised_precision.unwrap() >= 0.95);
        let accept = cutoffs.accept_for(0.95).unwrap();
        let t = accept.cutoff.unwrap();
        assert!((0.37..=0.40).contains(&t), "{t}");
        assert!(accept.realised_precision.unwrap() >= 0.95);
        assert!(accept.mistake_bound.unwrap() <= 0.05);
        assert_eq!(cutoffs.decide(accept, 0.1), Decision::Reject);
        assert_eq!(cutoffs.decide(accept, 0.9), Decision::Accept);
        // Where the two overlap, the accept cutoff's guarantee decides.
        assert_eq!(cutoffs.decide(accept, 0.395), Decision::Accept);
    }

    #[test]
    fn bad_settings_name_their_flag() {
        let bad = CutoffParams {
            delta: 1.0,
            ..CutoffParams::default()
        };
        assert_eq!(bad.check(), Err(CutoffParamError::Delta(1.0)));
        let bad = CutoffParams {
            target_precisions: vec![f64::NAN],
            ..CutoffParams::default()
        };
        assert!(
            bad.check()
                .unwrap_err()
                .to_string()
                .contains("--target-precision")
        );
    }

    /// The guarantee itself: over many seeded calibration sets drawn from a
    /// population where P(correct | p) = p, the chosen cutoff's precision on a
    /// large fresh sample falls below the target in at most about δ of draws.
    /// Confidences are Beta(4, 1) (p = U^(1/4)), piled up near 1 as a model's
    /// are: a fixed sequence that starts strict needs items there, or its
    /// first test already fails.
    #[test]
    fn the_precision_guarantee_holds_over_seeded_draws() {
        let (target, delta, draws, n, fresh_n) = (0.9, 0.1, 400, 1_000, 50_000);
        let draw = |rng: &mut ChaCha8Rng, n: usize| -> (Vec<f64>, Vec<bool>) {
            let confidence: Vec<f64> = (0..n).map(|_| rng.random::<f64>().powf(0.25)).collect();
            let correct = confidence
                .iter()
                .map(|&p| rng.random::<f64>() < p)
                .collect();
            (confidence, correct)
        };
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (fresh_conf, fresh_correct) = draw(&mut rng, fresh_n);
        let params = CutoffParams {
            target_precisions: vec![target],
            delta,
            ..CutoffParams::default()
        };
        let mut failures = 0;
        let mut found = 0;
        for _ in 0..draws {
            let (confidence, correct) = draw(&mut rng, n);
            let cutoffs = params.fit(&confidence, &correct).unwrap();
            let Some(t) = cutoffs.accept[0].cutoff else {
                continue;
            };
            found += 1;
            let (mut accepted, mut right) = (0, 0);
            for (&p, &y) in fresh_conf.iter().zip(&fresh_correct) {
                if p >= t {
                    accepted += 1;
                    right += usize::from(y);
                }
            }
            if (right as f64) < target * accepted as f64 {
                failures += 1;
            }
        }
        let failure_rate = failures as f64 / draws as f64;
        // δ plus three binomial standard errors of the draw count.
        let allowed = delta + 3.0 * (delta * (1.0 - delta) / draws as f64).sqrt();
        println!(
            "guarantee: {failures} of {draws} draws fell below precision {target} on the fresh sample \
             (fraction {failure_rate:.4}, δ = {delta}, allowed {allowed:.4}); a cutoff was found in {found}"
        );
        assert!(found > draws / 2, "cutoffs found in only {found} draws");
        assert!(failure_rate <= allowed);
    }
}
