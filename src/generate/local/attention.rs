//! Attention of one sequence's new rows over its cached keys and values,
//! on plain slices: the rotary embedding of the rows, their keys and values
//! appended to the layer's cache, then each query head's softmax over its
//! key/value head up to the row's own position. A decode step's single row
//! runs in explicit 8-lane FMAs on AVX2 for the usual head widths; a pass
//! over a prompt runs in blocks of rows through `gemm` products, the same
//! arithmetic up to the order of sums. Either way a prompt's causal mask is
//! where each row's keys end: no n × n score matrix is made (at 1,934
//! tokens candle's masked products made four of 180 MB per layer, each in
//! fresh pages). Not here: the projections around it (`llama`) or the
//! rotary tables (`rope`).

use rayon::prelude::*;

use super::rope::{RopeStyle, rotate_halves, rotate_pairs};
use super::vector_exp::softmax_in_place;

/// The model's attention shape, from the GGUF metadata.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub context: usize,
    pub rope: RopeStyle,
}

/// One block's keys (after the rotary embedding) and values: a row of
/// kv_heads × head_dim values per position, appended as the sequence runs,
/// so a decode step neither copies nor repeats what is already there.
#[derive(Clone, Default)]
pub(super) struct LayerCache {
    keys: Vec<f32>,
    values: Vec<f32>,
}

/// The rotary tables as rows of head_dim / 2 values, one per position.
pub(super) struct Rotary {
    pub(super) cos_rows: Vec<f32>,
    pub(super) sin_rows: Vec<f32>,
}

/// Attention of `q`, `k` and `v`'s n rows (heads × head_dim and kv_heads ×
/// head_dim values each) at positions `position`.. of the sequence whose
/// layer cache is `cache`, which holds the `position` rows before them.
/// Rotates `q` and `k` in place and appends `k` and `v` to the cache; each
/// row's heads then attend over the cache up to the row itself, split
/// across rayon's threads by head (one row) or by block of rows and head.
/// Returns n × heads × head_dim values.
pub(super) fn attend_rows(
    shape: Shape,
    rotary: &Rotary,
    q: &mut [f32],
    k: &mut [f32],
    v: &[f32],
    position: usize,
    cache: &mut LayerCache,
) -> Vec<f32> {
    let Shape {
        heads,
        kv_heads,
        head_dim,
        ..
    } = shape;
    let half = head_dim / 2;
    let rotate = match shape.rope {
        RopeStyle::Interleaved => rotate_pairs,
        RopeStyle::Neox => rotate_halves,
    };
    let (q_width, kv_width) = (heads * head_dim, kv_heads * head_dim);
    for (row, (q, k)) in q
        .chunks_exact_mut(q_width)
        .zip(k.chunks_exact_mut(kv_width))
        .enumerate()
    {
        let at = (position + row) * half..(position + row + 1) * half;
        let (cos, sin) = (&rotary.cos_rows[at.clone()], &rotary.sin_rows[at]);
        rotate(q, cos, sin);
        rotate(k, cos, sin);
    }
    assert_eq!(
        cache.keys.len(),
        position * kv_width,
        "the cache ends at `position`"
    );
    cache.keys.extend_from_slice(k);
    cache.values.extend_from_slice(v);
    let view = CacheView {
        shape,
        keys: &cache.keys,
        values: &cache.values,
        position,
    };
    if q.len() == q_width {
        view.attend_one(q)
    } else {
        view.attend_blocks(q)
    }
}

/// Query rows per block of a pass over a prompt: each block's scores are
/// one matrix product per head, BLOCK × the keys it can see.
const BLOCK: usize = 64;

/// A layer's cache after the new rows' keys and values were appended, the
/// first new row at `position`.
struct CacheView<'a> {
    shape: Shape,
    keys: &'a [f32],
    values: &'a [f32],
    position: usize,
}

impl CacheView<'_> {
    /// One row's heads (a decode step), split across rayon's threads by head.
    fn attend_one(&self, q: &[f32]) -> Vec<f32> {
        let Shape {
            heads,
            kv_heads,
            head_dim,
            ..
        } = self.shape;
        let cache = HeadCache {
            keys: self.keys,
            values: self.values,
            row: kv_heads * head_dim,
            scale: (head_dim as f64).sqrt(),
        };
        let repeat = heads / kv_heads;
        let mut out = vec![0f32; q.len()];
        out.par_chunks_mut(head_dim)
            .zip(q.par_chunks(head_dim))
            .enumerate()
            .for_each(|(head, (out, q))| cache.attend(q, head / repeat * head_dim, out));
        out
    }

    /// Several rows (a pass over a prompt) in blocks of [`BLOCK`] rows, each
    /// block and head one task for rayon's threads: the scores of the
    /// block's rows against every key up to its last row in one matrix
    /// product, each row's softmax up to its own position (the causal mask),
    /// then the product with the values. A matrix product reads each key
    /// once for the block's rows, where a row at a time reads it once a row.
    fn attend_blocks(&self, q: &[f32]) -> Vec<f32> {
        let Shape {
            heads, head_dim, ..
        } = self.shape;
        let q_width = heads * head_dim;
        let rows = q.len() / q_width;
        let tasks: Vec<(usize, usize)> = (0..rows.div_ceil(BLOCK))
            .flat_map(|block| (0..heads).map(move |head| (block, head)))
            .collect();
        let parts: Vec<Vec<f32>> = tasks
            .par_iter()
            .map(|&(block, head)| {
                let first = block * BLOCK;
                let count = BLOCK.min(rows - first);
                self.attend_block(q, first, count, head)
            })
            .collect();
        let mut out = vec![0f32; q.len()];
        for (&(block, head), part) in tasks.iter().zip(&parts) {
            for (i, row) in part.chunks_exact(head_dim).enumerate() {
                let at = (block * BLOCK + i) * q_width + head * head_dim;
                out[at..at + head_dim].copy_from_slice(row);
            }
        }
        out
    }

    /// Head `head` of the pass's rows `first`..`first + count` (queries
    /// `q`, rows of heads × head_dim): count × head_dim values.
    fn attend_block(&self, q: &[f32], first: usize, count: usize, head: usize) -> Vec<f32> {
        let Shape {
            heads,
            kv_heads,
            head_dim,
            ..
        } = self.shape;
        let (q_width, kv_width) = (heads * head_dim, kv_heads * head_dim);
        let offset = head / (heads / kv_heads) * head_dim;
        // Keys up to the block's last row; row i sees the first `start + i + 1`.
        let start = self.position + first;
        let seen = start + count;
        let queries = Strided {
            data: &q[first * q_width + head * head_dim..],
            row: q_width,
            column: 1,
        };
        let keys = Strided {
            data: &self.keys[offset..],
            row: 1,
            column: kv_width,
        };
        let mut scores = vec![0f32; count * seen];
        product(
            &mut scores,
            seen,
            head_dim,
            queries,
            keys,
            1.0 / (head_dim as f32).sqrt(),
        );
        for (i, row) in scores.chunks_exact_mut(seen).enumerate() {
            let (visible, masked) = row.split_at_mut(start + i + 1);
            softmax_in_place(visible);
            masked.fill(0.0);
        }
        let weights = Strided {
            data: &scores,
            row: seen,
            column: 1,
        };
        let values = Strided {
            data: &self.values[offset..],
            row: kv_width,
            column: 1,
        };
        let mut out = vec![0f32; count * head_dim];
        product(&mut out, head_dim, seen, weights, values, 1.0);
        out
    }
}

/// A matrix read from a slice: element (i, j) at `i · row + j · column`.
struct Strided<'a> {
    data: &'a [f32],
    row: usize,
    column: usize,
}

impl Strided<'_> {
    /// Whether every element of a rows × columns matrix lies in the slice.
    fn holds(&self, rows: usize, columns: usize) -> bool {
        rows == 0
            || columns == 0
            || (rows - 1) * self.row + (columns - 1) * self.column < self.data.len()
    }
}

/// `out` (rows of `columns`) = `scale` · `lhs` (rows × `inner`) · `rhs`
/// (`inner` × columns), on the calling thread.
fn product(out: &mut [f32], columns: usize, inner: usize, lhs: Strided, rhs: Strided, scale: f32) {
    let rows = out.len() / columns;
    assert!(
        lhs.holds(rows, inner) && rhs.holds(inner, columns),
        "a factor ends early"
    );
    // SAFETY: the assert keeps every element the strides reach inside `lhs`
    // and `rhs`; `out` is rows × columns, row-major.
    unsafe {
        gemm::gemm(
            rows,
            columns,
            inner,
            out.as_mut_ptr(),
            1,
            columns as isize,
            false,
            lhs.data.as_ptr(),
            lhs.column as isize,
            lhs.row as isize,
            rhs.data.as_ptr(),
            rhs.column as isize,
            rhs.row as isize,
            0.0,
            scale,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// One sequence's cached keys and values in a layer, rows of
/// `row` = kv_heads × head_dim, as one query head of a row reads them.
struct HeadCache<'a> {
    keys: &'a [f32],
    values: &'a [f32],
    row: usize,
    scale: f64,
}

impl HeadCache<'_> {
    /// Softmax(q · keysᵀ / √d) · values for the key/value head at column
    /// `offset`, added into `out`. On AVX2, for the usual head widths, the
    /// two products run in explicit 8-lane FMAs, because the crate is built
    /// for baseline x86-64 and this loop is a decode step's largest cost
    /// after the weights.
    fn attend(&self, q: &[f32], offset: usize, out: &mut [f32]) {
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
        softmax_in_place(&mut weights);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Values in [-1, 1) that look random enough for sums to differ.
    fn values(count: usize, seed: u64) -> Vec<f32> {
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..count)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    fn tables(head_dim: usize, positions: usize) -> (Vec<f32>, Vec<f32>) {
        let half = head_dim / 2;
        let angle =
            |p: usize, i: usize| p as f32 / 10_000f32.powf(2.0 * i as f32 / head_dim as f32);
        let cos = (0..positions * half)
            .map(|x| angle(x / half, x % half).cos())
            .collect();
        let sin = (0..positions * half)
            .map(|x| angle(x / half, x % half).sin())
            .collect();
        (cos, sin)
    }

    fn shape(head_dim: usize, rope: RopeStyle) -> Shape {
        Shape {
            heads: 6,
            kv_heads: 2,
            head_dim,
            context: 64,
            rope,
        }
    }

    /// Each row's causal softmax attention computed plainly in f64 from the
    /// rotated rows, with query head h reading key/value head h / 3.
    fn reference(shape: Shape, q: &[f32], k: &[f32], v: &[f32]) -> Vec<f64> {
        let (d, heads, kv_heads) = (shape.head_dim, shape.heads, shape.kv_heads);
        let n = q.len() / (heads * d);
        let mut out = vec![0f64; q.len()];
        for row in 0..n {
            for head in 0..heads {
                let query = &q[(row * heads + head) * d..][..d];
                let kv = |t: &[f32], j: usize| -> Vec<f64> {
                    let at = (j * kv_heads + head / (heads / kv_heads)) * d;
                    t[at..at + d].iter().map(|&x| x as f64).collect()
                };
                let scores: Vec<f64> = (0..=row)
                    .map(|j| {
                        let key = kv(k, j);
                        let dot: f64 = query.iter().zip(&key).map(|(&a, b)| a as f64 * b).sum();
                        dot / (d as f64).sqrt()
                    })
                    .collect();
                let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let total: f64 = scores.iter().map(|s| (s - max).exp()).sum();
                for (j, s) in scores.iter().enumerate() {
                    let weight = (s - max).exp() / total;
                    for (o, x) in out[(row * heads + head) * d..][..d]
                        .iter_mut()
                        .zip(kv(v, j))
                    {
                        *o += weight * x;
                    }
                }
            }
        }
        out
    }

    fn rotated(shape: Shape, rotary: &Rotary, rows: &[f32], width: usize) -> Vec<f32> {
        let rotate = match shape.rope {
            RopeStyle::Interleaved => rotate_pairs,
            RopeStyle::Neox => rotate_halves,
        };
        let half = shape.head_dim / 2;
        let mut rows = rows.to_vec();
        for (p, row) in rows.chunks_exact_mut(width).enumerate() {
            rotate(
                row,
                &rotary.cos_rows[p * half..][..half],
                &rotary.sin_rows[p * half..][..half],
            );
        }
        rows
    }

    /// Attention of every row, the first `split` rows in one pass and the
    /// rest in another, or (split None) each row alone as a decode step.
    fn run(
        shape: Shape,
        rotary: &Rotary,
        q: &[f32],
        k: &[f32],
        v: &[f32],
        split: Option<usize>,
    ) -> (Vec<f32>, LayerCache) {
        let (q_width, kv_width) = (
            shape.heads * shape.head_dim,
            shape.kv_heads * shape.head_dim,
        );
        let n = q.len() / q_width;
        let bounds: Vec<usize> = match split {
            Some(split) => vec![0, split, n],
            None => (0..=n).collect(),
        };
        let mut cache = LayerCache::default();
        let mut out = Vec::new();
        for pass in bounds.windows(2) {
            let (from, to) = (pass[0], pass[1]);
            let mut q = q[from * q_width..to * q_width].to_vec();
            let mut k = k[from * kv_width..to * kv_width].to_vec();
            let v = &v[from * kv_width..to * kv_width];
            out.extend(attend_rows(
                shape, rotary, &mut q, &mut k, v, from, &mut cache,
            ));
        }
        (out, cache)
    }

    #[test]
    fn rows_attend_causally_over_the_cache_in_passes_and_in_steps() {
        // 16 takes the portable decode loop, 64 and 128 the AVX2 one where
        // the CPU has it; the second pass is a whole block and 5 rows.
        for (head_dim, rope) in [
            (16, RopeStyle::Interleaved),
            (64, RopeStyle::Neox),
            (128, RopeStyle::Neox),
        ] {
            let shape = shape(head_dim, rope);
            let n = 4 + BLOCK + 5;
            let (q_width, kv_width) = (shape.heads * head_dim, shape.kv_heads * head_dim);
            let (cos_rows, sin_rows) = tables(head_dim, n);
            let rotary = Rotary { cos_rows, sin_rows };
            let (q, k, v) = (
                values(n * q_width, 1),
                values(n * kv_width, 2),
                values(n * kv_width, 3),
            );
            let expected = reference(
                shape,
                &rotated(shape, &rotary, &q, q_width),
                &rotated(shape, &rotary, &k, kv_width),
                &v,
            );
            let (passes, passes_cache) = run(shape, &rotary, &q, &k, &v, Some(4));
            let (steps, steps_cache) = run(shape, &rotary, &q, &k, &v, None);
            for (how, got) in [("passes", &passes), ("steps", &steps)] {
                for (i, (got, want)) in got.iter().zip(&expected).enumerate() {
                    assert!(
                        (*got as f64 - want).abs() < 1e-5,
                        "{how}, head_dim {head_dim}, value {i} (row {}): {got} against {want}",
                        i / q_width
                    );
                }
            }
            assert_eq!(passes_cache.keys, steps_cache.keys);
            assert_eq!(passes_cache.values, steps_cache.values);
        }
    }

    #[test]
    #[should_panic(expected = "the cache ends at `position`")]
    fn rows_must_start_where_the_cache_ends() {
        let shape = shape(16, RopeStyle::Neox);
        let (cos_rows, sin_rows) = tables(16, 4);
        let rotary = Rotary { cos_rows, sin_rows };
        let (mut q, mut k, v) = (values(6 * 16, 1), values(2 * 16, 2), values(2 * 16, 3));
        attend_rows(
            shape,
            &rotary,
            &mut q,
            &mut k,
            &v,
            2,
            &mut LayerCache::default(),
        );
    }
}
