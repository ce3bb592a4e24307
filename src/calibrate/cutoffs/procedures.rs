//! The multiple-testing procedures that turn a grid of candidate cutoffs into
//! one chosen cutoff with a family-wise guarantee (Learn-then-Test,
//! Angelopoulos et al. 2021, §3 and §4): fixed sequence, split fixed
//! sequence, Bonferroni–Holm, and the fallback procedure (Wiens 2003), which
//! keeps testing after a failure.
//!
//! Every procedure sees the candidates in the same order, from the one that
//! decides fewest items to the one that decides most, each with its count of
//! decided items and mistakes; each candidate's null "the mistake rate is
//! above α" is tested with the exact binomial p-value. Each returns the
//! candidate deciding most items among those it rejects, so every cutoff it
//! rejects is valid at once with probability at least 1 − δ.
//!
//! Not here: the grid, the sides (accept or reject) and what a chosen cutoff
//! reports (`cutoffs`).

use super::ranked::Ranked;
use crate::calibrate::binomial::binomial_cdf;

/// How the candidate cutoffs are tested.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Procedure {
    /// Fixed sequence over the fine grid, strictest first, passing over
    /// underpowered cutoffs; stops at the first failure. The most powerful
    /// in `benches/decisions.rs`, so the default.
    #[default]
    FixedSequence,
    /// A seeded 30% of the items orders the fine grid by how surely each
    /// cutoff would pass on the rest; the other 70% tests that sequence.
    SplitFixedSequence,
    /// Bonferroni–Holm step-down over the coarse grid (steps of 0.05),
    /// leaving out cutoffs too small to ever pass.
    Holm,
    /// Wiens's (2003) fallback procedure over the coarse grid's distinct
    /// candidates, strictest first, δ split in halves among them (1/2, 1/4,
    /// ...): a candidate is tested at its own share plus the level of the
    /// one before it if that one passed, so one early failure does not end
    /// the walk.
    Fallback,
}

crate::choices!(Procedure { FixedSequence => "fixed-sequence", SplitFixedSequence => "split-fixed-sequence", Holm => "holm", Fallback => "fallback" });

impl Procedure {
    pub const ALL: [Procedure; 4] = [
        Procedure::FixedSequence,
        Procedure::SplitFixedSequence,
        Procedure::Holm,
        Procedure::Fallback,
    ];

    pub fn as_str(self) -> &'static str {
        crate::choice::Choice::choice_name(self)
    }

    /// The guarantee in one sentence, for reports.
    pub fn guarantee(self) -> &'static str {
        match self {
            Procedure::FixedSequence => {
                "fixed sequence over cutoffs 1, 0.99, ..., 0 and the confidences' 1% \
                 quantiles (strictest first, passing over cutoffs with too few items for the \
                 test to have even odds against half the allowed error rate, stopping at the \
                 first failure): with probability 1 − δ over the calibration items, every \
                 cutoff it passes has a mistake rate at most 1 − target"
            }
            Procedure::SplitFixedSequence => {
                "split fixed sequence (a seeded 30% of the items orders the cutoffs 1, 0.99, \
                 ..., 0 and the 1% quantiles by how surely each would pass; the other 70% tests \
                 them in that order, stopping at the first failure): with probability 1 − δ \
                 over the tested items, every cutoff it passes has a mistake rate at most \
                 1 − target"
            }
            Procedure::Holm => {
                "Bonferroni–Holm over cutoffs 1, 0.95, ..., 0 and the 5% quantiles (no order, \
                 no stop at a dip): with probability 1 − δ over the calibration items, every \
                 cutoff it rejects has a mistake rate at most 1 − target, simultaneously"
            }
            Procedure::Fallback => {
                "fallback (Wiens 2003) over the distinct cutoffs among 1, 0.95, ..., 0 and the 5% \
                 quantiles, strictest first, δ split in halves (1/2, 1/4, ...), a passed cutoff's \
                 level carried to the next, a failed one's not: with probability 1 − δ over the calibration \
                 items, every cutoff it passes has a mistake rate at most 1 − target"
            }
        }
    }
}

/// The share of items that orders the split fixed sequence.
pub const LEARN_FRACTION: f64 = 0.3;

/// Holm's coarse grid: cutoffs j / 20.
pub const HOLM_STEPS: usize = 20;

/// One candidate cutoff and what it decides among some items.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tally {
    pub cutoff: f64,
    pub decided: usize,
    pub mistakes: usize,
}

/// Which way a cutoff decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Accept items with confidence ≥ t; a wrong item is a mistake.
    Accept,
    /// Reject items with confidence < r; a right item is a mistake.
    Reject,
}

impl Side {
    pub fn decides(self, cutoff: f64, p: f64) -> bool {
        match self {
            Side::Accept => p >= cutoff,
            Side::Reject => p < cutoff,
        }
    }

    /// The grid of `steps` + 1 cutoffs from the one that decides fewest items
    /// to the one that decides most.
    pub fn grid(self, steps: usize) -> Vec<f64> {
        let at = |j: usize| j as f64 / steps as f64;
        match self {
            Side::Accept => (0..=steps).rev().map(at).collect(),
            Side::Reject => (0..=steps).map(at).collect(),
        }
    }
}

impl Side {
    /// The value grid of `steps` steps together with the cutoffs at every
    /// 1/steps quantile of `confidence` (the confidence of the ⌈jN/steps⌉-th
    /// item from the deciding end; for rejecting, the next value above it, so
    /// that at most that many fall below), fewest decided first, without
    /// repeats. They depend on the confidences alone.
    /// `sorted` holds the confidences in ascending order.
    pub fn candidates(self, steps: usize, sorted: &[f64]) -> Vec<f64> {
        let n = sorted.len();
        let mut cutoffs = self.grid(steps);
        for j in 1..=steps {
            let count = (j * n).div_ceil(steps);
            if count == 0 || count > n {
                continue;
            }
            match self {
                Side::Accept => cutoffs.push(sorted[n - count]),
                Side::Reject => {
                    // The first value above the count-th lowest (sorted).
                    let above = sorted.partition_point(|&p| p <= sorted[count - 1]);
                    if let Some(&above) = sorted.get(above) {
                        cutoffs.push(above);
                    }
                }
            }
        }
        match self {
            Side::Accept => cutoffs.sort_by(|a, b| b.total_cmp(a)),
            Side::Reject => cutoffs.sort_by(f64::total_cmp),
        }
        cutoffs.dedup();
        cutoffs
    }
}

/// The exact one-sided binomial p-value of "mistake rate > α".
pub fn p_value(tally: &Tally, alpha: f64) -> f64 {
    if tally.decided == 0 {
        1.0
    } else {
        binomial_cdf(tally.mistakes, tally.decided, alpha)
    }
}

/// Whether `n` decided items could pass the exact test at mistake rate
/// `alpha` and level `delta` at all, i.e. with no mistake: (1 − α)^n ≤ δ.
/// It depends on the count alone, never on a label, so leaving such
/// candidates out keeps every procedure's guarantee.
pub fn can_pass(n: usize, alpha: f64, delta: f64) -> bool {
    n > 0 && binomial_cdf(0, n, alpha) <= delta
}

/// The fewest decided items at which the exact test at level `delta` has
/// at least even odds of passing a cutoff whose true mistake rate is
/// `fraction` × α: 52 at α = 0.1, δ = 0.1 and a fraction of 1/2. It depends
/// on α and δ alone, so passing over smaller cutoffs looks at no label; it
/// keeps a walk from being stopped by the noise of a strict cutoff that
/// holds a few dozen items.
pub fn fewest_with_power(alpha: f64, delta: f64, fraction: f64) -> usize {
    let mut n = 1;
    let mut passing = None::<usize>;
    loop {
        // The most mistakes that still pass at n: non-decreasing in n.
        let mut k = passing.unwrap_or(0);
        if binomial_cdf(k, n, alpha) > delta {
            passing = None;
        } else {
            while k + 1 < n && binomial_cdf(k + 1, n, alpha) <= delta {
                k += 1;
            }
            passing = Some(k);
        }
        if passing.is_some_and(|k| binomial_cdf(k, n, fraction * alpha) >= 0.5) || n > 1_000_000 {
            return n;
        }
        n += 1;
    }
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

/// What a procedure chose: the index into the candidates, and the tally the
/// guarantee was tested on (the test split's, for the split procedure).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Chosen {
    pub index: usize,
    pub tested: Tally,
}

/// The fixed-sequence walk over `tallies` in `order`: passes over those
/// deciding fewer than `fewest` items (a count, never a label) and stops at
/// the first p-value above δ.
pub fn fixed_sequence(
    tallies: &[Tally],
    order: impl IntoIterator<Item = usize>,
    alpha: f64,
    delta: f64,
    fewest: usize,
) -> Option<Chosen> {
    let mut chosen: Option<Chosen> = None;
    for index in order {
        let tally = tallies[index];
        if tally.decided == 0 || tally.decided < fewest {
            continue;
        }
        if p_value(&tally, alpha) > delta {
            break;
        }
        if chosen.is_none_or(|c| c.tested.decided < tally.decided) {
            chosen = Some(Chosen {
                index,
                tested: tally,
            });
        }
    }
    chosen
}

/// Bonferroni–Holm over the candidates that could pass at all and decide
/// at least `fewest` items.
pub fn holm(tallies: &[Tally], alpha: f64, delta: f64, fewest: usize) -> Option<Chosen> {
    let mut tested: Vec<(usize, f64)> = tallies
        .iter()
        .enumerate()
        .filter(|(_, t)| can_pass(t.decided, alpha, delta) && t.decided >= fewest)
        .map(|(i, t)| (i, p_value(t, alpha)))
        .collect();
    tested.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    let m = tested.len();
    let rejected = tested
        .iter()
        .enumerate()
        .take_while(|&(rank, &(_, p))| p <= delta / (m - rank) as f64)
        .map(|(_, &(index, _))| index);
    rejected
        .max_by_key(|&i| tallies[i].decided)
        .map(|index| Chosen {
            index,
            tested: tallies[index],
        })
}

/// The share of δ the fallback procedure gives its hypothesis `i` of `m`:
/// halves, strictest first (1/2, 1/4, ...), the last two equal, so the
/// shares sum to 1. A walk that passes from the start tests at nearly δ,
/// as the fixed sequence does; after a failure at the first, the others
/// still hold half of δ between them.
pub fn fallback_weight(i: usize, m: usize) -> f64 {
    let halvings = (i + 1).min(m.saturating_sub(1).max(1));
    0.5f64.powi(halvings as i32) * if m == 1 { 2.0 } else { 1.0 }
}

/// Wiens's (2003) fallback procedure over `tallies` in their order (fewest
/// decided first). Candidates that decide the same number of items decide
/// the same items (the candidates are nested), so only the first of each
/// count is a hypothesis; of those, the ones that can pass at all and
/// decide at least `fewest` items share δ by [`fallback_weight`].
/// Hypothesis i is tested at its share of δ, plus the level of hypothesis
/// i − 1 where that one passed. The family-wise error is at most δ for any
/// dependence among the tests (Wiens 2003, §2), and the shares depend on
/// counts alone, fixed before any test.
pub fn fallback(tallies: &[Tally], alpha: f64, delta: f64, fewest: usize) -> Option<Chosen> {
    let mut hypotheses: Vec<usize> = Vec::new();
    for (i, t) in tallies.iter().enumerate() {
        let repeat = hypotheses
            .last()
            .is_some_and(|&j| tallies[j].decided == t.decided);
        if !repeat && can_pass(t.decided, alpha, delta) && t.decided >= fewest {
            hypotheses.push(i);
        }
    }
    let m = hypotheses.len();
    let mut level = 0.0;
    let mut chosen: Option<Chosen> = None;
    for (i, index) in hypotheses.into_iter().enumerate() {
        let tally = tallies[index];
        level += delta * fallback_weight(i, m);
        if p_value(&tally, alpha) <= level {
            if chosen.is_none_or(|c| c.tested.decided < tally.decided) {
                chosen = Some(Chosen {
                    index,
                    tested: tally,
                });
            }
        } else {
            // A failed hypothesis passes nothing on.
            level = 0.0;
        }
    }
    chosen
}

/// The split fixed sequence. A seeded [`LEARN_FRACTION`] of the items
/// estimates each candidate's mistake rate; with it and the number of test
/// items the candidate decides (known without labels) each candidate gets a
/// predicted test p-value, and the candidates are tested on the other items
/// in ascending order of it (ties: the one deciding more first), stopping at
/// the first failure. The order depends on the learning items alone, so the
/// walk on the test items keeps the fixed-sequence guarantee.
pub fn split_fixed_sequence(
    side: Side,
    grid: &[f64],
    (learn, test): &(Ranked, Ranked),
    alpha: f64,
    delta: f64,
    fewest: usize,
) -> Option<Chosen> {
    let learned = learn.tallies(side, grid);
    let tested = test.tallies(side, grid);
    let mut order: Vec<(usize, f64)> = learned
        .iter()
        .zip(&tested)
        .enumerate()
        .filter(|(_, (_, t))| can_pass(t.decided, alpha, delta) && t.decided >= fewest)
        .map(|(i, (l, t))| {
            // A Jeffreys-style estimate, so a clean learning tally does not
            // promise a clean test.
            let rate = (l.mistakes as f64 + 0.5) / (l.decided as f64 + 1.0);
            let expected = (rate * t.decided as f64).round() as usize;
            let predicted = Tally {
                mistakes: expected,
                ..*t
            };
            (i, p_value(&predicted, alpha))
        })
        .collect();
    order.sort_by(|a, b| {
        a.1.total_cmp(&b.1)
            .then(tested[b.0].decided.cmp(&tested[a.0].decided))
    });
    fixed_sequence(
        &tested,
        order.into_iter().map(|(i, _)| i),
        alpha,
        delta,
        fewest,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 0.9^22 = 0.098 ≤ 0.1 < 0.9^21 = 0.109.
    #[test]
    fn a_cutoff_needs_enough_correct_items_to_pass_the_exact_test() {
        assert_eq!(fewest_to_pass(0.9, 0.1), 22);
        assert_eq!(fewest_to_pass(0.8, 0.1), 11);
        assert_eq!(fewest_to_pass(0.95, 0.1), 45);
        assert!(0.9f64.powi(22) <= 0.1 && 0.9f64.powi(21) > 0.1);
    }

    #[test]
    fn the_tally_counts_each_side_in_one_pass() {
        let data = Ranked::new([(0.9, true), (0.8, false), (0.3, true), (0.1, false)].into_iter());
        let accept = data.tallies(Side::Accept, &Side::Accept.grid(10));
        let at = |t: &[Tally], c: f64| *t.iter().find(|x| (x.cutoff - c).abs() < 1e-9).unwrap();
        assert_eq!(
            (at(&accept, 0.8).decided, at(&accept, 0.8).mistakes),
            (2, 1)
        );
        assert_eq!(
            (at(&accept, 0.0).decided, at(&accept, 0.0).mistakes),
            (4, 2)
        );
        let reject = data.tallies(Side::Reject, &Side::Reject.grid(10));
        assert_eq!(
            (at(&reject, 0.5).decided, at(&reject, 0.5).mistakes),
            (2, 1)
        );
        assert_eq!(at(&reject, 0.0).decided, 0);
    }

    /// Holm with three candidates at δ = 0.1: p-values 0.01, 0.04, 0.2
    /// against 0.1/3, 0.1/2, 0.1: the first two are rejected, the third is
    /// not, so the one deciding most among the first two is chosen.
    #[test]
    fn holm_steps_down_and_stops_at_its_first_acceptance() {
        let alpha = 0.1;
        // p-values come from real tallies: find counts with known p.
        let t = |decided, mistakes| Tally {
            cutoff: 0.0,
            decided,
            mistakes,
        };
        let strong = t(200, 8); // p ≈ 0.0016
        let medium = t(300, 21); // p ≈ 0.04
        let weak = t(400, 36); // p ≈ 0.31
        for (tally, low, high) in [(strong, 0.0, 0.01), (medium, 0.02, 0.05), (weak, 0.2, 0.5)] {
            let p = p_value(&tally, alpha);
            assert!((low..high).contains(&p), "{tally:?} p = {p}");
        }
        let chosen = holm(&[strong, medium, weak], alpha, 0.1, 0).unwrap();
        assert_eq!(chosen.index, 1);
        // With four candidates the second level becomes 0.1/3 < 0.04.
        let chosen = holm(&[strong, medium, weak, weak], alpha, 0.1, 0).unwrap();
        assert_eq!(chosen.index, 0);
    }

    #[test]
    fn the_fallback_shares_sum_to_one() {
        for m in 1..12 {
            let total: f64 = (0..m).map(|i| fallback_weight(i, m)).sum();
            assert!((total - 1.0).abs() < 1e-12, "{m}: {total}");
        }
        assert_eq!(fallback_weight(0, 3), 0.5);
        assert_eq!(fallback_weight(2, 3), 0.25);
    }

    /// Wiens (2003): with three hypotheses at δ = 0.1 the shares are 0.05,
    /// 0.025 and 0.025; a pass carries its level on, a failure does not.
    #[test]
    fn the_fallback_carries_a_passed_level_and_survives_a_failure() {
        let t = |decided, mistakes| Tally {
            cutoff: 0.0,
            decided,
            mistakes,
        };
        let strong = t(200, 8); // p ≈ 0.0016
        let medium = t(300, 21); // p ≈ 0.04
        let weak = t(400, 36); // p ≈ 0.31
        // strong passes at 0.05, medium then at 0.075; weak fails at 0.1.
        let chosen = fallback(&[strong, medium, weak], 0.1, 0.1, 0).unwrap();
        assert_eq!(chosen.index, 1);
        // After a failure first, medium has only its own 0.025 and fails,
        // strong passes at its own 0.025; the fixed sequence stops at the
        // first failure and chooses nothing.
        let chosen = fallback(&[weak, medium, strong], 0.1, 0.1, 0);
        assert_eq!(chosen.map(|c| c.index), Some(2));
        assert_eq!(
            fixed_sequence(&[weak, medium, strong], 0..3, 0.1, 0.1, 0),
            None
        );
        // Candidates deciding the same items are one hypothesis: two here,
        // 0.05 each, medium tested at 0.1 after strong passes.
        let chosen = fallback(&[strong, strong, strong, medium], 0.1, 0.1, 0).unwrap();
        assert_eq!(chosen.index, 3);
    }

    #[test]
    fn a_dip_stops_the_fixed_sequence_but_not_holm() {
        let t = |decided, mistakes| Tally {
            cutoff: 0.0,
            decided,
            mistakes,
        };
        // 82 items with 6 mistakes fail at α = 0.1 (p ≈ 0.28), 362 with 26 pass.
        let tallies = [t(50, 0), t(82, 6), t(362, 26)];
        let walked = fixed_sequence(&tallies, 0..3, 0.1, 0.1, 22).unwrap();
        assert_eq!(walked.index, 0);
        assert_eq!(holm(&tallies, 0.1, 0.1, 22).unwrap().index, 2);
        // Passing over cutoffs with fewer than 100 items skips the dip.
        assert_eq!(
            fixed_sequence(&tallies, 0..3, 0.1, 0.1, 100).unwrap().index,
            2
        );
    }
}
