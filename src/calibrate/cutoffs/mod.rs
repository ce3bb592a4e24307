//! Acceptance and rejection cutoffs with a finite-sample guarantee, chosen by
//! Learn-then-Test (Angelopoulos et al. 2021) on the raw confidence.
//!
//! For a target precision 1 − α among accepted items and a level δ, the
//! accept cutoff is the loosest cutoff t such that, with probability at least
//! 1 − δ over exchangeable calibration items, the error rate among items with
//! confidence ≥ t is at most α. The candidates are fixed before any label is
//! seen (steps of 1/`grid`, and the confidences' 1/`grid` quantiles); at each
//! the null "error rate > α" is tested with the exact one-sided binomial
//! p-value P(Binomial(n_t, α) ≤ k_t) for
//! k_t errors among n_t accepted items, and a [`Procedure`] controls the
//! family-wise error over the candidates. A candidate that accepts too few
//! items for the test to have even odds of passing it when its true error
//! rate is α/2 (fewer than 52 at α = 0.1, δ = 0.1), or fewer than a tenth of
//! the items where that is less (but never fewer than can pass at all), is
//! left out: that looks at counts only, never at a label, and keeps a strict
//! cutoff holding a few dozen items from stopping the walk on noise. The reject cutoff is the mirror image: the highest r such
//! that the *correct* rate among items below r is at most its α.
//!
//! The cutoffs are chosen on the confidence the deployed rule compares, the
//! raw one, so what is validated is what `apply` does; the calibrated value
//! at each cutoff is reported beside it (a monotone rescaler keeps the order).
//! With `--min-coverage` a chosen accept cutoff must also accept at least
//! that share of items, by a one-sided Clopper–Pearson lower bound at δ, or
//! the rule says it cannot. With a group column each group gets its own
//! cutoffs and its own guarantee (Mondrian).
//!
//! Not here: which confidences go in and the rescaler (`calibrate`).

pub mod procedures;
pub mod ranked;
pub mod rule;
pub mod simulation;

use serde::{Deserialize, Serialize};

use super::binomial::clopper_pearson_upper;
use procedures::{Chosen, HOLM_STEPS, Side, Tally};
pub use procedures::{Procedure, fewest_to_pass};
pub use ranked::RankedItems;

/// Candidates deciding fewer items than give the exact test even odds
/// against a mistake rate of this share of α are passed over.
pub const POWER_FRACTION: f64 = 0.5;

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
    /// Pass over cutoffs that decide fewer items than
    /// [`procedures::fewest_with_power`] (the default); `false` is the plain
    /// fixed-sequence walk of MAPIE and Angelopoulos et al., which tests
    /// every cutoff that decides any item.
    pub pass_over_small: bool,
    pub procedure: Procedure,
    /// Add to the value grid the cutoffs at every 1/grid quantile of the
    /// confidences (the default): chosen from the confidences alone, never a
    /// label, they keep a measure whose values crowd into one grid step
    /// (total probability, near 0) from having a single candidate. `false`
    /// is MAPIE's value grid alone.
    pub quantile_candidates: bool,
    /// Seeds the split of the split fixed sequence.
    pub seed: u64,
    /// The least share of items an accept cutoff must accept, in (0, 1).
    pub min_coverage: Option<f64>,
}

impl Default for CutoffParams {
    fn default() -> Self {
        CutoffParams {
            target_precisions: vec![0.8, 0.9, 0.95],
            delta: 0.1,
            reject_precision: None,
            grid: 100,
            pass_over_small: true,
            procedure: Procedure::default(),
            quantile_candidates: true,
            seed: 0,
            min_coverage: None,
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
    #[error("--min-coverage must be in (0, 1), got {0}")]
    MinCoverage(f64),
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
        if let Some(c) = self.min_coverage.filter(|&c| !open_unit(c)) {
            return Err(CutoffParamError::MinCoverage(c));
        }
        if !(1..=100_000).contains(&self.grid) {
            return Err(CutoffParamError::Grid(self.grid));
        }
        Ok(())
    }

    /// The same settings with the split seeded by `seed`.
    pub fn with_seed(&self, seed: u64) -> CutoffParams {
        CutoffParams {
            seed,
            ..self.clone()
        }
    }

    /// Chooses every cutoff on (confidence, correct) pairs.
    pub fn fit(&self, confidence: &[f64], correct: &[bool]) -> Result<Cutoffs, CutoffParamError> {
        self.fit_ranked(&RankedItems::new(confidence, correct, self.seed))
    }

    /// Chooses every cutoff on items ranked once, so that several
    /// procedures can share the ranking; the split uses the ranking's seed.
    pub fn fit_ranked(&self, items: &RankedItems) -> Result<Cutoffs, CutoffParamError> {
        self.check()?;
        let accept = self
            .target_precisions
            .iter()
            .map(|&target| self.choose(Side::Accept, target, items))
            .collect();
        let reject = self
            .reject_precision
            .map(|target| self.choose(Side::Reject, target, items));
        Ok(Cutoffs {
            delta: self.delta,
            grid: self.grid,
            procedure: self.procedure,
            min_coverage: self.min_coverage,
            items: items.all.len(),
            accept,
            reject,
            groups: None,
            rule: None,
        })
    }

    /// Chooses cutoffs in each group of `groups` (one label per item) on its
    /// own items, and the pooled cutoffs beside them.
    pub fn fit_by_group(
        &self,
        column: &str,
        confidence: &[f64],
        correct: &[bool],
        groups: &[String],
    ) -> Result<Cutoffs, CutoffParamError> {
        let mut pooled = self.fit(confidence, correct)?;
        let mut names: Vec<&String> = groups.iter().collect();
        names.sort();
        names.dedup();
        let per_group = names
            .into_iter()
            .map(|name| {
                let (conf, right): (Vec<f64>, Vec<bool>) = groups
                    .iter()
                    .zip(confidence.iter().zip(correct))
                    .filter(|(g, _)| *g == name)
                    .map(|(_, (&p, &y))| (p, y))
                    .unzip();
                let fitted = self.fit(&conf, &right)?;
                Ok(GroupCutoffs {
                    group: name.clone(),
                    items: fitted.items,
                    accept: fitted.accept,
                    reject: fitted.reject,
                })
            })
            .collect::<Result<Vec<_>, CutoffParamError>>()?;
        pooled.groups = Some(ByGroup {
            column: column.to_owned(),
            groups: per_group,
        });
        Ok(pooled)
    }

    fn choose(&self, side: Side, target: f64, items: &RankedItems) -> Cutoff {
        let alpha = 1.0 - target;
        let candidates = |steps: usize| {
            if self.quantile_candidates {
                side.candidates(steps, items.all.ascending())
            } else {
                side.grid(steps)
            }
        };
        let fine = candidates(self.grid);
        // Even odds against α/2, or a tenth of the items where that is fewer
        // (small sets have few large cutoffs), never below what can pass at
        // all; a count of items, never a label.
        let fewest = if self.pass_over_small {
            let tenth = items
                .all
                .len()
                .div_ceil(10)
                .max(fewest_to_pass(target, self.delta));
            procedures::fewest_with_power(alpha, self.delta, POWER_FRACTION).min(tenth)
        } else {
            1
        };
        let chosen = match self.procedure {
            Procedure::FixedSequence => {
                let tallies = items.all.tallies(side, &fine);
                procedures::fixed_sequence(&tallies, 0..tallies.len(), alpha, self.delta, fewest)
            }
            Procedure::Holm => {
                let coarse = candidates(HOLM_STEPS.min(self.grid));
                let tallies = items.all.tallies(side, &coarse);
                procedures::holm(&tallies, alpha, self.delta, fewest)
            }
            Procedure::Fallback => {
                let coarse = candidates(HOLM_STEPS.min(self.grid));
                let tallies = items.all.tallies(side, &coarse);
                procedures::fallback(&tallies, alpha, self.delta, fewest)
            }
            Procedure::SplitFixedSequence => procedures::split_fixed_sequence(
                side,
                &fine,
                items.split(),
                alpha,
                self.delta,
                fewest,
            ),
        };
        match chosen {
            // The tested tally is at the chosen cutoff, whichever items it counts.
            Some(chosen) => self.describe(side, target, chosen.tested.cutoff, chosen, items),
            None => Cutoff::none(target),
        }
    }

    /// What the chosen cutoff does on every calibration item (the rule
    /// `apply` deploys), with the bound from the items it was tested on.
    fn describe(
        &self,
        side: Side,
        target: f64,
        cutoff: f64,
        chosen: Chosen,
        items: &RankedItems,
    ) -> Cutoff {
        let all = items.all.tally(side, cutoff);
        let Tally {
            decided, mistakes, ..
        } = all;
        let n = items.all.len();
        let coverage = decided as f64 / n as f64;
        let coverage_bound = uniform_coverage_bound(coverage, n, self.delta);
        let mut described = Cutoff {
            target_precision: target,
            cutoff: Some(cutoff),
            decided,
            mistakes,
            tested: chosen.tested.decided,
            tested_mistakes: chosen.tested.mistakes,
            mistake_bound: Some(clopper_pearson_upper(
                chosen.tested.mistakes,
                chosen.tested.decided,
                self.delta,
            )),
            coverage,
            coverage_bound: Some(coverage_bound),
            realised_precision: Some(1.0 - mistakes as f64 / decided as f64),
            calibrated_cutoff: None,
            unmet: None,
        };
        if let Some(least) = self
            .min_coverage
            .filter(|&c| side == Side::Accept && coverage_bound < c)
        {
            described.unmet = Some(format!(
                "the loosest valid cutoff {cutoff} accepts {decided} of {n} items; their share is \
                 at least {coverage_bound:.4} with probability 1 − δ (a bound that holds at every \
                 cutoff at once), below --min-coverage {least}"
            ));
            described.cutoff = None;
        }
        described
    }
}

/// One chosen cutoff and what it did on the calibration items.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cutoff {
    /// The target precision of the decision (1 − α).
    pub target_precision: f64,
    /// On the raw confidence; `None` when no candidate meets the target.
    pub cutoff: Option<f64>,
    /// Calibration items the cutoff decides (accepts, or rejects): n_t,
    /// exactly those `apply` decides on the same items.
    pub decided: usize,
    /// Wrong decisions among them (accepted but wrong, rejected but right): k_t.
    pub mistakes: usize,
    /// Decided items and mistakes among the items the guarantee was tested
    /// on: all of them, or the split procedure's test part.
    #[serde(default)]
    pub tested: usize,
    #[serde(default)]
    pub tested_mistakes: usize,
    /// The one-sided Clopper–Pearson upper bound on the mistake rate at 1 − δ,
    /// from the tested items.
    pub mistake_bound: Option<f64>,
    /// Fraction of the calibration items decided.
    pub coverage: f64,
    /// A one-sided lower bound on the share decided, at 1 − δ: for a chosen
    /// cutoff one that holds at every cutoff at once
    /// ([`uniform_coverage_bound`]), for a fixed rule the exact one.
    #[serde(default)]
    pub coverage_bound: Option<f64>,
    /// 1 − k_t / n_t on the calibration items.
    pub realised_precision: Option<f64>,
    /// The calibrated confidence at the cutoff (the final rescaler's value).
    #[serde(default)]
    pub calibrated_cutoff: Option<f64>,
    /// Why a valid cutoff was still refused (`--min-coverage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmet: Option<String>,
}

impl Cutoff {
    /// No cutoff at `target`: every item goes to review.
    pub fn none(target: f64) -> Cutoff {
        Cutoff {
            target_precision: target,
            cutoff: None,
            decided: 0,
            mistakes: 0,
            tested: 0,
            tested_mistakes: 0,
            mistake_bound: None,
            coverage: 0.0,
            coverage_bound: None,
            realised_precision: None,
            calibrated_cutoff: None,
            unmet: None,
        }
    }
}

/// A lower bound on the share of items a cutoff decides that holds, with
/// probability 1 − δ, at every cutoff at once: the one-sided
/// Dvoretzky–Kiefer–Wolfowitz inequality with Massart's constant,
/// coverage − √(ln(1/δ) / 2n). A pointwise Clopper–Pearson bound would not
/// do here, because the cutoff it speaks of was chosen with the labels; with
/// this one, the precision guarantee and the coverage bound hold together
/// with probability at least 1 − 2δ.
pub fn uniform_coverage_bound(coverage: f64, n: usize, delta: f64) -> f64 {
    let margin = ((1.0 / delta).ln() / (2.0 * n as f64)).sqrt();
    (coverage - margin).max(0.0)
}

/// One group's own cutoffs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupCutoffs {
    pub group: String,
    pub items: usize,
    pub accept: Vec<Cutoff>,
    pub reject: Option<Cutoff>,
}

/// Cutoffs per group of one column (Mondrian): each with its own guarantee.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ByGroup {
    pub column: String,
    pub groups: Vec<GroupCutoffs>,
}

impl ByGroup {
    pub fn group(&self, name: &str) -> Option<&GroupCutoffs> {
        self.groups.iter().find(|g| g.group == name)
    }
}

/// Every cutoff chosen for one set of confidences.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cutoffs {
    pub delta: f64,
    pub grid: usize,
    /// Files written before the procedure was recorded used the fixed sequence.
    #[serde(default = "fixed_sequence")]
    pub procedure: Procedure,
    #[serde(default)]
    pub min_coverage: Option<f64>,
    /// Calibration items the cutoffs were chosen on.
    pub items: usize,
    /// One per target precision, in the order asked.
    pub accept: Vec<Cutoff>,
    pub reject: Option<Cutoff>,
    /// Each group's own cutoffs, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<ByGroup>,
    /// A fixed rule named before the labels, whose one exact test per
    /// target gave these cutoffs, instead of a walk over candidates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<rule::FixedRule>,
}

fn fixed_sequence() -> Procedure {
    Procedure::FixedSequence
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
        decide(accept, self.reject.as_ref(), p)
    }
}

/// Accept at or above `accept`'s cutoff, reject below `reject`'s, review
/// between; where the two overlap the accept cutoff's guarantee decides.
pub fn decide(accept: &Cutoff, reject: Option<&Cutoff>, p: f64) -> Decision {
    if accept.cutoff.is_some_and(|t| p >= t) {
        Decision::Accept
    } else if reject.and_then(|r| r.cutoff).is_some_and(|r| p < r) {
        Decision::Reject
    } else {
        Decision::Review
    }
}

#[cfg(test)]
mod tests;
