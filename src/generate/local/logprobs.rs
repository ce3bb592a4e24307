//! A decode step's log-probabilities from its logits, and the most likely
//! tokens among them. They run on the engine's thread once per token while
//! the pool waits, over the whole vocabulary (151,936 ids for Qwen), so
//! they are made in one pass each: a sort of every id, f64 exponentials
//! one after another and a serial maximum took about 3 ms of a 1.5B
//! model's 44 ms step. Not here: sampling (`local`) or the logits.

use rayon::prelude::*;

use super::vector_exp::max;

/// Ids per task of the exponentials' sum.
const CHUNK: usize = 8192;

/// log-softmax in f64, so tiny probabilities keep their digits. The
/// exponentials' sum runs in fixed chunks across threads, added in the
/// chunks' order, so the result does not depend on the threads.
pub fn log_softmax(logits: &[f32]) -> Vec<f64> {
    let max = f64::from(max(logits));
    let partial: Vec<f64> = logits
        .par_chunks(CHUNK)
        .map(|chunk| chunk.iter().map(|&l| (f64::from(l) - max).exp()).sum())
        .collect();
    let log_sum = partial.iter().sum::<f64>().ln();
    logits
        .iter()
        .map(|&l| f64::from(l) - max - log_sum)
        .collect()
}

/// The `k` most likely ids with their log-probabilities, best first, equal
/// ones by id (so the lowest id wins a tie at the k-th place too), in one
/// pass that keeps the best k so far.
pub(super) fn top_k(log_probs: &[f64], k: usize) -> Vec<(u32, f64)> {
    let mut best: Vec<(u32, f64)> = Vec::with_capacity(k + 1);
    if k == 0 {
        return best;
    }
    for (id, &lp) in log_probs.iter().enumerate() {
        if best.len() == k && lp.total_cmp(&best[k - 1].1).is_le() {
            continue;
        }
        let at = best.partition_point(|b| b.1.total_cmp(&lp).is_ge());
        best.insert(at, (id as u32, lp));
        best.truncate(k);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_softmax_and_top_k() {
        let lp = log_softmax(&[1.0, 3.0, 2.0]);
        let total: f64 = lp.iter().map(|l| l.exp()).sum();
        assert!((total - 1.0).abs() < 1e-12);
        let top: Vec<u32> = top_k(&lp, 2).iter().map(|t| t.0).collect();
        assert_eq!(top, vec![1, 2]);
    }

    /// Over a vocabulary of several chunks the log-probabilities are f64's
    /// plain computation to 1e-12, and the top k are a full sort's, ties
    /// by id, at every k.
    #[test]
    fn a_whole_vocabulary_matches_a_plain_computation_and_a_sort() {
        let logits: Vec<f32> = (0..40_000)
            .map(|i| ((i * 7919 % 4001) as f32 - 2000.0) / 300.0)
            .collect();
        let got = log_softmax(&logits);
        let top = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let sum: f64 = logits.iter().map(|&l| (l as f64 - top).exp()).sum();
        for (&l, &g) in logits.iter().zip(&got) {
            assert!((g - (l as f64 - top - sum.ln())).abs() < 1e-12);
        }
        let mut sorted: Vec<(u32, f64)> = got
            .iter()
            .enumerate()
            .map(|(i, &l)| (i as u32, l))
            .collect();
        sorted.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for k in [0, 1, 2, 5, 20] {
            assert_eq!(top_k(&got, k), sorted[..k], "k {k}");
        }
    }
}
