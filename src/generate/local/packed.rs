//! Products of a few activation rows with a weight matrix kept in the GGUF's
//! own blocks (Q4_1 or Q8_0), for decode steps.
//!
//! A decode step multiplies one row per sequence by every weight matrix, so
//! its cost is reading the weights. The f32 layout reads 4 bytes per weight;
//! the GGUF blocks read 0.625 (Q4_1) or 1.0625 (Q8_0). Each weight is expanded
//! in registers exactly as candle's dequantization expands it for the f32
//! layout (`q as f32 * d + m`, f32 multiply then add, never fused), so the
//! product uses the same weight values as the f32 GEMM of a prefill and
//! differs from it only in the order of the sums. That keeps decoding and
//! teacher-forced passes within the f32 layout's agreement.
//!
//! Each output is computed the same way whatever the number of rows, so a
//! sequence gets the same bits alone as in a batch. Not here: activation
//! quantization (the activations stay f32) or prefill, which stays a dense
//! f32 GEMM (`llama.rs`).

use candle_core::quantized::{GgmlDType, QTensor};
use half::f16;
use rayon::prelude::*;

/// Bytes per 32-weight block.
const Q4_1_BLOCK: usize = 20;
const Q8_0_BLOCK: usize = 34;
const BLOCK_WEIGHTS: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Q4_1,
    Q8_0,
}

impl Format {
    fn block_bytes(self) -> usize {
        match self {
            Format::Q4_1 => Q4_1_BLOCK,
            Format::Q8_0 => Q8_0_BLOCK,
        }
    }
}

/// A (outputs × inputs) weight matrix as GGUF blocks, row by row.
pub struct PackedMatrix {
    format: Format,
    blocks: Vec<u8>,
    outputs: usize,
    inputs: usize,
}

impl PackedMatrix {
    /// The blocks of a 2-D Q4_1 or Q8_0 tensor; None for any other layout.
    pub fn from_qtensor(q: &QTensor) -> Option<PackedMatrix> {
        let format = match q.dtype() {
            GgmlDType::Q4_1 => Format::Q4_1,
            GgmlDType::Q8_0 => Format::Q8_0,
            _ => return None,
        };
        let (outputs, inputs) = q.shape().dims2().ok()?;
        let blocks = q.data().ok()?.into_owned();
        let expected = outputs * inputs / BLOCK_WEIGHTS * format.block_bytes();
        (inputs % BLOCK_WEIGHTS == 0 && blocks.len() == expected).then_some(PackedMatrix {
            format,
            blocks,
            outputs,
            inputs,
        })
    }

    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// `x` holds `rows` rows of `inputs` values; returns `rows` rows of
    /// `outputs` values (x · Wᵀ), the outputs split across rayon's threads.
    pub fn matmul(&self, x: &[f32], rows: usize) -> Vec<f32> {
        assert_eq!(x.len(), rows * self.inputs, "x is not rows × inputs");
        let row_bytes = self.inputs / BLOCK_WEIGHTS * self.format.block_bytes();
        // Transposed while computing: output-major, `rows` values per output.
        let mut transposed = vec![0f32; self.outputs * rows];
        const CHUNK: usize = 32;
        transposed
            .par_chunks_mut(CHUNK * rows)
            .zip(self.blocks.par_chunks(CHUNK * row_bytes))
            .for_each(|(out, weights)| {
                for (sums, weight_row) in out.chunks_mut(rows).zip(weights.chunks(row_bytes)) {
                    dot_rows(self.format, weight_row, x, self.inputs, sums);
                }
            });
        let mut y = vec![0f32; rows * self.outputs];
        for (o, sums) in transposed.chunks(rows).enumerate() {
            for (r, &s) in sums.iter().enumerate() {
                y[r * self.outputs + o] = s;
            }
        }
        y
    }
}

/// One weight row (as blocks) against every row of `x`.
fn dot_rows(format: Format, weight_row: &[u8], x: &[f32], inputs: usize, sums: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the features the function is compiled for were just detected.
        unsafe { avx2::dot_rows(format, weight_row, x, inputs, sums) };
        return;
    }
    portable_dot_rows(format, weight_row, x, inputs, sums);
}

/// The 32 weights of one block, expanded as candle expands them.
fn expand(format: Format, block: &[u8], w: &mut [f32; BLOCK_WEIGHTS]) {
    let d = f16::from_le_bytes([block[0], block[1]]).to_f32();
    match format {
        Format::Q4_1 => {
            let m = f16::from_le_bytes([block[2], block[3]]).to_f32();
            for (j, &q) in block[4..20].iter().enumerate() {
                w[j] = f32::from(q & 0x0F) * d + m;
                w[j + 16] = f32::from(q >> 4) * d + m;
            }
        }
        Format::Q8_0 => {
            for (j, &q) in block[2..34].iter().enumerate() {
                w[j] = f32::from(q as i8) * d;
            }
        }
    }
}

fn portable_dot_rows(
    format: Format,
    weight_row: &[u8],
    x: &[f32],
    inputs: usize,
    sums: &mut [f32],
) {
    sums.fill(0.0);
    let mut w = [0f32; BLOCK_WEIGHTS];
    for (b, block) in weight_row.chunks(format.block_bytes()).enumerate() {
        expand(format, block, &mut w);
        for (r, sum) in sums.iter_mut().enumerate() {
            let xs = &x[r * inputs + b * BLOCK_WEIGHTS..][..BLOCK_WEIGHTS];
            *sum += w.iter().zip(xs).map(|(w, x)| w * x).sum::<f32>();
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{BLOCK_WEIGHTS, Format};
    use half::f16;
    use std::arch::x86_64::*;

    /// Up to this many rows share one expansion of each block.
    const GROUP: usize = 4;

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn dot_rows(
        format: Format,
        weight_row: &[u8],
        x: &[f32],
        inputs: usize,
        sums: &mut [f32],
    ) {
        let rows = sums.len();
        let mut start = 0;
        while start < rows {
            let group = GROUP.min(rows - start);
            // Four accumulators per row, one per vector of the block, so
            // that consecutive FMAs do not wait on each other's result.
            let mut acc = [[_mm256_setzero_ps(); 4]; GROUP];
            for (b, block) in weight_row.chunks(format.block_bytes()).enumerate() {
                let w = expand(format, block);
                for (g, acc) in acc.iter_mut().enumerate().take(group) {
                    let xs = &x[(start + g) * inputs + b * BLOCK_WEIGHTS..][..BLOCK_WEIGHTS];
                    for (k, (w, acc)) in w.iter().zip(acc.iter_mut()).enumerate() {
                        // SAFETY: xs holds 32 values, k * 8 + 8 <= 32.
                        let xv = unsafe { _mm256_loadu_ps(xs.as_ptr().add(k * 8)) };
                        *acc = _mm256_fmadd_ps(*w, xv, *acc);
                    }
                }
            }
            for (g, [a, b, c, d]) in acc.iter().enumerate().take(group) {
                let all = _mm256_add_ps(_mm256_add_ps(*a, *b), _mm256_add_ps(*c, *d));
                sums[start + g] = horizontal_sum(all);
            }
            start += group;
        }
    }

    /// The block's weights in four vectors of eight: q · d (+ m), the
    /// multiply and the add rounded separately as in candle's expansion.
    #[target_feature(enable = "avx2,fma")]
    fn expand(format: Format, block: &[u8]) -> [__m256; 4] {
        let d = _mm256_set1_ps(f16::from_le_bytes([block[0], block[1]]).to_f32());
        match format {
            Format::Q4_1 => {
                let m = _mm256_set1_ps(f16::from_le_bytes([block[2], block[3]]).to_f32());
                // SAFETY: a Q4_1 block is 20 bytes; its quants are bytes 4..20.
                let qs = unsafe { _mm_loadu_si128(block[4..20].as_ptr().cast()) };
                let mask = _mm_set1_epi8(0x0F);
                let low = _mm_and_si128(qs, mask);
                let high = _mm_and_si128(_mm_srli_epi16::<4>(qs), mask);
                [
                    scale_shift(_mm256_cvtepu8_epi32(low), d, m),
                    scale_shift(_mm256_cvtepu8_epi32(_mm_srli_si128::<8>(low)), d, m),
                    scale_shift(_mm256_cvtepu8_epi32(high), d, m),
                    scale_shift(_mm256_cvtepu8_epi32(_mm_srli_si128::<8>(high)), d, m),
                ]
            }
            Format::Q8_0 => {
                // SAFETY: a Q8_0 block is 34 bytes; its quants are bytes 2..34.
                let eight =
                    |offset: usize| unsafe { _mm_loadl_epi64(block[2 + offset..].as_ptr().cast()) };
                let (a, b, c, e) = (eight(0), eight(8), eight(16), eight(24));
                [
                    scale(_mm256_cvtepi8_epi32(a), d),
                    scale(_mm256_cvtepi8_epi32(b), d),
                    scale(_mm256_cvtepi8_epi32(c), d),
                    scale(_mm256_cvtepi8_epi32(e), d),
                ]
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn scale_shift(q: __m256i, d: __m256, m: __m256) -> __m256 {
        _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(q), d), m)
    }

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn scale(q: __m256i, d: __m256) -> __m256 {
        _mm256_mul_ps(_mm256_cvtepi32_ps(q), d)
    }

    #[target_feature(enable = "avx2,fma")]
    fn horizontal_sum(v: __m256) -> f32 {
        let pair = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        let pair = _mm_add_ps(pair, _mm_movehl_ps(pair, pair));
        let one = _mm_add_ss(pair, _mm_shuffle_ps::<1>(pair, pair));
        _mm_cvtss_f32(one)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, Tensor};

    /// A random (outputs × inputs) matrix quantized to `dtype`, with its
    /// dequantized f32 values.
    fn matrix(dtype: GgmlDType, outputs: usize, inputs: usize) -> (QTensor, Vec<f32>) {
        let values: Vec<f32> = (0..outputs * inputs)
            .map(|i| ((i * 7919 % 1000) as f32 / 500.0 - 1.0) * 0.3)
            .collect();
        let t = Tensor::from_vec(values, (outputs, inputs), &Device::Cpu).unwrap();
        let q = QTensor::quantize(&t, dtype).unwrap();
        let dense = q.dequantize(&Device::Cpu).unwrap().flatten_all().unwrap();
        (q, dense.to_vec1().unwrap())
    }

    fn dense_matmul(w: &[f32], x: &[f32], rows: usize, outputs: usize, inputs: usize) -> Vec<f64> {
        (0..rows * outputs)
            .map(|i| {
                let (r, o) = (i / outputs, i % outputs);
                (0..inputs)
                    .map(|k| f64::from(x[r * inputs + k]) * f64::from(w[o * inputs + k]))
                    .sum()
            })
            .collect()
    }

    #[test]
    fn products_use_the_dequantized_weights_and_do_not_depend_on_the_batch() {
        let (outputs, inputs) = (70, 128);
        for dtype in [GgmlDType::Q4_1, GgmlDType::Q8_0] {
            let (q, dense) = matrix(dtype, outputs, inputs);
            let packed = PackedMatrix::from_qtensor(&q).expect("a packed layout");
            let rows = 6;
            let x: Vec<f32> = (0..rows * inputs)
                .map(|i| ((i * 31 % 97) as f32 / 48.0) - 1.0)
                .collect();
            let y = packed.matmul(&x, rows);
            let exact = dense_matmul(&dense, &x, rows, outputs, inputs);
            for (got, want) in y.iter().zip(&exact) {
                assert!(
                    (f64::from(*got) - want).abs() < 1e-4,
                    "{dtype:?}: {got} vs {want}"
                );
            }
            for r in 0..rows {
                let alone = packed.matmul(&x[r * inputs..(r + 1) * inputs], 1);
                assert_eq!(
                    alone,
                    y[r * outputs..(r + 1) * outputs],
                    "{dtype:?} row {r}"
                );
            }
            let mut portable = vec![0f32; rows];
            let row_bytes = inputs / BLOCK_WEIGHTS * dtype_bytes(dtype);
            portable_dot_rows(
                packed.format,
                &packed.blocks[..row_bytes],
                &x,
                inputs,
                &mut portable,
            );
            for r in 0..rows {
                let want = exact[r * outputs];
                assert!((f64::from(portable[r]) - want).abs() < 1e-4);
            }
        }
    }

    fn dtype_bytes(dtype: GgmlDType) -> usize {
        match dtype {
            GgmlDType::Q4_1 => Q4_1_BLOCK,
            _ => Q8_0_BLOCK,
        }
    }

    #[test]
    fn other_layouts_are_not_packed() {
        let (q, _) = matrix(GgmlDType::Q4_0, 4, 64);
        assert!(PackedMatrix::from_qtensor(&q).is_none());
    }
}
