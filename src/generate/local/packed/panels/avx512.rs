//! The 32-weight panels' product two panels at a time, in 512-bit vectors:
//! the first panel's eight rows in the low half and the next panel's in
//! the high half, put together as they are loaded, so each broadcast of an
//! activation row's four values and each multiply-add serves sixteen rows.
//! Every lane does the 256-bit kernel's arithmetic in the same order, so
//! the outputs are the same bits; the CPUs it runs on are the K-quant
//! pairs' (`kquant_panels::avx512`). Not here: the panels' layout, or which
//! passes go in pairs (`panel_rows`).

use std::arch::x86_64::*;

use super::super::super::pair_vectors::{broadcast_four, load_pair, load_pair_f16};
use super::{BLOCK_WEIGHTS, Format, PANEL, Panels, Q5_0_BYTES, Q8_0_BYTES, RowGroup, STEP, STEPS};

impl Panels {
    /// Panels `panel` and `panel + 1` against `A` rows of `rows`: row a's
    /// sixteen outputs go to `out[a · stride..]`.
    ///
    /// # Safety
    /// The CPU passes `has_pair_kernels`, `panel + 1` is a panel, and `out`
    /// holds at least (A - 1) · stride + 16 values.
    #[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
    pub(in super::super) unsafe fn pair_rows<const A: usize>(
        &self,
        panel: usize,
        rows: &RowGroup,
        out: &mut [f32],
        stride: usize,
    ) {
        let inputs = self.blocks * BLOCK_WEIGHTS;
        let RowGroup { x, first, .. } = *rows;
        assert!(first + A <= x.rows());
        assert!((panel + 2) * PANEL <= self.outputs);
        let mut acc = [_mm512_setzero_ps(); A];
        for b in 0..self.blocks {
            let index = [panel * self.blocks + b, (panel + 1) * self.blocks + b];
            let row_block: [usize; A] = std::array::from_fn(|a| (first + a) * self.blocks + b);
            let activations: [*const i8; A] = std::array::from_fn(|a| {
                x.quants[(first + a) * inputs + b * BLOCK_WEIGHTS..].as_ptr()
            });
            let products = match self.format {
                Format::Q5_0 => {
                    let offsets = std::array::from_fn(|a| 16 * x.quant_sums[row_block[a]]);
                    self.q5_0_pair::<A>(index, &activations, offsets)
                }
                _ => self.q8_0_pair::<A>(index, &activations),
            };
            // SAFETY: eight f16 scales per panel block.
            let d = unsafe {
                load_pair_f16(
                    self.d[index[0] * PANEL..].as_ptr(),
                    self.d[index[1] * PANEL..].as_ptr(),
                )
            };
            for a in 0..A {
                let scale = _mm512_set1_ps(x.scales[row_block[a]]);
                let products = _mm512_cvtepi32_ps(products[a]);
                acc[a] = _mm512_fmadd_ps(_mm512_mul_ps(d, scale), products, acc[a]);
            }
        }
        for (a, sums) in acc.iter().enumerate() {
            let out = &mut out[a * stride..a * stride + 2 * PANEL];
            // SAFETY: `out` holds the sixteen values just sliced.
            unsafe { _mm512_storeu_ps(out.as_mut_ptr(), *sums) };
        }
    }

    /// `q5_0_block` for two panels' blocks `index`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
    fn q5_0_pair<const A: usize>(
        &self,
        index: [usize; 2],
        x: &[*const i8; A],
        offsets: [i32; A],
    ) -> [__m512i; A] {
        let quants = index.map(|i| self.quants[i * Q5_0_BYTES..(i + 1) * Q5_0_BYTES].as_ptr());
        let (nibble, bit, ones) = (
            _mm512_set1_epi8(0x0F),
            _mm512_set1_epi8(0x10),
            _mm512_set1_epi16(1),
        );
        // SAFETY: five vectors of 32 bytes per panel block; each
        // activation block holds eight steps of four.
        unsafe {
            let fifth = load_pair(quants[0].add(4 * 32), quants[1].add(4 * 32));
            let mut sums: [__m512i; A] = std::array::from_fn(|a| _mm512_set1_epi32(-offsets[a]));
            for half in 0..2 {
                let mut products = [_mm512_setzero_si512(); A];
                for v in 0..4 {
                    let step = 4 * half + v;
                    let packed = load_pair(quants[0].add(32 * v), quants[1].add(32 * v));
                    let low = if half == 0 {
                        _mm512_and_si512(packed, nibble)
                    } else {
                        _mm512_and_si512(_mm512_srli_epi16::<4>(packed), nibble)
                    };
                    let w = _mm512_or_si512(low, _mm512_and_si512(fifth_bits(fifth, step), bit));
                    for a in 0..A {
                        let four = broadcast_four(x[a].add(STEP * step));
                        products[a] = _mm512_add_epi16(products[a], _mm512_maddubs_epi16(w, four));
                    }
                }
                for a in 0..A {
                    sums[a] = _mm512_add_epi32(sums[a], _mm512_madd_epi16(products[a], ones));
                }
            }
            sums
        }
    }

    /// `q8_0_block` for two panels' blocks `index`; `maddubs` needs an
    /// unsigned side, so each weight's sign moves onto the activation.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
    fn q8_0_pair<const A: usize>(&self, index: [usize; 2], x: &[*const i8; A]) -> [__m512i; A] {
        let quants = index.map(|i| self.quants[i * Q8_0_BYTES..(i + 1) * Q8_0_BYTES].as_ptr());
        let ones = _mm512_set1_epi16(1);
        let mut sums = [_mm512_setzero_si512(); A];
        for step in 0..STEPS {
            // SAFETY: eight vectors of 32 bytes per panel block, and eight
            // steps of four per activation block.
            unsafe {
                let w = load_pair(quants[0].add(32 * step), quants[1].add(32 * step));
                let negative = _mm512_movepi8_mask(w);
                let magnitudes = _mm512_abs_epi8(w);
                for a in 0..A {
                    let four = broadcast_four(x[a].add(STEP * step));
                    // sign(four, w): negated where w < 0, zero where w = 0
                    // (the magnitude is zero there too).
                    let signed = _mm512_mask_sub_epi8(four, negative, _mm512_setzero_si512(), four);
                    let pairs = _mm512_maddubs_epi16(magnitudes, signed);
                    sums[a] = _mm512_add_epi32(sums[a], _mm512_madd_epi16(pairs, ones));
                }
            }
        }
        sums
    }
}

/// Step `step`'s fifth bits at bit 4 of each byte, as the 256-bit kernel's
/// `fifth_bits`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn fifth_bits(fifth: __m512i, step: usize) -> __m512i {
    match step {
        0 => _mm512_slli_epi16::<4>(fifth),
        1 => _mm512_slli_epi16::<3>(fifth),
        2 => _mm512_slli_epi16::<2>(fifth),
        3 => _mm512_slli_epi16::<1>(fifth),
        4 => fifth,
        5 => _mm512_srli_epi16::<1>(fifth),
        6 => _mm512_srli_epi16::<2>(fifth),
        _ => _mm512_srli_epi16::<3>(fifth),
    }
}
