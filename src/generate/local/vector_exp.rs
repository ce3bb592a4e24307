//! Functions of f32 rows built on e^x: the softmax of one row of attention
//! scores, exp(s − max) / Σ exp(s − max), and the SwiGLU gate of the MLP,
//! silu(gate) · up with silu(g) = g / (1 + e^−g), as candle computes it.
//! On AVX2 the exponentials run eight to a vector, as a polynomial after the
//! usual range reduction (Cody and Waite's split of ln 2 and Cephes's
//! `expf` coefficients; llama.cpp's `ggml_v_expf` is of the same kind),
//! within a few ulp of libm's `expf`; elsewhere libm's, one call a value.
//! A pass over 1,934 tokens makes 628 million softmax exponentials and 485
//! million gate ones; with a call each (and the softmax's maximum found one
//! value at a time) they took 8% of it. Not here: the scores, the causal
//! mask (`attention`) or the products around the gate (`llama`). The
//! lane maxima that the softmax starts from serve the 8-bit quantizers too.

use rayon::prelude::*;

/// Turns `scores` into their softmax.
pub(super) fn softmax_in_place(scores: &mut [f32]) {
    let max = max(scores);
    #[cfg(target_arch = "x86_64")]
    let sum = if super::packed::has_avx2_kernels() {
        // SAFETY: the features the function is compiled for were just detected.
        unsafe { exp_shifted_avx2(scores, max) }
    } else {
        exp_shifted(scores, max)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let sum = exp_shifted(scores, max);
    for w in scores.iter_mut() {
        *w /= sum;
    }
}

/// gate[i] ← silu(gate[i]) · up[i], across rayon's threads.
pub(super) fn silu_times(gate: &mut [f32], up: &[f32]) {
    assert_eq!(gate.len(), up.len(), "gate and up differ in size");
    const CHUNK: usize = 1 << 14;
    gate.par_chunks_mut(CHUNK)
        .zip(up.par_chunks(CHUNK))
        .for_each(|(gate, up)| {
            #[cfg(target_arch = "x86_64")]
            if super::packed::has_avx2_kernels() {
                // SAFETY: the features the function is compiled for were just detected.
                return unsafe { silu_times_avx2(gate, up) };
            }
            silu_times_portable(gate, up);
        });
}

fn silu_times_portable(gate: &mut [f32], up: &[f32]) {
    for (g, &u) in gate.iter_mut().zip(up) {
        *g = *g / (1.0 + (-*g).exp()) * u;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn silu_times_avx2(gate: &mut [f32], up: &[f32]) {
    use std::arch::x86_64::*;
    let mut gates = gate.chunks_exact_mut(8);
    let mut ups = up.chunks_exact(8);
    for (g, u) in (&mut gates).zip(&mut ups) {
        // SAFETY: eight values per chunk.
        unsafe {
            let x = _mm256_loadu_ps(g.as_ptr());
            let e = exp_avx2(_mm256_sub_ps(_mm256_setzero_ps(), x));
            let silu = _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0), e));
            _mm256_storeu_ps(
                g.as_mut_ptr(),
                _mm256_mul_ps(silu, _mm256_loadu_ps(u.as_ptr())),
            );
        }
    }
    silu_times_portable(gates.into_remainder(), ups.remainder());
}

/// The largest value, in eight independent lanes that the compiler turns
/// into vector maxima (one running maximum waits on the last); max is
/// exact and ignores NaN, so the order does not matter.
pub(super) fn max(values: &[f32]) -> f32 {
    lane_max(values, f32::NEG_INFINITY, |v| v)
}

/// The largest |v|, or 0 for none, as [`max`] finds it: what the 8-bit
/// activations' quantizers scale each block by.
#[inline]
pub(super) fn max_abs(values: &[f32]) -> f32 {
    lane_max(values, 0.0, f32::abs)
}

/// max(floor, key(v) for v in values) in eight lanes.
#[inline(always)]
fn lane_max(values: &[f32], floor: f32, key: impl Fn(f32) -> f32) -> f32 {
    const LANES: usize = 8;
    let mut lanes = [floor; LANES];
    let mut chunks = values.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (lane, &v) in lanes.iter_mut().zip(chunk) {
            *lane = lane.max(key(v));
        }
    }
    let rest = chunks.remainder().iter().map(|&v| key(v));
    lanes.into_iter().chain(rest).fold(floor, f32::max)
}

/// Each value v becomes exp(v − max); returns their sum.
fn exp_shifted(values: &mut [f32], max: f32) -> f32 {
    let mut sum = 0f32;
    for w in values.iter_mut() {
        *w = (*w - max).exp();
        sum += *w;
    }
    sum
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn exp_shifted_avx2(values: &mut [f32], max: f32) -> f32 {
    use std::arch::x86_64::*;
    let shift = _mm256_set1_ps(max);
    let mut sums = _mm256_setzero_ps();
    let mut chunks = values.chunks_exact_mut(8);
    for chunk in &mut chunks {
        // SAFETY: eight values per chunk.
        unsafe {
            let e = exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(chunk.as_ptr()), shift));
            _mm256_storeu_ps(chunk.as_mut_ptr(), e);
            sums = _mm256_add_ps(sums, e);
        }
    }
    let mut lanes = [0f32; 8];
    // SAFETY: eight lanes.
    unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), sums) };
    lanes.iter().sum::<f32>() + exp_shifted(chunks.into_remainder(), max)
}

/// e^x for x in [−87.3, 88]: x = n · ln 2 + r with |r| ≤ ln 2 / 2, e^r as
/// a degree-7 polynomial, 2^n put into the exponent bits. Values below
/// the range give e^−87.3 (≈ 1.2e−38, the smallest normal), which next
/// to a softmax's largest term, e^0, is nothing.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn exp_avx2(x: std::arch::x86_64::__m256) -> std::arch::x86_64::__m256 {
    use std::arch::x86_64::*;
    let x = _mm256_min_ps(
        _mm256_max_ps(x, _mm256_set1_ps(-87.336_55)),
        _mm256_set1_ps(88.0),
    );
    let n = _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(_mm256_mul_ps(
        x,
        _mm256_set1_ps(std::f32::consts::LOG2_E),
    ));
    // ln 2 as 0.693359375 (exact in few bits) minus 2.12194440e-4.
    let r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693_359_4), x);
    let r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.121_944_4e-4), r);
    let mut p = _mm256_set1_ps(1.987_569_1e-4);
    for c in [
        1.398_199_9e-3,
        8.333_452e-3,
        4.166_579_6e-2,
        0.166_666_65,
        0.5,
    ] {
        p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c));
    }
    let e = _mm256_fmadd_ps(
        p,
        _mm256_mul_ps(r, r),
        _mm256_add_ps(r, _mm256_set1_ps(1.0)),
    );
    let exponent = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    _mm256_mul_ps(e, _mm256_castsi256_ps(_mm256_slli_epi32::<23>(exponent)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gate is candle's silu(g) · u to a few ulp, over the vector part
    /// and the rest, and across chunks of threads.
    #[test]
    fn silu_times_matches_the_plain_formula() {
        let n = 3 * (1 << 14) + 13;
        let gate: Vec<f32> = (0..n)
            .map(|i| ((i * 7919 % 2001) as f32 - 1000.0) / 37.0)
            .collect();
        let up: Vec<f32> = (0..n)
            .map(|i| ((i * 31 % 97) as f32 - 48.0) / 16.0)
            .collect();
        let mut got = gate.clone();
        silu_times(&mut got, &up);
        for ((&g, &u), &y) in gate.iter().zip(&up).zip(&got) {
            let want = f64::from(g) / (1.0 + (-f64::from(g)).exp()) * f64::from(u);
            let error = (f64::from(y) - want).abs();
            assert!(
                error <= 1e-6 * want.abs() + 1e-30,
                "silu({g}) · {u}: {y} vs {want}"
            );
        }
    }

    /// The vector exponentials are within 4 ulp of libm's over the range a
    /// softmax meets, and a row's softmax within 1e-6 of f64's, whatever
    /// its length (the vector part and the rest).
    #[test]
    fn softmax_matches_f64_and_vector_exp_matches_libm() {
        #[cfg(target_arch = "x86_64")]
        if super::super::packed::has_avx2_kernels() {
            let xs: Vec<f32> = (0..=8800).map(|i| -87.0 + i as f32 * 0.01).collect();
            for chunk in xs.chunks_exact(8) {
                let mut got = [0f32; 8];
                // SAFETY: AVX2 was just detected.
                unsafe {
                    use std::arch::x86_64::*;
                    let e = exp_avx2(_mm256_loadu_ps(chunk.as_ptr()));
                    _mm256_storeu_ps(got.as_mut_ptr(), e);
                }
                for (&x, &e) in chunk.iter().zip(&got) {
                    let want = x.exp();
                    assert!(
                        (e - want).abs() <= 4.0 * f32::EPSILON * want,
                        "exp({x}): {e} vs {want}"
                    );
                }
            }
        } else {
            println!("skipped the vector part: this CPU has no AVX2");
        }
        for n in [1, 7, 8, 37, 1934] {
            let scores: Vec<f32> = (0..n)
                .map(|i| ((i * 7919 % 613) as f32 - 300.0) / 23.0)
                .collect();
            let mut got = scores.clone();
            softmax_in_place(&mut got);
            let top = scores
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, |m, s| m.max(f64::from(s)));
            let total: f64 = scores.iter().map(|&s| (f64::from(s) - top).exp()).sum();
            for (&s, &g) in scores.iter().zip(&got) {
                let want = (f64::from(s) - top).exp() / total;
                assert!(
                    (f64::from(g) - want).abs() < 1e-6 * want.max(1e-3),
                    "n {n}: {g} vs {want}"
                );
            }
        }
    }
}
