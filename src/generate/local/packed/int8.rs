//! The 8-bit-activation products of `packed`: activation rows quantized
//! to 8 bits per block ([`Int8Rows`]), and a weight row of blocks against
//! them, in integers, as llama.cpp multiplies them. Used by the quantized layout's passes and the mixed
//! layout's decode steps.

use super::super::vector_exp::max_abs;
use super::{BLOCK_WEIGHTS, Format};
use half::f16;
use rayon::prelude::*;

/// Activation rows quantized as llama.cpp's Q8_1 blocks: per 32 values the
/// scale d = max|x| / 127 (stored as f16), quants round(x / d), and
/// d · Σ quants (stored as f16), which a Q4_1 block's offset multiplies.
pub(super) struct Int8Rows {
    pub(super) quants: Vec<i8>,
    pub(super) scales: Vec<f32>,
    pub(super) sums: Vec<f32>,
    /// Σ quants per block as an integer, which the panels' Q5_0 codes
    /// (w + 16) need 16 times over.
    pub(super) quant_sums: Vec<i32>,
    pub(super) blocks_per_row: usize,
}

impl Int8Rows {
    pub(super) fn quantize(x: &[f32], rows: usize, inputs: usize) -> Int8Rows {
        let blocks = x.len() / BLOCK_WEIGHTS;
        let mut quantized = Int8Rows {
            quants: vec![0; x.len()],
            scales: vec![0.0; blocks],
            sums: vec![0.0; blocks],
            quant_sums: vec![0; blocks],
            blocks_per_row: inputs / BLOCK_WEIGHTS,
        };
        debug_assert_eq!(blocks, rows * quantized.blocks_per_row);
        // On every thread, as `SuperRows::quantize`.
        x.par_chunks(CHUNK_BLOCKS * BLOCK_WEIGHTS)
            .zip(
                quantized
                    .quants
                    .par_chunks_mut(CHUNK_BLOCKS * BLOCK_WEIGHTS),
            )
            .zip(quantized.scales.par_chunks_mut(CHUNK_BLOCKS))
            .zip(quantized.sums.par_chunks_mut(CHUNK_BLOCKS))
            .zip(quantized.quant_sums.par_chunks_mut(CHUNK_BLOCKS))
            .for_each(|((((x, quants), scales), sums), quant_sums)| {
                quantize_blocks(x, quants, scales, sums, quant_sums)
            });
        quantized
    }

    /// Row `r`'s block `b`: its 32 quants, scale and scaled sum.
    pub(super) fn block(&self, r: usize, b: usize) -> (&[i8], f32, f32) {
        let index = r * self.blocks_per_row + b;
        let quants = &self.quants[index * BLOCK_WEIGHTS..(index + 1) * BLOCK_WEIGHTS];
        (quants, self.scales[index], self.sums[index])
    }

    pub(super) fn rows(&self) -> usize {
        self.scales.len() / self.blocks_per_row.max(1)
    }
}

/// Blocks per task when a pass's rows are quantized across threads.
const CHUNK_BLOCKS: usize = 512;

/// Consecutive blocks of `x` into their quants, scales, scaled sums and
/// sums of quants.
fn quantize_blocks(
    x: &[f32],
    quants: &mut [i8],
    scales: &mut [f32],
    sums: &mut [f32],
    quant_sums: &mut [i32],
) {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx2_kernels() {
        // SAFETY: the features the function is compiled for were just detected.
        return unsafe { quantize_blocks_avx2(x, quants, scales, sums, quant_sums) };
    }
    quantize_blocks_inline(x, quants, scales, sums, quant_sums);
}

/// The same body, compiled where `f32::round` is two instructions
/// rather than a call to libm per value.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
fn quantize_blocks_avx2(
    x: &[f32],
    quants: &mut [i8],
    scales: &mut [f32],
    sums: &mut [f32],
    quant_sums: &mut [i32],
) {
    quantize_blocks_inline(x, quants, scales, sums, quant_sums);
}

#[inline(always)]
fn quantize_blocks_inline(
    x: &[f32],
    quants: &mut [i8],
    scales: &mut [f32],
    sums: &mut [f32],
    quant_sums: &mut [i32],
) {
    let blocks = x
        .chunks_exact(BLOCK_WEIGHTS)
        .zip(quants.chunks_exact_mut(BLOCK_WEIGHTS))
        .zip(scales.iter_mut().zip(sums.iter_mut().zip(quant_sums)));
    for ((block, quants), (scale, (sum, quant_sum))) in blocks {
        let d = max_abs(block) / 127.0;
        let inverse = if d == 0.0 { 0.0 } else { 1.0 / d };
        for (q, &v) in quants.iter_mut().zip(block) {
            *q = (v * inverse).round() as i8;
        }
        let total: i32 = quants.iter().map(|&q| i32::from(q)).sum();
        *scale = f16::from_f32(d).to_f32();
        *sum = f16::from_f32(d * total as f32).to_f32();
        *quant_sum = total;
    }
}

/// One weight row (as blocks) against every quantized row: per block
/// the integer sum Σ q_w · q_x, times both scales, plus (Q4_1) the
/// block's offset times the row's scaled sum, as llama.cpp's kernels.
/// `sums[i]` is row `first + i`'s.
pub(super) fn dot_rows(
    format: Format,
    weight_row: &[u8],
    x: &Int8Rows,
    first: usize,
    sums: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx2_kernels() {
        // SAFETY: the features the function is compiled for were just detected.
        unsafe { avx2::dot_rows(format, weight_row, x, first, sums) };
        return;
    }
    portable_dot_rows(format, weight_row, x, first, sums);
}

/// A block's scale, offset (0 for Q5_0 and Q8_0) and 32 integer weights.
pub(super) fn weights(format: Format, block: &[u8]) -> (f32, f32, [i8; BLOCK_WEIGHTS]) {
    let d = f16::from_le_bytes([block[0], block[1]]).to_f32();
    let mut q = [0i8; BLOCK_WEIGHTS];
    match format {
        Format::Q4_1 => {
            for (j, &byte) in block[4..20].iter().enumerate() {
                q[j] = (byte & 0x0F) as i8;
                q[j + 16] = (byte >> 4) as i8;
            }
            (d, f16::from_le_bytes([block[2], block[3]]).to_f32(), q)
        }
        Format::Q5_0 => {
            let high = u32::from_le_bytes([block[2], block[3], block[4], block[5]]);
            let fifth = |j: usize| (((high >> j) & 1) << 4) as u8;
            for (j, &byte) in block[6..22].iter().enumerate() {
                q[j] = ((byte & 0x0F) | fifth(j)) as i8 - 16;
                q[j + 16] = ((byte >> 4) | fifth(j + 16)) as i8 - 16;
            }
            (d, 0.0, q)
        }
        // Not reached for the K-quants, whose products are `kquant_int8`'s.
        _ => {
            for (j, &byte) in block[2..34].iter().enumerate() {
                q[j] = byte as i8;
            }
            (d, 0.0, q)
        }
    }
}

/// The exact sum that `dot_rows` rounds, in f64: over row `r`'s blocks,
/// d_w · d_x · Σ w q_x plus (Q4_1) the block's offset times the scaled sum.
#[cfg(test)]
pub(super) fn exact_dot(format: Format, weight_row: &[u8], x: &Int8Rows, r: usize) -> f64 {
    weight_row
        .chunks_exact(format.block_bytes())
        .enumerate()
        .map(|(b, block)| {
            let (d, m, w) = weights(format, block);
            let (quants, scale, scaled_sum) = x.block(r, b);
            let products: i32 = w
                .iter()
                .zip(quants)
                .map(|(&w, &q)| i32::from(w) * i32::from(q))
                .sum();
            f64::from(d) * f64::from(scale) * f64::from(products)
                + f64::from(m) * f64::from(scaled_sum)
        })
        .sum()
}

pub(super) fn portable_dot_rows(
    format: Format,
    weight_row: &[u8],
    x: &Int8Rows,
    first: usize,
    sums: &mut [f32],
) {
    sums.fill(0.0);
    for (b, block) in weight_row.chunks(format.block_bytes()).enumerate() {
        let (d, m, w) = weights(format, block);
        for (r, sum) in sums.iter_mut().enumerate() {
            let (quants, scale, scaled_sum) = x.block(first + r, b);
            let products: i32 = w
                .iter()
                .zip(quants)
                .map(|(&w, &q)| i32::from(w) * i32::from(q))
                .sum();
            *sum += d * scale * products as f32 + m * scaled_sum;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::super::avx2::horizontal_sum;
    use super::super::{BLOCK_WEIGHTS, Format};
    use super::Int8Rows;
    use std::arch::x86_64::*;

    /// Up to this many rows share one unpacking of each block.
    const GROUP: usize = 4;

    #[target_feature(enable = "avx2,fma,f16c")]
    pub(in super::super) fn dot_rows(
        format: Format,
        weight_row: &[u8],
        x: &Int8Rows,
        first_row: usize,
        sums: &mut [f32],
    ) {
        debug_assert!(first_row + sums.len() <= x.rows());
        for (index, out) in sums.chunks_mut(GROUP).enumerate() {
            let first = first_row + index * GROUP;
            match format {
                Format::Q4_1 => group::<false>(format, weight_row, x, first, out),
                _ => group::<true>(format, weight_row, x, first, out),
            }
        }
    }

    /// The group size as a constant, so that each row's accumulator
    /// stays in a register.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    fn group<const SIGNED: bool>(
        format: Format,
        weight_row: &[u8],
        x: &Int8Rows,
        first: usize,
        out: &mut [f32],
    ) {
        match out.len() {
            1 => rows::<1, SIGNED>(format, weight_row, x, first, out),
            2 => rows::<2, SIGNED>(format, weight_row, x, first, out),
            3 => rows::<3, SIGNED>(format, weight_row, x, first, out),
            _ => rows::<GROUP, SIGNED>(format, weight_row, x, first, out),
        }
    }

    /// `G` rows from `first` against one weight row; `SIGNED` is Q5_0
    /// or Q8_0 (signed quants, no offset), otherwise Q4_1.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    fn rows<const G: usize, const SIGNED: bool>(
        format: Format,
        weight_row: &[u8],
        x: &Int8Rows,
        first: usize,
        out: &mut [f32],
    ) {
        let block_bytes = format.block_bytes();
        let ones = _mm256_set1_epi16(1);
        let mut acc = [_mm256_setzero_ps(); G];
        let mut offsets = [0f32; G];
        for (b, block) in weight_row.chunks_exact(block_bytes).enumerate() {
            super::super::avx2::prefetch(block);
            let (d, m, w) = unpack::<SIGNED>(format, block);
            for g in 0..G {
                let index = (first + g) * x.blocks_per_row + b;
                let quants = &x.quants[index * BLOCK_WEIGHTS..(index + 1) * BLOCK_WEIGHTS];
                // SAFETY: the slice holds 32 quants.
                let q = unsafe { _mm256_loadu_si256(quants.as_ptr().cast()) };
                // maddubs multiplies unsigned by signed bytes: move the
                // weights' signs onto the activations.
                let (w, q) = if SIGNED {
                    (_mm256_sign_epi8(w, w), _mm256_sign_epi8(q, w))
                } else {
                    (w, q)
                };
                let pairs = _mm256_maddubs_epi16(w, q);
                let products = _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, ones));
                let scales = _mm256_mul_ps(d, _mm256_set1_ps(x.scales[index]));
                acc[g] = _mm256_fmadd_ps(scales, products, acc[g]);
                if !SIGNED {
                    offsets[g] += m * x.sums[index];
                }
            }
        }
        for g in 0..G {
            out[g] = horizontal_sum(acc[g]) + offsets[g];
        }
    }

    /// A block's scale (in every lane), offset (0 for Q5_0 and Q8_0)
    /// and 32 weights as bytes (Q4_1: the nibbles 0..15, low ones first,
    /// as the activations).
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    fn unpack<const SIGNED: bool>(format: Format, block: &[u8]) -> (__m256, f32, __m256i) {
        // Bytes 0..4 are d and m as f16 (Q5_0 and Q8_0: d and the next
        // two bytes).
        let halves = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        let scales = _mm_cvtph_ps(_mm_cvtsi32_si128(halves as i32));
        let d = _mm256_broadcastss_ps(scales);
        if format == Format::Q5_0 {
            return (d, 0.0, super::super::avx2::q5_0_quants(block));
        }
        if SIGNED {
            // SAFETY: a Q8_0 block is 34 bytes; its quants are bytes 2..34.
            let w = unsafe { _mm256_loadu_si256(block[2..34].as_ptr().cast()) };
            return (d, 0.0, w);
        }
        let m = _mm_cvtss_f32(_mm_shuffle_ps::<1>(scales, scales));
        // SAFETY: a Q4_1 block is 20 bytes; its quants are bytes 4..20.
        let qs = unsafe { _mm_loadu_si128(block[4..20].as_ptr().cast()) };
        let mask = _mm_set1_epi8(0x0F);
        let low = _mm_and_si128(qs, mask);
        let high = _mm_and_si128(_mm_srli_epi16::<4>(qs), mask);
        (d, m, _mm256_set_m128i(high, low))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Q8_1 rows as llama.cpp quantizes them (ties away from zero), and a
    /// pass's rows, quantized in chunks across threads, as each row alone.
    #[test]
    fn rows_quantize_alike_in_a_pass_and_alone() {
        let (inputs, rows) = (20 * BLOCK_WEIGHTS, 60);
        assert!(
            rows * 20 > 2 * CHUNK_BLOCKS,
            "the pass spans several chunks"
        );
        let mut x: Vec<f32> = (0..rows * inputs)
            .map(|i| ((i * 7919 % 2003) as f32 - 1001.0) / 97.0)
            .collect();
        (x[0], x[1], x[2]) = (-127.0, 2.5, -2.5); // d = 1
        let pass = Int8Rows::quantize(&x, rows, inputs);
        assert_eq!(pass.block(0, 0).0[..3], [-127, 3, -3]);
        for r in 0..rows {
            let alone = Int8Rows::quantize(&x[r * inputs..(r + 1) * inputs], 1, inputs);
            for b in 0..20 {
                assert_eq!(pass.block(r, b), alone.block(0, b), "row {r} block {b}");
                let index = r * 20 + b;
                assert_eq!(pass.quant_sums[index], alone.quant_sums[b]);
            }
        }
    }
}
