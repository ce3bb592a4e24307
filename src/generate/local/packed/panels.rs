//! Q5_0 and Q8_0 weight matrices repacked into panels of eight weight
//! rows, for the 8-bit products of the mixed and quantized layouts on a
//! CPU with AVX2 (the 32-weight counterpart of `kquant_panels`). For each
//! four weights of a block, the eight rows' values lie side by side in one
//! 32-byte vector, so one multiply-add with an activation row's four 8-bit
//! values repeated gives the eight outputs' partial sums in lanes, with no
//! horizontal sum.
//!
//! - Q5_0 keeps each weight as its unsigned 5-bit code u = w + 16: the low
//!   nibbles of two steps share a byte and a block's fifth bits one vector,
//!   0.625 bytes per weight with the scales as f16 (the GGUF block's 0.6875).
//!   Four steps' products (at most 4 · 2 · 31 · 127) add up in i16, and the
//!   16 · Σ q_x that the codes' offset adds is taken off per block.
//! - Q8_0 keeps the signed bytes; `maddubs` needs an unsigned side, so each
//!   weight's sign moves onto the activation, as llama.cpp does.
//!
//! The integer sum of each block is the row kernel's (`int8.rs`); only the
//! order of the f32 sums over a row's blocks differs. Every 8-bit product
//! of a matrix with panels goes through them, so a row gets the same bits
//! alone as in a batch. Not here: the split over threads (`panel_rows`),
//! the activations' quantization (`Int8Rows`), the K-quants.

use std::arch::x86_64::*;

use rayon::prelude::*;

use super::super::panel_rows::{self, PANEL, broadcast_four};
use super::{BLOCK_WEIGHTS, Format, Int8Rows};

mod avx512;

/// Weights per vector of one row, and vectors per block.
const STEP: usize = 4;
const STEPS: usize = BLOCK_WEIGHTS / STEP;
/// Bytes per panel block: Q5_0 four vectors of nibbles and one of fifth
/// bits, Q8_0 one vector per step.
const Q5_0_BYTES: usize = 5 * 32;
const Q8_0_BYTES: usize = STEPS * 32;

/// Up to four quantized activation rows on their way through the panels:
/// their quantized form (quants, scales, integer sums) from row `first`.
pub(in super::super) struct RowGroup<'a> {
    x: &'a Int8Rows,
    first: usize,
    count: usize,
}

/// A Q5_0 or Q8_0 weight matrix as panels, panel by panel and block by block.
pub(in super::super) struct Panels {
    format: Format,
    outputs: usize,
    blocks: usize,
    quants: Vec<u8>,
    /// The eight rows' block scales as f16 bits.
    d: Vec<u16>,
}

impl Panels {
    /// The panels of `outputs` weight rows of GGUF `blocks`; None for
    /// other formats, where the rows do not fill whole panels, or where
    /// the CPU lacks AVX2.
    pub(super) fn new(format: Format, blocks: &[u8], outputs: usize) -> Option<Panels> {
        let panel_bytes = match format {
            Format::Q5_0 => Q5_0_BYTES,
            Format::Q8_0 => Q8_0_BYTES,
            _ => return None,
        };
        if blocks.is_empty()
            || outputs == 0
            || !outputs.is_multiple_of(PANEL)
            || !super::has_avx2_kernels()
        {
            return None;
        }
        let row_bytes = blocks.len() / outputs;
        let per_row = row_bytes / format.block_bytes();
        let count = outputs / PANEL * per_row;
        let mut panels = Panels {
            format,
            outputs,
            blocks: per_row,
            quants: vec![0; count * panel_bytes],
            d: vec![0; count * PANEL],
        };
        // Panel by panel across threads: Qwen 0.5B's output matrix alone
        // is 136M weights.
        panels
            .quants
            .par_chunks_mut(per_row * panel_bytes)
            .zip(panels.d.par_chunks_mut(per_row * PANEL))
            .enumerate()
            .for_each(|(panel, (quants, d))| {
                for r in 0..PANEL {
                    let o = panel * PANEL + r;
                    let row = &blocks[o * row_bytes..(o + 1) * row_bytes];
                    for (b, block) in row.chunks_exact(format.block_bytes()).enumerate() {
                        d[b * PANEL + r] = u16::from_le_bytes([block[0], block[1]]);
                        let weights = super::int8::weights(format, block).2;
                        put(
                            format,
                            &mut quants[b * panel_bytes..][..panel_bytes],
                            r,
                            &weights,
                        );
                    }
                }
            });
        Some(panels)
    }

    /// x · Wᵀ for the quantized rows of `x`, split as `panel_rows` splits it.
    pub(super) fn matmul(&self, x: &Int8Rows) -> Vec<f32> {
        assert_eq!(x.blocks_per_row, self.blocks, "x is not rows × inputs");
        panel_rows::matmul(self, x.rows(), self.outputs, |first, count| RowGroup {
            x,
            first,
            count,
        })
    }

    /// Σ w · q_x per row of a Q5_0 panel block, in i32 lanes: the codes'
    /// products less `offsets[a]` = 16 · Σ q_x.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    fn q5_0_block<const A: usize>(
        &self,
        index: usize,
        x: &[*const i8; A],
        offsets: [i32; A],
    ) -> [__m256i; A] {
        let quants = self.quants[index * Q5_0_BYTES..(index + 1) * Q5_0_BYTES].as_ptr();
        let (nibble, bit, ones) = (
            _mm256_set1_epi8(0x0F),
            _mm256_set1_epi8(0x10),
            _mm256_set1_epi16(1),
        );
        // SAFETY: five vectors of 32 bytes per panel block; each
        // activation block holds eight steps of four.
        unsafe {
            let fifth = _mm256_loadu_si256(quants.add(4 * 32).cast());
            let mut sums: [__m256i; A] = std::array::from_fn(|a| _mm256_set1_epi32(-offsets[a]));
            for half in 0..2 {
                let mut products = [_mm256_setzero_si256(); A];
                for v in 0..4 {
                    let step = 4 * half + v;
                    let packed = _mm256_loadu_si256(quants.add(32 * v).cast());
                    let low = if half == 0 {
                        _mm256_and_si256(packed, nibble)
                    } else {
                        _mm256_and_si256(_mm256_srli_epi16::<4>(packed), nibble)
                    };
                    let w = _mm256_or_si256(low, _mm256_and_si256(fifth_bits(fifth, step), bit));
                    for a in 0..A {
                        let four = broadcast_four(x[a].add(STEP * step));
                        products[a] = _mm256_add_epi16(products[a], _mm256_maddubs_epi16(w, four));
                    }
                }
                for a in 0..A {
                    sums[a] = _mm256_add_epi32(sums[a], _mm256_madd_epi16(products[a], ones));
                }
            }
            sums
        }
    }

    /// Σ w · q_x per row of a Q8_0 panel block, in i32 lanes.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    fn q8_0_block<const A: usize>(&self, index: usize, x: &[*const i8; A]) -> [__m256i; A] {
        let quants = self.quants[index * Q8_0_BYTES..(index + 1) * Q8_0_BYTES].as_ptr();
        let ones = _mm256_set1_epi16(1);
        let mut sums = [_mm256_setzero_si256(); A];
        for step in 0..STEPS {
            // SAFETY: eight vectors of 32 bytes per panel block, and eight
            // steps of four per activation block.
            unsafe {
                let w = _mm256_loadu_si256(quants.add(32 * step).cast());
                let magnitudes = _mm256_sign_epi8(w, w);
                for a in 0..A {
                    let four = broadcast_four(x[a].add(STEP * step));
                    let pairs = _mm256_maddubs_epi16(magnitudes, _mm256_sign_epi8(four, w));
                    sums[a] = _mm256_add_epi32(sums[a], _mm256_madd_epi16(pairs, ones));
                }
            }
        }
        sums
    }
}

/// Step `step`'s fifth bits, moved to bit 4 of each byte. Shifting 16-bit
/// lanes by at most four places keeps each byte's bit 4 within that byte.
#[inline]
#[target_feature(enable = "avx2")]
fn fifth_bits(fifth: __m256i, step: usize) -> __m256i {
    match step {
        0 => _mm256_slli_epi16::<4>(fifth),
        1 => _mm256_slli_epi16::<3>(fifth),
        2 => _mm256_slli_epi16::<2>(fifth),
        3 => _mm256_slli_epi16::<1>(fifth),
        4 => fifth,
        5 => _mm256_srli_epi16::<1>(fifth),
        6 => _mm256_srli_epi16::<2>(fifth),
        _ => _mm256_srli_epi16::<3>(fifth),
    }
}

/// Row `r`'s 32 weights `w` (signed, as `int8::weights` gives them) into
/// its lanes of one panel block's `quants`.
fn put(format: Format, quants: &mut [u8], r: usize, w: &[i8; BLOCK_WEIGHTS]) {
    for step in 0..STEPS {
        for k in 0..STEP {
            let (lane, weight) = (STEP * r + k, w[STEP * step + k]);
            if format == Format::Q8_0 {
                quants[32 * step + lane] = weight as u8;
                continue;
            }
            let code = (i16::from(weight) + 16) as u8;
            quants[32 * (step % 4) + lane] |= (code & 0x0F) << (4 * (step / 4));
            quants[4 * 32 + lane] |= (code >> 4) << step;
        }
    }
}

impl<'a> panel_rows::Kernel<'a> for Panels {
    type Rows = RowGroup<'a>;

    fn count(rows: &Self::Rows) -> usize {
        rows.count
    }

    fn pairs(&self) -> bool {
        super::super::pair_vectors::has_pair_kernels()
    }

    #[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
    unsafe fn pair_rows<const A: usize>(
        &self,
        panel: usize,
        rows: &Self::Rows,
        out: &mut [f32],
        stride: usize,
    ) {
        // SAFETY: the caller's, which are the paired kernel's.
        unsafe { Panels::pair_rows::<A>(self, panel, rows, out, stride) }
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn rows<const A: usize>(
        &self,
        panel: usize,
        rows: &Self::Rows,
        out: &mut [f32],
        stride: usize,
    ) {
        let inputs = self.blocks * BLOCK_WEIGHTS;
        let RowGroup { x, first, .. } = *rows;
        assert!(first + A <= x.rows());
        let mut acc = [_mm256_setzero_ps(); A];
        for b in 0..self.blocks {
            let index = panel * self.blocks + b;
            // Block b of each row, as an index into the activations' blocks.
            let row_block: [usize; A] = std::array::from_fn(|a| (first + a) * self.blocks + b);
            let activations: [*const i8; A] = std::array::from_fn(|a| {
                x.quants[(first + a) * inputs + b * BLOCK_WEIGHTS..].as_ptr()
            });
            let products = match self.format {
                Format::Q5_0 => {
                    let offsets = std::array::from_fn(|a| 16 * x.quant_sums[row_block[a]]);
                    self.q5_0_block::<A>(index, &activations, offsets)
                }
                _ => self.q8_0_block::<A>(index, &activations),
            };
            // SAFETY: eight f16 scales per panel block.
            let d = unsafe {
                _mm256_cvtph_ps(_mm_loadu_si128(self.d.as_ptr().add(index * PANEL).cast()))
            };
            for a in 0..A {
                let scale = _mm256_set1_ps(x.scales[row_block[a]]);
                let products = _mm256_cvtepi32_ps(products[a]);
                acc[a] = _mm256_fmadd_ps(_mm256_mul_ps(d, scale), products, acc[a]);
            }
        }
        for (a, sums) in acc.iter().enumerate() {
            // SAFETY: `out` holds eight values from a · stride (asserted by
            // the caller).
            unsafe { _mm256_storeu_ps(out[a * stride..].as_mut_ptr(), *sums) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Activations, PackedMatrix};
    use super::*;
    use candle_core::quantized::{GgmlDType, QTensor};
    use candle_core::{Device, Tensor};

    /// The panels give the exact sums of the row kernel's integers for
    /// every output and row: three and four panels and 71 rows, so that a
    /// pass goes by groups of four and a remainder while each row alone
    /// goes unit by unit; and a row alone gets the bits it gets in the
    /// batch. With pairs of panels, three panels compare the paired
    /// kernel's bits (a pass) with the single one's (a row alone, as an
    /// odd count of panels does not pair up), and four pair up both ways.
    #[test]
    fn panels_give_the_row_kernels_integer_sums_alone_as_in_a_batch() {
        let (inputs, rows) = (5 * BLOCK_WEIGHTS, 71);
        if !super::super::has_avx2_kernels() {
            println!("skipped: this CPU has no AVX2, so there are no panels");
            return;
        }
        if !super::super::super::pair_vectors::has_pair_kernels() {
            println!("pairs of panels not run: this CPU is not an Intel one with AVX-512");
        }
        for (dtype, outputs) in [GgmlDType::Q5_0, GgmlDType::Q8_0]
            .into_iter()
            .flat_map(|dtype| [(dtype, 3 * PANEL), (dtype, 4 * PANEL)])
        {
            let values: Vec<f32> = (0..outputs * inputs)
                .map(|i| ((i * 7919 % 1000) as f32 / 500.0 - 1.0) * 0.3)
                .collect();
            let t = Tensor::from_vec(values, (outputs, inputs), &Device::Cpu).unwrap();
            let q = QTensor::quantize(&t, dtype).unwrap();
            let packed = PackedMatrix::from_qtensor(&q).unwrap().with_panels();
            let x: Vec<f32> = (0..rows * inputs)
                .map(|i| ((i * 31 % 97) as f32 / 48.0) - 1.0)
                .collect();
            let y = packed.matmul(&x, rows, Activations::Int8);
            let quantized = Int8Rows::quantize(&x, rows, inputs);
            let row_bytes = packed.blocks.len() / outputs;
            for o in 0..outputs {
                let weight_row = &packed.blocks[o * row_bytes..(o + 1) * row_bytes];
                for r in 0..rows {
                    let exact =
                        super::super::int8::exact_dot(packed.format, weight_row, &quantized, r);
                    let got = f64::from(y[r * outputs + o]);
                    assert!(
                        (got - exact).abs() < 1e-5 * (1.0 + exact.abs()),
                        "{dtype:?} ({r}, {o}): {got} vs {exact}"
                    );
                }
            }
            for r in 0..rows {
                let alone = packed.matmul(&x[r * inputs..(r + 1) * inputs], 1, Activations::Int8);
                assert_eq!(
                    alone,
                    y[r * outputs..(r + 1) * outputs],
                    "{dtype:?} row {r}"
                );
            }
        }
    }
}
