//! Exact binomial tail probabilities and Clopper–Pearson bounds, shared by
//! the decision cutoffs and the reliability diagram's per-bin intervals.
//! Not for: choosing anything; callers decide what the bounds are for.

/// P(X ≤ k) for X ~ Binomial(n, q).
///
/// Summed term by term from the tail's largest term outwards (the lower
/// tail below the mode, else one minus the upper tail), stopping where the
/// terms fall below 1e-18 of the sum: about √n terms, not k, so a bin or an
/// accepted set of a million items costs microseconds. The first term comes
/// from ln Γ; the rest by the exact ratio of neighbouring terms.
pub fn binomial_cdf(k: usize, n: usize, q: f64) -> f64 {
    if k >= n || q <= 0.0 {
        return 1.0;
    }
    if q >= 1.0 {
        return 0.0;
    }
    let mode = ((n as f64 + 1.0) * q).floor() as usize;
    let ln_pmf = |i: usize| {
        ln_gamma(n as f64 + 1.0) - ln_gamma(i as f64 + 1.0) - ln_gamma((n - i) as f64 + 1.0)
            + i as f64 * q.ln()
            + (n - i) as f64 * (-q).ln_1p()
    };
    let odds = q / (1.0 - q);
    if k < mode {
        // Lower tail: terms grow towards k; walk down from it.
        let mut term = ln_pmf(k).exp();
        let mut sum = term;
        let mut i = k;
        while i > 0 && term > 1e-18 * sum {
            term *= i as f64 / ((n - i + 1) as f64 * odds);
            sum += term;
            i -= 1;
        }
        sum.min(1.0)
    } else {
        // Upper tail from k + 1: terms shrink away from the mode.
        let mut term = ln_pmf(k + 1).exp();
        let mut sum = term;
        let mut i = k + 1;
        while i < n && term > 1e-18 * sum {
            term *= (n - i) as f64 / (i + 1) as f64 * odds;
            sum += term;
            i += 1;
        }
        (1.0 - sum).max(0.0)
    }
}

/// ln Γ(x) for x > 0: shifted up to x ≥ 10 by Γ(x + 1) = xΓ(x), then
/// Stirling's series, good to about 1e-15 relative there.
pub fn ln_gamma(x: f64) -> f64 {
    let mut shift = 0.0;
    let mut x = x;
    while x < 10.0 {
        shift -= x.ln();
        x += 1.0;
    }
    let inverse = 1.0 / x;
    let inverse_squared = inverse * inverse;
    let series = inverse
        * (1.0 / 12.0
            - inverse_squared
                * (1.0 / 360.0
                    - inverse_squared
                        * (1.0 / 1260.0
                            - inverse_squared * (1.0 / 1680.0 - inverse_squared / 1188.0))));
    shift + (x - 0.5) * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI).ln() + series
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
        assert!((binomial_cdf(2, 10, 0.3) - direct).abs() < 1e-12);
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
    fn ln_gamma_matches_known_values() {
        // math.lgamma in Python.
        for (x, expected) in [
            (0.5, 0.5723649429247004),
            (1.0, 0.0),
            (7.5, 7.534364236758734),
            (1e6 + 1.0, 12815518.384658169),
        ] {
            let got = ln_gamma(x);
            assert!(
                (got - expected).abs() <= 1e-13 * expected.abs().max(1.0),
                "{x}: {got}"
            );
        }
    }

    #[test]
    fn large_tails_are_fast_and_agree_with_scipy() {
        // scipy.stats.binom.cdf(499_000, 1_000_000, 0.5) and (1_000, 20_000, 0.06).
        let p = binomial_cdf(499_000, 1_000_000, 0.5);
        assert!((p - 0.0228041499326948).abs() < 1e-9, "{p}");
        let p = binomial_cdf(1_000, 20_000, 0.06);
        assert!(((p - 5.251286578019937e-10) / p).abs() < 1e-9, "{p}");
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
