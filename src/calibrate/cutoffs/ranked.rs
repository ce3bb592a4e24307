//! Calibration items sorted once by confidence, with a running count of the
//! correct ones, so that what any cutoff decides is one binary search.
//!
//! Every procedure and every target reads its tallies from the same sorted
//! items (and the split procedure from its two sorted halves), instead of
//! sorting the items again for each: on a million items the sorts were most
//! of `calibrate`'s time.
//!
//! Not here: which cutoffs are candidates and how they are tested
//! (`procedures`).

use std::cell::OnceCell;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::procedures::{LEARN_FRACTION, Side, Tally};

/// Items in ascending order of confidence.
#[derive(Clone, Debug)]
pub struct Ranked {
    ascending: Vec<f64>,
    /// `correct_below[k]`: correct items among the `k` least confident.
    correct_below: Vec<u32>,
}

impl Ranked {
    pub fn new(items: impl Iterator<Item = (f64, bool)>) -> Ranked {
        let mut sorted: Vec<(f64, bool)> = items.collect();
        sorted.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        Ranked::from_ascending(sorted)
    }

    /// Items already in ascending order of confidence.
    pub fn from_ascending(sorted: Vec<(f64, bool)>) -> Ranked {
        debug_assert!(sorted.is_sorted_by(|a, b| a.0 <= b.0));
        let mut correct_below = Vec::with_capacity(sorted.len() + 1);
        let mut running = 0u32;
        correct_below.push(running);
        for &(_, correct) in &sorted {
            running += u32::from(correct);
            correct_below.push(running);
        }
        Ranked {
            ascending: sorted.into_iter().map(|(p, _)| p).collect(),
            correct_below,
        }
    }

    pub fn len(&self) -> usize {
        self.ascending.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ascending.is_empty()
    }

    /// The confidences, ascending.
    pub fn ascending(&self) -> &[f64] {
        &self.ascending
    }

    /// What `cutoff` decides on `side`: accept confidence ≥ t, reject < r.
    pub fn tally(&self, side: Side, cutoff: f64) -> Tally {
        let below = self.ascending.partition_point(|&p| p < cutoff);
        let correct_total = self.correct_below[self.len()] as usize;
        let correct_under = self.correct_below[below] as usize;
        let (decided, mistakes) = match side {
            Side::Accept => {
                let decided = self.len() - below;
                (decided, decided - (correct_total - correct_under))
            }
            Side::Reject => (below, correct_under),
        };
        Tally {
            cutoff,
            decided,
            mistakes,
        }
    }

    /// The tally at every cutoff of `grid`.
    pub fn tallies(&self, side: Side, grid: &[f64]) -> Vec<Tally> {
        grid.iter()
            .map(|&cutoff| self.tally(side, cutoff))
            .collect()
    }
}

/// The items ranked once, with the split procedure's seeded halves ranked
/// on first use (from the same ranking: no second sort).
pub struct RankedItems {
    pub all: Ranked,
    /// The items in ascending order of confidence.
    sorted: Vec<(f64, bool)>,
    /// The caller's index of each sorted item (the split's draw refers to it).
    index: Vec<usize>,
    seed: u64,
    split: OnceCell<(Ranked, Ranked)>,
}

impl RankedItems {
    pub fn new(confidence: &[f64], correct: &[bool], seed: u64) -> RankedItems {
        let mut keyed: Vec<(f64, bool, usize)> = confidence
            .iter()
            .zip(correct)
            .enumerate()
            .map(|(i, (&p, &y))| (p, y, i))
            .collect();
        keyed.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let index = keyed.iter().map(|&(_, _, i)| i).collect();
        let sorted = keyed.into_iter().map(|(p, y, _)| (p, y)).collect();
        RankedItems::from_parts(sorted, index, seed)
    }

    /// Items already in ascending order of confidence, with each one's
    /// index in the caller's order.
    pub fn from_ascending(
        confidence: &[f64],
        correct: &[bool],
        index: &[usize],
        seed: u64,
    ) -> RankedItems {
        let sorted = confidence
            .iter()
            .copied()
            .zip(correct.iter().copied())
            .collect();
        RankedItems::from_parts(sorted, index.to_vec(), seed)
    }

    fn from_parts(sorted: Vec<(f64, bool)>, index: Vec<usize>, seed: u64) -> RankedItems {
        RankedItems {
            all: Ranked::from_ascending(sorted.clone()),
            sorted,
            index,
            seed,
            split: OnceCell::new(),
        }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The learning share ([`LEARN_FRACTION`] of the items, drawn by the
    /// seed over the caller's order) and the tested rest, each ranked.
    pub fn split(&self) -> &(Ranked, Ranked) {
        self.split.get_or_init(|| {
            let n = self.sorted.len();
            let mut order: Vec<usize> = (0..n).collect();
            order.shuffle(&mut ChaCha8Rng::seed_from_u64(self.seed));
            let learn_count = (n as f64 * LEARN_FRACTION).round() as usize;
            let mut learns = vec![false; n];
            for &i in &order[..learn_count] {
                learns[i] = true;
            }
            let mut learn = Vec::with_capacity(learn_count);
            let mut test = Vec::with_capacity(n - learn_count);
            for (&item, &i) in self.sorted.iter().zip(&self.index) {
                if learns[i] {
                    learn.push(item);
                } else {
                    test.push(item);
                }
            }
            (Ranked::from_ascending(learn), Ranked::from_ascending(test))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The binary search counts what a walk over every item counts.
    #[test]
    fn a_tally_is_the_count_of_decided_items_and_mistakes() {
        let items = [
            (0.9, true),
            (0.8, false),
            (0.8, true),
            (0.3, true),
            (0.1, false),
        ];
        let ranked = Ranked::new(items.iter().copied());
        for side in [Side::Accept, Side::Reject] {
            for cutoff in [0.0, 0.1, 0.2, 0.8, 0.85, 0.9, 1.0] {
                let decided: Vec<&(f64, bool)> = items
                    .iter()
                    .filter(|(p, _)| side.decides(cutoff, *p))
                    .collect();
                let mistakes = decided
                    .iter()
                    .filter(|(_, y)| *y == (side == Side::Reject))
                    .count();
                let tally = ranked.tally(side, cutoff);
                assert_eq!(
                    (tally.decided, tally.mistakes),
                    (decided.len(), mistakes),
                    "{side:?} at {cutoff}"
                );
            }
        }
    }

    #[test]
    fn the_split_is_seeded_and_covers_every_item_once() {
        let confidence: Vec<f64> = (0..100).map(|i| i as f64 / 100.0).collect();
        let correct: Vec<bool> = (0..100).map(|i| i % 3 == 0).collect();
        let a = RankedItems::new(&confidence, &correct, 7);
        let b = RankedItems::new(&confidence, &correct, 7);
        let c = RankedItems::new(&confidence, &correct, 8);
        let (learn, test) = a.split();
        assert_eq!((learn.len(), test.len()), (30, 70));
        assert_eq!(learn.ascending(), b.split().0.ascending());
        assert_ne!(learn.ascending(), c.split().0.ascending());
        let mut joined = [learn.ascending(), test.ascending()].concat();
        joined.sort_by(f64::total_cmp);
        assert_eq!(joined, confidence);
    }
}
