//! Decode-step products of f32 activation rows with weight rows kept in
//! llama.cpp's K-quant super-blocks (Q4_K and Q6_K, 256 weights each), the
//! formats of Qwen2.5-Coder's Q4_K_M files.
//!
//! Each super-block is expanded to f32 exactly as candle's dequantization
//! expands it (the same products, rounded in the same order), so these
//! products use the same weight values as the dense f32 GEMM of a pass over
//! a prompt and differ from it only in the order of the sums. The expansion
//! and the dot product are plain loops that the compiler vectorizes: on
//! x86-64 they are compiled a second time with AVX2 and FMA, picked at run
//! time. Not here: the 32-weight formats (`packed.rs`, which dispatches
//! here) or 8-bit activations (a K-quant matrix in the quantized layout is
//! candle's `QMatMul`).

use half::f16;

/// Weights per super-block.
pub(super) const SUPER_BLOCK: usize = 256;
/// Bytes per super-block: d, dmin (f16), 12 bytes of 6-bit scales and
/// mins, 128 bytes of nibbles.
pub(super) const Q4_K_BYTES: usize = 144;
/// Bytes per super-block: 128 bytes of low nibbles, 64 of high bit pairs,
/// 16 signed scales, d (f16).
pub(super) const Q6_K_BYTES: usize = 210;

/// The two K-quant layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum KFormat {
    Q4K,
    Q6K,
}

impl KFormat {
    pub(super) fn block_bytes(self) -> usize {
        match self {
            KFormat::Q4K => Q4_K_BYTES,
            KFormat::Q6K => Q6_K_BYTES,
        }
    }
}

/// One weight row (as super-blocks) against every row of `x` (`inputs`
/// values each): `sums[r]` = Σ w · x[r].
pub(super) fn dot_rows(
    format: KFormat,
    weight_row: &[u8],
    x: &[f32],
    inputs: usize,
    sums: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    if super::packed::has_avx2_kernels() {
        // SAFETY: the features the function is compiled for were just detected.
        unsafe { dot_rows_avx2(format, weight_row, x, inputs, sums) };
        return;
    }
    dot_rows_portable(format, weight_row, x, inputs, sums);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
fn dot_rows_avx2(format: KFormat, weight_row: &[u8], x: &[f32], inputs: usize, sums: &mut [f32]) {
    dot_rows_inline(format, weight_row, x, inputs, sums);
}

pub(super) fn dot_rows_portable(
    format: KFormat,
    weight_row: &[u8],
    x: &[f32],
    inputs: usize,
    sums: &mut [f32],
) {
    dot_rows_inline(format, weight_row, x, inputs, sums);
}

/// The shared body, inlined into each caller so that it is vectorized with
/// the caller's target features.
#[inline(always)]
fn dot_rows_inline(format: KFormat, weight_row: &[u8], x: &[f32], inputs: usize, sums: &mut [f32]) {
    sums.fill(0.0);
    let mut w = [0f32; SUPER_BLOCK];
    for (b, block) in weight_row.chunks_exact(format.block_bytes()).enumerate() {
        match format {
            KFormat::Q4K => expand_q4k(block, &mut w),
            KFormat::Q6K => expand_q6k(block, &mut w),
        }
        for (r, sum) in sums.iter_mut().enumerate() {
            let xs = &x[r * inputs + b * SUPER_BLOCK..][..SUPER_BLOCK];
            *sum += dot(&w, xs);
        }
    }
}

/// Σ w·x in sixteen lanes (two independent chains of eight).
#[inline(always)]
fn dot(w: &[f32; SUPER_BLOCK], x: &[f32]) -> f32 {
    let mut lanes = [0f32; 16];
    for (w, x) in w.chunks_exact(16).zip(x.chunks_exact(16)) {
        for l in 0..16 {
            lanes[l] += w[l] * x[l];
        }
    }
    lanes.iter().sum()
}

pub(super) fn half(bytes: &[u8]) -> f32 {
    f16::from_le_bytes([bytes[0], bytes[1]]).to_f32()
}

/// The 6-bit scale and min of sub-block `j` (of 8), as llama.cpp packs them.
#[inline(always)]
pub(super) fn scale_min(j: usize, scales: &[u8]) -> (u8, u8) {
    if j < 4 {
        (scales[j] & 63, scales[j + 4] & 63)
    } else {
        (
            (scales[j + 4] & 0x0F) | ((scales[j - 4] >> 6) << 4),
            (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4),
        )
    }
}

/// A Q4_K super-block: per 32 weights, d·scale · nibble − dmin·min.
#[inline(always)]
pub(super) fn expand_q4k(block: &[u8], w: &mut [f32; SUPER_BLOCK]) {
    let (d, dmin) = (half(&block[0..2]), half(&block[2..4]));
    let scales = &block[4..16];
    let qs = &block[16..144];
    for pair in 0..4 {
        let q = &qs[pair * 32..pair * 32 + 32];
        let (sc, m) = scale_min(2 * pair, scales);
        let (d1, m1) = (d * f32::from(sc), dmin * f32::from(m));
        let (sc, m) = scale_min(2 * pair + 1, scales);
        let (d2, m2) = (d * f32::from(sc), dmin * f32::from(m));
        let out = &mut w[pair * 64..pair * 64 + 64];
        for (l, &byte) in q.iter().enumerate() {
            out[l] = d1 * f32::from(byte & 0x0F) - m1;
            out[l + 32] = d2 * f32::from(byte >> 4) - m2;
        }
    }
}

/// A Q6_K super-block: per 16 weights, d · scale · (6-bit quant − 32).
#[inline(always)]
pub(super) fn expand_q6k(block: &[u8], w: &mut [f32; SUPER_BLOCK]) {
    let (ql, qh) = (&block[0..128], &block[128..192]);
    let scales = &block[192..208];
    let d = half(&block[208..210]);
    for half_block in 0..2 {
        let ql = &ql[64 * half_block..];
        let qh = &qh[32 * half_block..];
        let sc = &scales[8 * half_block..];
        let out = &mut w[128 * half_block..128 * half_block + 128];
        for l in 0..32 {
            let is = l / 16;
            let q1 = ((ql[l] & 0xF) | ((qh[l] & 3) << 4)) as i8 - 32;
            let q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) as i8 - 32;
            let q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) as i8 - 32;
            let q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) as i8 - 32;
            let scale = |k: usize| f32::from(sc[is + k] as i8);
            out[l] = d * scale(0) * f32::from(q1);
            out[l + 32] = d * scale(2) * f32::from(q2);
            out[l + 64] = d * scale(4) * f32::from(q3);
            out[l + 96] = d * scale(6) * f32::from(q4);
        }
    }
}
