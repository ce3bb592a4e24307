//! Reliability bins: how the confidence axis is cut (equal width or equal
//! mass), and each bin's count, mean confidence and accuracy, from the tie
//! runs of one weighted pass. The binned ECE is read from them.
//!
//! Not here: the pass that makes the runs (`runs`), the other metrics
//! (`metrics`), drawing the diagram (`report`).

use serde::Serialize;

use super::binomial::clopper_pearson_interval;
use super::runs::Run;

/// How the confidence axis is cut into bins for ECE, MCE and the reliability diagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binning {
    /// Bins of equal width on [0, 1]; bin i holds (i/N, (i+1)/N], and 0 joins the first.
    EqualWidth,
    /// Bins holding equal numbers of items, in confidence order.
    EqualMass,
}

crate::choices!(Binning { EqualWidth => "equal-width", EqualMass => "equal-mass" });

/// The number of bins and how they are cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BinSpec {
    pub count: usize,
    pub binning: Binning,
}

/// One non-empty bin of a reliability diagram.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bin {
    /// Lower edge (equal width) or smallest confidence in the bin (equal mass).
    pub lo: f64,
    /// Upper edge (equal width) or largest confidence in the bin (equal mass).
    pub hi: f64,
    /// Items in the bin (a bootstrap weight counts as that many items).
    pub count: f64,
    pub mean_confidence: f64,
    pub accuracy: f64,
    /// The two-sided 95% Clopper–Pearson interval on `accuracy` (unweighted
    /// bins only: a bootstrap resample's bins have none). Unlike a bootstrap
    /// interval it keeps a width on all-0 and all-1 bins.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accuracy_interval: Option<[f64; 2]>,
}

/// The bin (0-based) that holds confidence `p` among `count` equal-width bins.
///
/// Edges are `i / count`, so 0.3 falls in (0.2, 0.3] exactly, not in the
/// next bin as `ceil(p * count)` rounding would put it.
pub fn equal_width_bin(p: f64, count: usize) -> usize {
    let edge = |i: usize| i as f64 / count as f64;
    let mut bin = ((p * count as f64).ceil() as usize).clamp(1, count) - 1;
    while bin > 0 && p <= edge(bin) {
        bin -= 1;
    }
    while bin + 1 < count && p > edge(bin + 1) {
        bin += 1;
    }
    bin
}

/// The non-empty bins `spec` cuts, from the tie runs of positive weight
/// (highest confidence first); `unweighted` adds each bin's Clopper–Pearson
/// interval.
pub fn bins_of_runs(runs: &[Run], spec: BinSpec, unweighted: bool) -> Vec<Bin> {
    let (count, binning) = (spec.count, spec.binning);
    let mut sums = vec![(0.0_f64, 0.0_f64, 0.0_f64, f64::INFINITY, f64::NEG_INFINITY); count];
    let mut add = |bin: usize, weight: f64, right: f64, p: f64| {
        let s = &mut sums[bin];
        s.0 += weight;
        s.1 += weight * p;
        s.2 += right;
        s.3 = s.3.min(p);
        s.4 = s.4.max(p);
    };
    match binning {
        Binning::EqualWidth => {
            // Ascending runs: each one's bin is the previous one's or
            // above (the edges are those of `equal_width_bin`).
            let mut bin = 0;
            for run in runs.iter().rev() {
                while bin + 1 < count && run.confidence > (bin + 1) as f64 / count as f64 {
                    bin += 1;
                }
                add(bin, run.weight, run.right(), run.confidence);
            }
        }
        Binning::EqualMass => {
            // Positions as numpy's array_split hands them out; within a
            // run the wrong items come first (the sample's tie order).
            // Weights are whole numbers: the casts are exact.
            let total: u64 = runs.iter().map(|r| r.weight as u64).sum();
            let mut filler = EqualMassFiller::new(total, count);
            for run in runs.iter().rev() {
                let mut left = run.weight as u64;
                let mut wrong_left = run.errors as u64;
                while left > 0 {
                    let (bin, taken) = filler.take(left);
                    let wrong = taken.min(wrong_left);
                    add(bin, taken as f64, (taken - wrong) as f64, run.confidence);
                    wrong_left -= wrong;
                    left -= taken;
                }
            }
        }
    }
    sums.iter()
        .enumerate()
        .filter(|(_, s)| s.0 > 0.0)
        .map(|(b, s)| {
            let (lo, hi) = match binning {
                Binning::EqualWidth => (b as f64 / count as f64, (b + 1) as f64 / count as f64),
                Binning::EqualMass => (s.3, s.4),
            };
            Bin {
                lo,
                hi,
                count: s.0,
                mean_confidence: s.1 / s.0,
                accuracy: s.2 / s.0,
                accuracy_interval: unweighted.then(|| {
                    clopper_pearson_interval(s.2.round() as usize, s.0.round() as usize, 0.95)
                }),
            }
        })
        .collect()
}

/// Σ n_b/n |accuracy − mean confidence| over `bins`.
pub fn ece_of(bins: &[Bin], total: f64) -> f64 {
    bins.iter()
        .map(|b| b.count / total * (b.accuracy - b.mean_confidence).abs())
        .sum()
}

/// Hands out the positions 0..total to `count` bins sized as numpy's `array_split`.
struct EqualMassFiller {
    sizes: Vec<u64>,
    bin: usize,
    used: u64,
}

impl EqualMassFiller {
    fn new(total: u64, count: usize) -> Self {
        let (base, extra) = (total / count as u64, (total % count as u64) as usize);
        let sizes = (0..count).map(|b| base + u64::from(b < extra)).collect();
        EqualMassFiller {
            sizes,
            bin: 0,
            used: 0,
        }
    }

    /// Takes up to `wanted` positions from the current bin: (bin, how many).
    fn take(&mut self, wanted: u64) -> (usize, u64) {
        while self.used == self.sizes[self.bin] {
            self.bin += 1;
            self.used = 0;
        }
        let taken = wanted.min(self.sizes[self.bin] - self.used);
        self.used += taken;
        (self.bin, taken)
    }
}
