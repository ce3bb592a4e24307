//! Decompositions of the Brier score: why a skill score is negative.
//!
//! CORP (Dimitriadis, Gneiting and Jordan, PNAS 2021): with p̂ the isotonic
//! (pool-adjacent-violators) recalibration of the confidences, MCB = S(p) −
//! S(p̂) is miscalibration, DSC = S(ȳ) − S(p̂) discrimination and UNC = S(ȳ)
//! uncertainty, so Brier = MCB − DSC + UNC exactly. Computed as
//! `model-diagnostics` 1.5.0's `decompose` (scikit-learn's isotonic fit:
//! confidences within 1e-15 of a run's first are pooled first).
//!
//! Murphy (1973), binned: REL = Σ n_b/n (p̄_b − ȳ_b)², RES = Σ n_b/n
//! (ȳ_b − ȳ)², UNC = ȳ(1 − ȳ); Brier = REL − RES + UNC only when the
//! confidence is constant within each bin.
//!
//! Not here: the bins themselves (`metrics`).

use serde::Serialize;

use super::metrics::Bin;
use super::runs::{Run, runs_descending};

/// The CORP terms.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Corp {
    pub mcb: f64,
    pub dsc: f64,
    pub unc: f64,
}

/// CORP over items in `ascending` confidence order, item i counted `w(i)` times.
pub fn corp(
    ascending: &[usize],
    confidence: &[f64],
    correct: &[bool],
    w: &impl Fn(usize) -> f64,
) -> Corp {
    corp_of_runs(&runs_descending(ascending, confidence, correct, w))
}

/// CORP from the tie runs of positive weight, highest confidence first
/// (every item of a run has one confidence, so a run pools as one block).
pub fn corp_of_runs(runs: &[Run]) -> Corp {
    // Pool near-ties, then pool adjacent violators. A block holds the
    // weight and the weighted sums of its labels and of its Brier terms;
    // its fitted value is the mean label, so its recalibrated Brier sum is
    // Σ w (ȳ − y)² = S(1 − ȳ) with S the weighted label sum.
    let mut blocks: Vec<Block> = Vec::with_capacity(runs.len());
    let mut run_start = f64::NAN;
    for run in runs.iter().rev() {
        let (p, right) = (run.confidence, run.weight - run.errors);
        let block = Block {
            weight: run.weight,
            labels: right,
            score: right * (1.0 - p) * (1.0 - p) + run.errors * p * p,
        };
        match blocks.last_mut() {
            Some(last) if p - run_start < 1e-15 => last.absorb(block),
            _ => {
                run_start = p;
                blocks.push(block);
            }
        }
    }
    let mut pooled: Vec<Block> = Vec::with_capacity(blocks.len());
    for block in blocks {
        pooled.push(block);
        while pooled.len() > 1 && pooled[pooled.len() - 2].above(&pooled[pooled.len() - 1]) {
            let last = pooled.pop().expect("two blocks");
            pooled.last_mut().expect("one block").absorb(last);
        }
    }
    let (mut total, mut positives, mut score, mut recalibrated) = (0.0, 0.0, 0.0, 0.0);
    for block in &pooled {
        total += block.weight;
        positives += block.labels;
        score += block.score;
        recalibrated += block.labels * (1.0 - block.mean());
    }
    let base = positives / total;
    // model-diagnostics takes UNC as the mean squared error of ȳ, not ȳ(1 − ȳ);
    // over 0/1 labels that is Σ w (ȳ − y)² / W = ȳ(1 − ȳ) all the same.
    let unc = positives * (1.0 - base) / total;
    let (score, recalibrated) = (score / total, recalibrated / total);
    Corp {
        mcb: score - recalibrated,
        dsc: unc - recalibrated,
        unc,
    }
}

/// A block of pooled items: total weight and weighted sums.
#[derive(Clone, Copy)]
struct Block {
    weight: f64,
    labels: f64,
    score: f64,
}

impl Block {
    fn mean(&self) -> f64 {
        self.labels / self.weight
    }

    /// Whether this block's mean label is above `other`'s. Cross-multiplied:
    /// with whole weights the products are exact, so no division rounds.
    fn above(&self, other: &Block) -> bool {
        self.labels * other.weight > other.labels * self.weight
    }

    fn absorb(&mut self, other: Block) {
        self.weight += other.weight;
        self.labels += other.labels;
        self.score += other.score;
    }
}

/// The Murphy terms over reliability bins.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Murphy {
    pub rel: f64,
    pub res: f64,
    pub unc: f64,
}

pub fn murphy(bins: &[Bin]) -> Murphy {
    let total: f64 = bins.iter().map(|b| b.count).sum();
    let base = bins.iter().map(|b| b.count * b.accuracy).sum::<f64>() / total;
    let share = |b: &Bin| b.count / total;
    Murphy {
        rel: bins
            .iter()
            .map(|b| share(b) * (b.mean_confidence - b.accuracy).powi(2))
            .sum(),
        res: bins
            .iter()
            .map(|b| share(b) * (b.accuracy - base).powi(2))
            .sum(),
        unc: base * (1.0 - base),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::metrics::tests::fixture;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn ascending(confidence: &[f64]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..confidence.len()).collect();
        order.sort_by(|&a, &b| confidence[a].total_cmp(&confidence[b]));
        order
    }

    // Expected values: tests/metrics_expected.py, model-diagnostics 1.5.0's decompose.
    #[test]
    fn corp_matches_model_diagnostics() {
        let f = fixture();
        let c = corp(
            &ascending(&f.confidence),
            &f.confidence,
            &f.correct,
            &|_| 1.0,
        );
        assert!((c.mcb - 0.03337530946443376).abs() < 1e-9, "{c:?}");
        assert!((c.dsc - 0.034980158730158695).abs() < 1e-9, "{c:?}");
        assert!((c.unc - 0.24937499999999996).abs() < 1e-9, "{c:?}");
    }

    /// Brier = MCB − DSC + UNC exactly (CORP's identity), on random data with ties.
    #[test]
    fn corp_identity_holds_to_1e_12_on_random_data() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..50 {
            let n = rng.random_range(2..400);
            let confidence: Vec<f64> = (0..n)
                .map(|_| (rng.random::<f64>() * 20.0).round() / 20.0)
                .collect();
            let correct: Vec<bool> = confidence
                .iter()
                .map(|&p| rng.random::<f64>() < p)
                .collect();
            let c = corp(&ascending(&confidence), &confidence, &correct, &|_| 1.0);
            let brier: f64 = confidence
                .iter()
                .zip(&correct)
                .map(|(p, &y)| (p - if y { 1.0 } else { 0.0 }).powi(2))
                .sum::<f64>()
                / n as f64;
            assert!((c.mcb - c.dsc + c.unc - brier).abs() < 1e-12);
            assert!(c.mcb >= -1e-12 && c.dsc >= -1e-12);
        }
    }
}
