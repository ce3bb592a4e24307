//! The AVX2 kernels of `packed`: a weight row of Q4_1, Q5_0 or Q8_0 blocks
//! against up to a few f32 rows, each block expanded once and shared by
//! the rows. Chosen at run time where the CPU has AVX2 and FMA; the
//! portable loops in `packed` give the same sums.

use super::{BLOCK_WEIGHTS, Format};
use std::arch::x86_64::*;

/// Up to this many rows share one expansion of each block.
const GROUP: usize = 4;

/// How far ahead of the block in hand [`prefetch`] reads, in bytes.
const PREFETCH_AHEAD: usize = 2048;

#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn dot_rows(
    format: Format,
    weight_row: &[u8],
    x: &[f32],
    inputs: usize,
    sums: &mut [f32],
) {
    for (index, out) in sums.chunks_mut(GROUP).enumerate() {
        let first = index * GROUP;
        match out.len() {
            1 => rows::<1>(format, weight_row, x, inputs, first, out),
            2 => rows::<2>(format, weight_row, x, inputs, first, out),
            3 => rows::<3>(format, weight_row, x, inputs, first, out),
            _ => rows::<GROUP>(format, weight_row, x, inputs, first, out),
        }
    }
}

/// `G` rows from `first` against one weight row. `G` is a constant so
/// that the accumulators stay in registers: four per row, one per
/// vector of the block, so that consecutive FMAs do not wait on each
/// other's result.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn rows<const G: usize>(
    format: Format,
    weight_row: &[u8],
    x: &[f32],
    inputs: usize,
    first: usize,
    out: &mut [f32],
) {
    let mut acc = [[_mm256_setzero_ps(); 4]; G];
    for (b, block) in weight_row.chunks_exact(format.block_bytes()).enumerate() {
        prefetch(block);
        let w = expand(format, block);
        for g in 0..G {
            let xs = &x[(first + g) * inputs + b * BLOCK_WEIGHTS..][..BLOCK_WEIGHTS];
            for k in 0..4 {
                // SAFETY: xs holds 32 values, k * 8 + 8 <= 32.
                let xv = unsafe { _mm256_loadu_ps(xs.as_ptr().add(k * 8)) };
                acc[g][k] = _mm256_fmadd_ps(w[k], xv, acc[g][k]);
            }
        }
    }
    for g in 0..G {
        let [a, b, c, d] = acc[g];
        out[g] = horizontal_sum(_mm256_add_ps(_mm256_add_ps(a, b), _mm256_add_ps(c, d)));
    }
}

/// The block's weights in four vectors of eight: q · d (+ m), the
/// multiply and the add rounded separately as in candle's expansion.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn expand(format: Format, block: &[u8]) -> [__m256; 4] {
    // Bytes 0..4 are d and m as f16 (Q8_0: d and its first quants);
    // widening f16 to f32 is exact.
    let halves = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
    let scales = _mm_cvtph_ps(_mm_cvtsi32_si128(halves as i32));
    let d = _mm256_broadcastss_ps(scales);
    match format {
        Format::Q4_1 => {
            let m = _mm256_broadcastss_ps(_mm_shuffle_ps::<1>(scales, scales));
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
        Format::Q5_0 => {
            let q = q5_0_quants(block);
            let (low, high) = (_mm256_castsi256_si128(q), _mm256_extracti128_si256::<1>(q));
            [
                scale(_mm256_cvtepi8_epi32(low), d),
                scale(_mm256_cvtepi8_epi32(_mm_srli_si128::<8>(low)), d),
                scale(_mm256_cvtepi8_epi32(high), d),
                scale(_mm256_cvtepi8_epi32(_mm_srli_si128::<8>(high)), d),
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
        // Super-blocks are expanded by `kquants`, which `dot_rows` calls instead.
        Format::K(_) => unreachable!("a K-quant block in the 32-weight path"),
    }
}

/// A Q5_0 block's 32 weights as signed bytes (fifth bit and nibble,
/// minus 16), in order.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn q5_0_quants(block: &[u8]) -> __m256i {
    // SAFETY: a Q5_0 block is 22 bytes: the fifth bits are bytes 2..6,
    // the nibbles bytes 6..22.
    let qs = unsafe { _mm_loadu_si128(block[6..22].as_ptr().cast()) };
    let mask = _mm_set1_epi8(0x0F);
    let nibbles = _mm256_set_m128i(
        _mm_and_si128(_mm_srli_epi16::<4>(qs), mask),
        _mm_and_si128(qs, mask),
    );
    // Byte j is 0xFF where bit j of the fifth bits is set; where it is
    // clear the weight is nibble - 16, i.e. nibble | 0xF0 as i8.
    let high = u32::from_le_bytes([block[2], block[3], block[4], block[5]]);
    let spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32(high as i32),
        _mm256_set_epi64x(
            0x0303_0303_0303_0303,
            0x0202_0202_0202_0202,
            0x0101_0101_0101_0101,
            0,
        ),
    );
    let set = _mm256_cmpeq_epi8(
        _mm256_or_si256(spread, _mm256_set1_epi64x(0x7fbf_dfef_f7fb_fdfe)),
        _mm256_set1_epi64x(-1),
    );
    _mm256_or_si256(
        nibbles,
        _mm256_andnot_si256(set, _mm256_set1_epi8(0xF0u8 as i8)),
    )
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

/// Asks for the weights [`PREFETCH_AHEAD`] bytes past `block` now, so
/// that their loads overlap the arithmetic on the blocks before them.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn prefetch(block: &[u8]) {
    // A prefetch never faults, so the address may lie past the matrix.
    _mm_prefetch::<_MM_HINT_T0>(block.as_ptr().wrapping_add(PREFETCH_AHEAD).cast());
}

/// The sum of a vector's eight lanes (also the decode step's attention's).
#[target_feature(enable = "avx2,fma")]
pub(in crate::generate::local) fn horizontal_sum(v: __m256) -> f32 {
    let pair = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    let pair = _mm_add_ps(pair, _mm_movehl_ps(pair, pair));
    let one = _mm_add_ss(pair, _mm_shuffle_ps::<1>(pair, pair));
    _mm_cvtss_f32(one)
}
