//! The K-quant panels' product two panels at a time, in 512-bit vectors:
//! sixteen weight rows to a vector, the first panel's eight in the low
//! half and the next panel's in the high half, so each broadcast of an
//! activation row's four values and each multiply-add serves sixteen rows.
//! The panels stay as they are stored; the halves are put together as
//! they are loaded. Every lane does the 256-bit kernel's arithmetic in
//! the same order, so the outputs are the same bits. Only for the CPUs
//! that `pair_vectors::has_pair_kernels` names.
//! Not here: the panels' layout, or which passes go in pairs (`panel_rows`).

use std::arch::x86_64::*;

use super::super::pair_vectors::{broadcast_four, join, load_pair, load_pair_ps};
use super::{
    KFormat, PANEL, Panels, Q4K_BYTES, Q4K_OFFSET_BYTES, Q4K_SCALE_BYTES, Q6K_BYTES,
    Q6K_SCALE_BYTES, RowGroup, STEP, SUPER_BLOCK, widen_interleaved, widen_twice,
};

impl Panels {
    /// Panels `panel` and `panel + 1` against `A` rows of `rows`: row a's
    /// sixteen outputs go to `out[a · stride..]`, as the 256-bit kernel
    /// would write each panel's eight.
    ///
    /// # Safety
    /// The CPU passes `has_pair_kernels`, `panel + 1` is a panel, and
    /// `out` holds at least (A - 1) · stride + 16 values.
    #[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
    pub(in super::super) unsafe fn pair_rows<const A: usize>(
        &self,
        panel: usize,
        rows: &RowGroup,
        out: &mut [f32],
        stride: usize,
    ) {
        let RowGroup { x, first, .. } = *rows;
        let inputs = self.blocks * SUPER_BLOCK;
        assert!(first + A <= x.rows());
        assert!((panel + 2) * PANEL <= self.outputs);
        let (quants, scales, group_sums) = x.parts();
        let mut acc = [_mm512_setzero_ps(); A];
        for b in 0..self.blocks {
            let index = [panel * self.blocks + b, (panel + 1) * self.blocks + b];
            let row_block: [usize; A] = std::array::from_fn(|a| (first + a) * self.blocks + b);
            let activations: [*const i8; A] =
                std::array::from_fn(|a| quants[(first + a) * inputs + b * SUPER_BLOCK..].as_ptr());
            let products = match self.format {
                KFormat::Q4K => self.q4k_pair::<A>(index, &activations),
                KFormat::Q6K => self.q6k_pair::<A>(index, &activations),
            };
            let offsets = self.offset_pair::<A>(
                index,
                std::array::from_fn(|a| &group_sums[row_block[a] * 16..]),
            );
            // SAFETY: eight d and dmin per panel block.
            let (d, dmin) = unsafe {
                (
                    load_pair_ps(
                        self.d[index[0] * PANEL..].as_ptr(),
                        self.d[index[1] * PANEL..].as_ptr(),
                    ),
                    load_pair_ps(
                        self.dmin[index[0] * PANEL..].as_ptr(),
                        self.dmin[index[1] * PANEL..].as_ptr(),
                    ),
                )
            };
            for a in 0..A {
                let scale = _mm512_set1_ps(scales[row_block[a]]);
                let products = _mm512_cvtepi32_ps(products[a]);
                acc[a] = _mm512_fmadd_ps(_mm512_mul_ps(d, scale), products, acc[a]);
                let offsets = _mm512_cvtepi32_ps(offsets[a]);
                acc[a] = _mm512_fnmadd_ps(_mm512_mul_ps(dmin, scale), offsets, acc[a]);
            }
        }
        for (a, sums) in acc.iter().enumerate() {
            let out = &mut out[a * stride..a * stride + 2 * PANEL];
            // SAFETY: `out` holds the sixteen values just sliced.
            unsafe { _mm512_storeu_ps(out.as_mut_ptr(), *sums) };
        }
    }

    /// `q4k_block` for two panels' blocks `index`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
    fn q4k_pair<const A: usize>(&self, index: [usize; 2], x: &[*const i8; A]) -> [__m512i; A] {
        let quants = index.map(|i| self.quants[i * Q4K_BYTES..(i + 1) * Q4K_BYTES].as_ptr());
        let scales = index.map(|i| self.scales[i * Q4K_SCALE_BYTES..][..Q4K_SCALE_BYTES].as_ptr());
        let mask = _mm512_set1_epi8(0x0F);
        let mut sums = [_mm512_setzero_si512(); A];
        for sub in 0..8 {
            let (pair, high) = (sub / 2, sub % 2 == 1);
            let mut products = [_mm512_setzero_si512(); A];
            for step in 0..8 {
                let at = 32 * (8 * pair + step);
                // SAFETY: 32 vectors of 32 bytes per panel block; each
                // activation block holds 64 steps of four.
                unsafe {
                    let v = load_pair(quants[0].add(at), quants[1].add(at));
                    let w = if high {
                        _mm512_and_si512(_mm512_srli_epi16::<4>(v), mask)
                    } else {
                        _mm512_and_si512(v, mask)
                    };
                    for a in 0..A {
                        let four = broadcast_four(x[a].add(STEP * (8 * sub + step)));
                        let p = _mm512_maddubs_epi16(w, four);
                        products[a] = _mm512_add_epi16(products[a], p);
                    }
                }
            }
            // SAFETY: eight sub-blocks' eight scales per panel block.
            let s = unsafe {
                join(
                    widen_twice(scales[0].add(PANEL * sub)),
                    widen_twice(scales[1].add(PANEL * sub)),
                )
            };
            for a in 0..A {
                sums[a] = _mm512_add_epi32(sums[a], _mm512_madd_epi16(products[a], s));
            }
        }
        sums
    }

    /// `q6k_block` for two panels' blocks `index`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
    fn q6k_pair<const A: usize>(&self, index: [usize; 2], x: &[*const i8; A]) -> [__m512i; A] {
        let quants = index.map(|i| self.quants[i * Q6K_BYTES..(i + 1) * Q6K_BYTES].as_ptr());
        let scales = index.map(|i| self.scales[i * Q6K_SCALE_BYTES..][..Q6K_SCALE_BYTES].as_ptr());
        let mut sums = [_mm512_setzero_si512(); A];
        for group in 0..16 {
            // SAFETY: sixteen groups' eight scales per panel block.
            let s = unsafe {
                join(
                    widen_twice(scales[0].add(PANEL * group)),
                    widen_twice(scales[1].add(PANEL * group)),
                )
            };
            for half in 0..2 {
                let mut products = [_mm512_setzero_si512(); A];
                for step in 4 * group + 2 * half..4 * group + 2 * half + 2 {
                    // SAFETY: 64 vectors of 32 bytes per panel block; each
                    // activation block holds 64 steps of four.
                    unsafe {
                        let w = load_pair(quants[0].add(32 * step), quants[1].add(32 * step));
                        for a in 0..A {
                            let four = broadcast_four(x[a].add(STEP * step));
                            let p = _mm512_maddubs_epi16(w, four);
                            products[a] = _mm512_add_epi16(products[a], p);
                        }
                    }
                }
                for a in 0..A {
                    sums[a] = _mm512_add_epi32(sums[a], _mm512_madd_epi16(products[a], s));
                }
            }
        }
        sums
    }

    /// `offset_sums` for two panels' blocks `index`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx2,fma,f16c")]
    fn offset_pair<const A: usize>(
        &self,
        index: [usize; 2],
        group_sums: [&[i16]; A],
    ) -> [__m512i; A] {
        let offsets = index.map(|i| {
            match self.format {
                KFormat::Q4K => &self.offsets[i * Q4K_OFFSET_BYTES..][..Q4K_OFFSET_BYTES],
                KFormat::Q6K => &self.scales[i * Q6K_SCALE_BYTES..][..Q6K_SCALE_BYTES],
            }
            .as_ptr()
        });
        let mut sums = [_mm512_setzero_si512(); A];
        for pair in 0..8 {
            // SAFETY: as in `offset_sums`, for each of the two blocks.
            let o = unsafe {
                match self.format {
                    KFormat::Q4K => join(
                        widen_twice(offsets[0].add(PANEL * pair)),
                        widen_twice(offsets[1].add(PANEL * pair)),
                    ),
                    KFormat::Q6K => _mm512_slli_epi16::<5>(join(
                        widen_interleaved(offsets[0].add(2 * PANEL * pair)),
                        widen_interleaved(offsets[1].add(2 * PANEL * pair)),
                    )),
                }
            };
            for a in 0..A {
                let two = i32::from(group_sums[a][2 * pair] as u16)
                    | (i32::from(group_sums[a][2 * pair + 1] as u16) << 16);
                sums[a] = _mm512_add_epi32(sums[a], _mm512_madd_epi16(o, _mm512_set1_epi32(two)));
            }
        }
        sums
    }
}
