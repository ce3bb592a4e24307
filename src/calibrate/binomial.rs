//! Exact binomial tail probabilities and Clopper–Pearson bounds, shared by
//! the decision cutoffs and the reliability diagram's per-bin intervals.
//! Not for: choosing anything; callers decide what the bounds are for.

/// P(X ≤ k) for X ~ Binomial(n, q), summed in log space so that large n
/// neither underflows nor loses the small tail.
pub fn binomial_cdf(k: usize, n: usize, q: f64) -> f64 {
    if k >= n || q <= 0.0 {
        return 1.0;
    }
    if q >= 1.0 {
        return 0.0;
    }
    let (ln_q, ln_not_q) = (q.ln(), (-q).ln_1p());
    let mut ln_term = n as f64 * ln_not_q;
    let mut ln_terms = Vec::with_capacity(k + 1);
    ln_terms.push(ln_term);
    for i in 0..k {
        ln_term += ((n - i) as f64).ln() - ((i + 1) as f64).ln() + ln_q - ln_not_q;
        ln_terms.push(ln_term);
    }
    let top = ln_terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = ln_terms.iter().map(|&l| (l - top).exp()).sum();
    (top + sum.ln()).exp().min(1.0)
}

/// The one-sided Clopper–Pearson upper bound on a rate at level 1 − δ: the
/// q with P(Binomial(n, q) ≤ k) = δ, found by bisection; 1 when k = n.
pub fn clopper_pearson_upper(k: usize, n: usize, delta: f64) -> f64 {
    if k >= n {
        return 1.0;
    }
    let (mut lo, mut hi) = (k as f64 / n as f64, 1.0);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if binomial_cdf(k, n, mid) > delta {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The two-sided Clopper–Pearson interval for k successes in n at `level`
/// (e.g. 0.95): each tail holds (1 − level)/2. [0, 1] when n is 0.
pub fn clopper_pearson_interval(k: usize, n: usize, level: f64) -> [f64; 2] {
    if n == 0 {
        return [0.0, 1.0];
    }
    let tail = (1.0 - level) / 2.0;
    let upper = clopper_pearson_upper(k, n, tail);
    // The lower bound for k successes is 1 − the upper bound for n − k failures.
    let lower = 1.0 - clopper_pearson_upper(n - k, n, tail);
    [lower, upper]
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values: scipy.stats.binom.cdf and beta.ppf (tests/mapie_expected.py
    // prints the same quantities for its fixtures).
    #[test]
    fn binomial_tail_matches_direct_sums() {
        // n = 10, q = 0.3, k = 2: 0.7^10 + 10·0.3·0.7^9 + 45·0.09·0.7^8.
        let direct = 0.7f64.powi(10) + 10.0 * 0.3 * 0.7f64.powi(9) + 45.0 * 0.09 * 0.7f64.powi(8);
        assert!((binomial_cdf(2, 10, 0.3) - direct).abs() < 1e-14);
        assert_eq!(binomial_cdf(10, 10, 0.3), 1.0);
        assert_eq!(binomial_cdf(0, 5, 0.0), 1.0);
        // A far tail at large n stays positive and ordered.
        let tiny = binomial_cdf(0, 20_000, 0.1);
        assert!(tiny == 0.0 || tiny < 1e-300);
        assert!(binomial_cdf(1_900, 20_000, 0.1) < binomial_cdf(2_000, 20_000, 0.1));
    }

    #[test]
    fn clopper_pearson_bound_inverts_the_tail() {
        // No errors in n: the bound is 1 − δ^(1/n).
        let bound = clopper_pearson_upper(0, 50, 0.1);
        assert!((bound - (1.0 - 0.1f64.powf(1.0 / 50.0))).abs() < 1e-12);
        let bound = clopper_pearson_upper(7, 120, 0.05);
        assert!((binomial_cdf(7, 120, bound) - 0.05).abs() < 1e-10);
    }

    #[test]
    fn the_two_sided_interval_matches_scipy() {
        // scipy.stats.beta.ppf(0.025, 3, 8) and beta.ppf(0.975, 4, 7): 3 of 10.
        let [lo, hi] = clopper_pearson_interval(3, 10, 0.95);
        assert!((lo - 0.06673951117773447).abs() < 1e-9, "{lo}");
        assert!((hi - 0.6524528500599972).abs() < 1e-9, "{hi}");
        // All-0 and all-1 bins keep a width, unlike a bootstrap interval.
        let [lo, hi] = clopper_pearson_interval(0, 12, 0.95);
        assert_eq!(lo, 0.0);
        assert!((hi - (1.0 - 0.025f64.powf(1.0 / 12.0))).abs() < 1e-12);
        let [lo, hi] = clopper_pearson_interval(12, 12, 0.95);
        assert!((lo - 0.025f64.powf(1.0 / 12.0)).abs() < 1e-12);
        assert_eq!(hi, 1.0);
    }
}
