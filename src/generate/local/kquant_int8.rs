//! Products of 8-bit activation rows with weight rows kept in K-quant
//! super-blocks (Q4_K, Q6_K), in integers, as llama.cpp computes them on a
//! CPU: each activation row is quantized per 256 values to its Q8_K blocks
//! (`quantize_row_q8_K_ref`: scale max/−127 kept as f32, quants rounded to
//! nearest-even, sums per 16), and a super-block's product is
//! d_x · (d · Σ_g scale_g Σ q_w q_x − dmin · Σ_g offset_g Σ q_x) over its
//! sixteen groups of 16 weights (`ggml_vec_dot_q4_K_q8_K`,
//! `ggml_vec_dot_q6_K_q8_K`).
//!
//! This is the quantized layout's arithmetic for the Qwen files: with the
//! weights' 4.5–6.6 bits per value and one multiply-add instruction per 32
//! products, a decode step costs what llama.cpp's does, where the f32
//! expansion of `kquants.rs` costs several instructions per weight. Each
//! output is computed the same way whatever the number of rows, so a
//! sequence gets the same bits alone as in a batch. Not here: the f32
//! arithmetic (`kquants.rs`) or the 32-weight formats (`packed.rs`).

use super::kquants::{KFormat, SUPER_BLOCK, half, scale_min};
use super::vector_exp::max_abs;
use rayon::prelude::*;

/// Values per group that shares one scale (and one sum of the activations).
const GROUP: usize = 16;
const GROUPS: usize = SUPER_BLOCK / GROUP;

/// Activation rows as llama.cpp's Q8_K blocks.
pub(super) struct SuperRows {
    quants: Vec<i8>,
    scales: Vec<f32>,
    /// Σ quants of each group of 16.
    group_sums: Vec<i16>,
    blocks_per_row: usize,
}

impl SuperRows {
    /// `x` holds rows of `inputs` values, a multiple of 256.
    pub(super) fn quantize(x: &[f32], inputs: usize) -> SuperRows {
        let blocks = x.len() / SUPER_BLOCK;
        let mut rows = SuperRows {
            quants: vec![0; blocks * SUPER_BLOCK],
            scales: vec![0.0; blocks],
            group_sums: vec![0; blocks * GROUPS],
            blocks_per_row: inputs / SUPER_BLOCK,
        };
        // A prompt's rows are quantized on every thread: on one, with the
        // other idle, they took 4% of a long pass.
        x.par_chunks(CHUNK_BLOCKS * SUPER_BLOCK)
            .zip(rows.quants.par_chunks_mut(CHUNK_BLOCKS * SUPER_BLOCK))
            .zip(rows.scales.par_chunks_mut(CHUNK_BLOCKS))
            .zip(rows.group_sums.par_chunks_mut(CHUNK_BLOCKS * GROUPS))
            .for_each(|(((x, quants), scales), sums)| quantize_blocks(x, quants, scales, sums));
        rows
    }

    pub(super) fn rows(&self) -> usize {
        self.scales.len() / self.blocks_per_row.max(1)
    }

    pub(super) fn blocks_per_row(&self) -> usize {
        self.blocks_per_row
    }

    /// Every block's quants, scales and group sums, block after block.
    pub(super) fn parts(&self) -> (&[i8], &[f32], &[i16]) {
        (&self.quants, &self.scales, &self.group_sums)
    }

    /// Row `r`'s block `b`: its 256 quants, scale and group sums.
    fn block(&self, r: usize, b: usize) -> (&[i8], f32, &[i16]) {
        let index = r * self.blocks_per_row + b;
        (
            &self.quants[index * SUPER_BLOCK..(index + 1) * SUPER_BLOCK],
            self.scales[index],
            &self.group_sums[index * GROUPS..(index + 1) * GROUPS],
        )
    }
}

/// Blocks per task when a pass's rows are quantized across threads.
const CHUNK_BLOCKS: usize = 64;

/// Consecutive blocks of `x` into their quants, scales and group sums.
fn quantize_blocks(x: &[f32], quants: &mut [i8], scales: &mut [f32], sums: &mut [i16]) {
    #[cfg(target_arch = "x86_64")]
    if super::packed::has_avx2_kernels() {
        // SAFETY: the features the function is compiled for were just detected.
        return unsafe { quantize_blocks_avx2(x, quants, scales, sums) };
    }
    quantize_blocks_with(x, quants, scales, sums, round_portable);
}

/// The same loop compiled for AVX2, with the vector rounding.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
fn quantize_blocks_avx2(x: &[f32], quants: &mut [i8], scales: &mut [f32], sums: &mut [i16]) {
    // The closure has this function's features, so it may call round_avx2.
    quantize_blocks_with(x, quants, scales, sums, |inverse, block, quants| {
        round_avx2(inverse, block, quants)
    });
}

/// Each block's extreme and scale, with `round(inverse, block, quants)`
/// putting its quants.
#[inline(always)]
fn quantize_blocks_with(
    x: &[f32],
    quants: &mut [i8],
    scales: &mut [f32],
    sums: &mut [i16],
    round: impl Fn(f32, &[f32], &mut [i8]),
) {
    let blocks = x
        .chunks_exact(SUPER_BLOCK)
        .zip(quants.chunks_exact_mut(SUPER_BLOCK))
        .zip(sums.chunks_exact_mut(GROUPS));
    for (((block, quants), sums), scale) in blocks.zip(scales) {
        // The value of largest magnitude, the first of equals, with its sign.
        let largest = max_abs(block);
        let extreme = block.iter().copied().find(|v| v.abs() == largest);
        let Some(extreme) = extreme.filter(|&v| v != 0.0) else {
            quants.fill(0);
            sums.fill(0);
            *scale = 0.0;
            continue;
        };
        let inverse = -127.0 / extreme;
        round(inverse, block, quants);
        for (sum, group) in sums.iter_mut().zip(quants.chunks_exact(GROUP)) {
            *sum = group.iter().map(|&q| i16::from(q)).sum();
        }
        *scale = 1.0 / inverse;
    }
}

/// Q8_K's quants: inverse · v rounded to nearest-even, at most 127.
fn round_portable(inverse: f32, block: &[f32], quants: &mut [i8]) {
    for (q, &v) in quants.iter_mut().zip(block) {
        *q = ((inverse * v).round_ties_even() as i32).min(127) as i8;
    }
}

/// [`round_portable`] eight values a vector. `as i32` made the compiler
/// convert one value at a time, with a check for NaN and the bounds each;
/// here a NaN is zeroed first, as `as` zeroes it, and |inverse · v| is at
/// most 127 (and a rounding) by the extreme's choice, so `cvtps2dq`
/// (nearest-even) and saturating packs give the same bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
fn round_avx2(inverse: f32, block: &[f32], quants: &mut [i8]) {
    use std::arch::x86_64::*;
    assert!(block.len() == SUPER_BLOCK && quants.len() == SUPER_BLOCK);
    let inverse = _mm256_set1_ps(inverse);
    let most = _mm256_set1_epi32(127);
    // packs interleaves the 128-bit halves; this puts the dwords back.
    let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (values, out) in block.chunks_exact(32).zip(quants.chunks_exact_mut(32)) {
        let rounded: [__m256i; 4] = std::array::from_fn(|i| {
            // SAFETY: 32 values per chunk.
            let v = unsafe { _mm256_loadu_ps(values.as_ptr().add(8 * i)) };
            let scaled = _mm256_mul_ps(inverse, v);
            let ordered = _mm256_cmp_ps::<_CMP_ORD_Q>(scaled, scaled);
            let scaled = _mm256_and_ps(scaled, ordered);
            _mm256_min_epi32(_mm256_cvtps_epi32(scaled), most)
        });
        let low = _mm256_packs_epi32(rounded[0], rounded[1]);
        let high = _mm256_packs_epi32(rounded[2], rounded[3]);
        let bytes = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(low, high), order);
        // SAFETY: 32 quants per chunk.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), bytes) };
    }
}

/// One super-block in integers: weight i is
/// d · scales[i / 16] · quants[i] − dmin · offsets[i / 16].
#[derive(Clone, Copy)]
pub(super) struct Unpacked {
    /// Unsigned: 0..15 (Q4_K) or 0..63 (Q6_K, whose −32 is in the offsets).
    pub(super) quants: [u8; SUPER_BLOCK],
    pub(super) header: Header,
}

/// A super-block's d, dmin and per-group scales and offsets.
#[derive(Clone, Copy)]
pub(super) struct Header {
    pub(super) scales: [i16; GROUPS],
    pub(super) offsets: [i16; GROUPS],
    pub(super) d: f32,
    pub(super) dmin: f32,
}

impl Header {
    pub(super) fn new(format: KFormat, block: &[u8]) -> Header {
        let mut header = Header {
            scales: [0; GROUPS],
            offsets: [0; GROUPS],
            d: 0.0,
            dmin: 0.0,
        };
        match format {
            // Sub-block j (32 weights) has scale and min j.
            KFormat::Q4K => {
                (header.d, header.dmin) = (half(&block[0..2]), half(&block[2..4]));
                for j in 0..8 {
                    let (scale, min) = scale_min(j, &block[4..16]);
                    header.scales[2 * j..2 * j + 2].fill(i16::from(scale));
                    header.offsets[2 * j..2 * j + 2].fill(i16::from(min));
                }
            }
            // Group g has signed scale g; the quants' −32 is the offset
            // 32 · scale in units of d.
            KFormat::Q6K => {
                for (g, &scale) in block[192..208].iter().enumerate() {
                    header.scales[g] = i16::from(scale as i8);
                    header.offsets[g] = 32 * i16::from(scale as i8);
                }
                header.d = half(&block[208..210]);
                header.dmin = header.d;
            }
        }
        header
    }
}

impl Unpacked {
    pub(super) fn new(format: KFormat, block: &[u8]) -> Unpacked {
        let mut unpacked = Unpacked {
            quants: [0; SUPER_BLOCK],
            header: Header::new(format, block),
        };
        match format {
            KFormat::Q4K => unpacked.fill_q4k(block),
            KFormat::Q6K => unpacked.fill_q6k(block),
        }
        unpacked
    }

    /// Nibbles as `expand_q4k`.
    fn fill_q4k(&mut self, block: &[u8]) {
        for (pair, q) in block[16..144].chunks_exact(32).enumerate() {
            for (l, &byte) in q.iter().enumerate() {
                self.quants[pair * 64 + l] = byte & 0x0F;
                self.quants[pair * 64 + 32 + l] = byte >> 4;
            }
        }
    }

    /// The 6-bit quants as `expand_q6k`.
    fn fill_q6k(&mut self, block: &[u8]) {
        let (ql, qh) = (&block[0..128], &block[128..192]);
        for h in 0..2 {
            let (ql, qh) = (&ql[64 * h..], &qh[32 * h..]);
            let out = &mut self.quants[128 * h..128 * h + 128];
            for l in 0..32 {
                out[l] = (ql[l] & 0xF) | ((qh[l] & 3) << 4);
                out[l + 32] = (ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4);
                out[l + 64] = (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4);
                out[l + 96] = (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4);
            }
        }
    }

    /// (Σ_g scale_g Σ q_w q_x, Σ_g offset_g Σ q_x) against one block of a row.
    pub(super) fn integer_sums(&self, quants: &[i8], group_sums: &[i16]) -> (i32, i32) {
        let mut scaled = 0i32;
        for (g, scale) in self.header.scales.iter().enumerate() {
            let products: i32 = self.quants[g * GROUP..(g + 1) * GROUP]
                .iter()
                .zip(&quants[g * GROUP..(g + 1) * GROUP])
                .map(|(&w, &x)| i32::from(w) * i32::from(x))
                .sum();
            scaled += i32::from(*scale) * products;
        }
        let offset = self
            .header
            .offsets
            .iter()
            .zip(group_sums)
            .map(|(&o, &s)| i32::from(o) * i32::from(s))
            .sum();
        (scaled, offset)
    }
}

/// One weight row (as super-blocks) against the quantized rows from
/// `first`, one per sum.
pub(super) fn dot_rows(
    format: KFormat,
    weight_row: &[u8],
    x: &SuperRows,
    first: usize,
    sums: &mut [f32],
) {
    debug_assert!(first + sums.len() <= x.rows());
    #[cfg(target_arch = "x86_64")]
    if super::packed::has_avx2_kernels() {
        // SAFETY: the features the function is compiled for were just detected.
        unsafe { avx2::dot_rows(format, weight_row, x, first, sums) };
        return;
    }
    portable_dot_rows(format, weight_row, x, first, sums);
}

pub(super) fn portable_dot_rows(
    format: KFormat,
    weight_row: &[u8],
    x: &SuperRows,
    first: usize,
    sums: &mut [f32],
) {
    sums.fill(0.0);
    for (b, block) in weight_row.chunks_exact(format.block_bytes()).enumerate() {
        let w = Unpacked::new(format, block);
        for (r, sum) in sums.iter_mut().enumerate() {
            let (quants, scale, group_sums) = x.block(first + r, b);
            let (scaled, offset) = w.integer_sums(quants, group_sums);
            let Header { d, dmin, .. } = w.header;
            *sum += scale * d * scaled as f32 - scale * dmin * offset as f32;
        }
    }
}

/// Row `r` of `x` against a weight row, summed exactly in f64 from the
/// same integers: the kernels' oracle.
#[cfg(test)]
pub(super) fn exact_dot(format: KFormat, weight_row: &[u8], x: &SuperRows, r: usize) -> f64 {
    weight_row
        .chunks_exact(format.block_bytes())
        .enumerate()
        .map(|(b, block)| {
            let w = Unpacked::new(format, block);
            let (quants, scale, group_sums) = x.block(r, b);
            let (scaled, offset) = w.integer_sums(quants, group_sums);
            f64::from(scale)
                * (f64::from(w.header.d) * f64::from(scaled)
                    - f64::from(w.header.dmin) * f64::from(offset))
        })
        .sum()
}

/// One weight row against every row through the AVX2 kernel, or None
/// where this CPU lacks it: the tests hold it to the oracle beside the
/// portable path.
#[cfg(all(test, target_arch = "x86_64"))]
pub(super) fn simd_dot_rows(format: KFormat, weight_row: &[u8], x: &SuperRows) -> Option<Vec<f32>> {
    let mut sums = vec![0f32; x.rows()];
    // SAFETY: the kernel's features were just detected.
    super::packed::has_avx2_kernels()
        .then(|| unsafe { avx2::dot_rows(format, weight_row, x, 0, &mut sums) })?;
    Some(sums)
}

#[cfg(target_arch = "x86_64")]
mod avx2;

#[cfg(test)]
mod tests {
    use super::*;

    /// The vector rounding gives the portable one's bytes, a NaN's too.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn vector_rounding_is_the_portable_rounding() {
        if !super::super::packed::has_avx2_kernels() {
            println!("skipped: this CPU has no AVX2, so there is no vector rounding");
            return;
        }
        let mut block: Vec<f32> = (0..SUPER_BLOCK)
            .map(|i| (i as f32 - 128.0) / 2.0 + 0.25 * (i % 3) as f32)
            .collect();
        (block[0], block[1], block[2]) = (f32::NAN, 127.0, -127.5);
        for inverse in [-127.0 / 127.5, 1.0, -0.37] {
            let (mut vector, mut portable) = ([0i8; SUPER_BLOCK], [0i8; SUPER_BLOCK]);
            // SAFETY: AVX2 was just detected.
            unsafe { round_avx2(inverse, &block, &mut vector) };
            round_portable(inverse, &block, &mut portable);
            assert_eq!(vector, portable, "inverse {inverse}");
        }
    }

    /// A pass's rows, quantized in chunks across threads, get what each
    /// row gets alone; the extreme is the first of equal magnitudes, with
    /// its sign.
    #[test]
    fn rows_quantize_alike_in_a_pass_and_alone() {
        let (inputs, rows) = (3 * SUPER_BLOCK, 50);
        assert!(rows * 3 > 2 * CHUNK_BLOCKS, "the pass spans several chunks");
        let mut x: Vec<f32> = (0..rows * inputs)
            .map(|i| ((i * 7919 % 2003) as f32 - 1001.0) / 97.0)
            .collect();
        (x[10], x[20]) = (-200.0, 200.0);
        let pass = SuperRows::quantize(&x, inputs);
        assert_eq!(pass.block(0, 0).1, -200.0 / -127.0);
        for r in 0..rows {
            let alone = SuperRows::quantize(&x[r * inputs..(r + 1) * inputs], inputs);
            for b in 0..3 {
                assert_eq!(pass.block(r, b), alone.block(0, b), "row {r} block {b}");
            }
        }
    }

    /// Q8_K quantization as llama.cpp's reference: the extreme value maps
    /// to −127, ties go to even, and the group sums are the quants' sums.
    #[test]
    fn activations_are_quantized_as_llama_cpp_q8_k() {
        let mut x: Vec<f32> = (0..2 * SUPER_BLOCK)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 10.0)
            .collect();
        x[3] = 127.0; // the first block's extreme: scale 127 / −127 = −1
        x[5] = 2.5; // a tie: −2.5 rounds to −2, not −3
        x[6] = 3.5; // and −3.5 to −4
        x[SUPER_BLOCK..].fill(0.0);
        let rows = SuperRows::quantize(&x, 2 * SUPER_BLOCK);
        let (quants, scale, sums) = rows.block(0, 0);
        assert_eq!(scale, -1.0);
        assert_eq!((quants[3], quants[5], quants[6]), (-127, -2, -4));
        for (g, &s) in sums.iter().enumerate() {
            let want: i16 = quants[g * 16..(g + 1) * 16]
                .iter()
                .map(|&q| i16::from(q))
                .sum();
            assert_eq!(s, want);
        }
        let (quants, scale, sums) = rows.block(0, 1);
        assert_eq!(scale, 0.0);
        assert!(quants.iter().all(|&q| q == 0) && sums.iter().all(|&s| s == 0));
    }
}
