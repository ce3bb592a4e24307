//! Attention of one decode step over a sequence's cached keys and values:
//! each query head against its key/value head, in explicit 8-lane FMAs on
//! AVX2 for the usual head widths. Passes over a prompt use candle's
//! matrix products instead (`llama`).

/// One sequence's cached keys and values in a layer, rows of
/// `row` = kv_heads × head_dim, as one query head of a decode step reads them.
pub(super) struct HeadCache<'a> {
    pub(super) keys: &'a [f32],
    pub(super) values: &'a [f32],
    pub(super) row: usize,
    pub(super) scale: f64,
}

impl HeadCache<'_> {
    /// Softmax(q · keysᵀ / √d) · values for the key/value head at column
    /// `offset`, added into `out`. On AVX2, for the usual head widths, the
    /// two products run in explicit 8-lane FMAs, because the crate is built
    /// for baseline x86-64 and this loop is a decode step's largest cost
    /// after the weights.
    pub(super) fn attend(&self, q: &[f32], offset: usize, out: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the features the functions are compiled for were just detected.
            match q.len() {
                64 => return unsafe { self.attend_avx2::<8>(q, offset, out) },
                128 => return unsafe { self.attend_avx2::<16>(q, offset, out) },
                _ => {}
            }
        }
        self.attend_portable(q, offset, out);
    }

    /// The softmax of the scores q · key / √d over the cached keys, with
    /// `dot` for the products.
    #[inline(always)]
    fn softmax(&self, q: &[f32], offset: usize, dot: impl Fn(&[f32], &[f32]) -> f32) -> Vec<f32> {
        let width = q.len();
        let mut weights = Vec::with_capacity(self.keys.len() / self.row);
        for key in self.keys.chunks_exact(self.row) {
            let score = dot(q, &key[offset..offset + width]);
            weights.push((score as f64 / self.scale) as f32);
        }
        let max = weights.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut sum = 0f32;
        for w in &mut weights {
            *w = (*w - max).exp();
            sum += *w;
        }
        for w in &mut weights {
            *w /= sum;
        }
        weights
    }

    fn attend_portable(&self, q: &[f32], offset: usize, out: &mut [f32]) {
        let weights = self.softmax(q, offset, dot);
        let width = out.len();
        for (w, value) in weights.iter().zip(self.values.chunks_exact(self.row)) {
            for (o, x) in out.iter_mut().zip(&value[offset..offset + width]) {
                *o += w * x;
            }
        }
    }

    /// The AVX2 path for heads of `VECTORS` × 8 values, whose weighted sum
    /// of the values stays in registers across the cached positions.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn attend_avx2<const VECTORS: usize>(&self, q: &[f32], offset: usize, out: &mut [f32]) {
        use std::arch::x86_64::*;
        // The closure inherits this function's target features.
        let weights = self.softmax(q, offset, |a, b| avx2_dot(a, b));
        let mut sums = [_mm256_setzero_ps(); VECTORS];
        for (&w, value) in weights.iter().zip(self.values.chunks_exact(self.row)) {
            let value = &value[offset..offset + VECTORS * 8];
            let w = _mm256_set1_ps(w);
            for (sum, x) in sums.iter_mut().zip(value.chunks_exact(8)) {
                // SAFETY: the chunk holds 8 values.
                *sum = _mm256_fmadd_ps(w, unsafe { _mm256_loadu_ps(x.as_ptr()) }, *sum);
            }
        }
        for (sum, o) in sums.iter().zip(out.chunks_exact_mut(8)) {
            // SAFETY: the chunk holds 8 values.
            unsafe {
                let total = _mm256_add_ps(_mm256_loadu_ps(o.as_ptr()), *sum);
                _mm256_storeu_ps(o.as_mut_ptr(), total);
            }
        }
    }
}

/// Σ a·b over slices whose length is a multiple of 8, in two chains of
/// 8-lane FMAs.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2,fma")]
fn avx2_dot(a: &[f32], b: &[f32]) -> f32 {
    use std::arch::x86_64::*;
    let mut sums = [_mm256_setzero_ps(); 2];
    for (i, (x, y)) in a.chunks_exact(8).zip(b.chunks_exact(8)).enumerate() {
        // SAFETY: both chunks hold 8 values.
        let (x, y) = unsafe { (_mm256_loadu_ps(x.as_ptr()), _mm256_loadu_ps(y.as_ptr())) };
        sums[i % 2] = _mm256_fmadd_ps(x, y, sums[i % 2]);
    }
    super::packed::horizontal_sum(_mm256_add_ps(sums[0], sums[1]))
}

/// A dot product in sixteen lanes, which the compiler keeps in vector
/// registers (two independent chains, so adds do not wait on each other).
#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 16];
    let (a_chunks, b_chunks) = (a.chunks_exact(16), b.chunks_exact(16));
    let tail: f32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for l in 0..16 {
            lanes[l] += x[l] * y[l];
        }
    }
    lanes.iter().sum::<f32>() + tail
}
