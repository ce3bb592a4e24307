//! K-quant weight matrices (Q4_K, Q6_K) repacked into panels of eight
//! weight rows, for the quantized layout's products with 8-bit activation
//! rows on a CPU with AVX2. For each four weights of a super-block, the
//! eight rows' quants lie side by side in one 32-byte vector, so that one
//! multiply-add with an activation row's four 8-bit values broadcast gives
//! the eight outputs' partial sums in lanes: no horizontal sums, and the
//! products of a sub-block's eight vectors add up in i16 before its scales
//! widen them (at most 8 · 2 · 15 · 127 for Q4_K, 2 · 2 · 63 · 127 for
//! Q6_K), one widening per 256 products where `kquant_int8`'s row kernel
//! needs one per 32. This is the arithmetic of `kquant_int8` (llama.cpp's
//! Q8_K products) with the same integer sums; only the order of the f32
//! sums over a row's blocks differs, and every product of a matrix with
//! panels goes through them, so a row gets the same bits alone as in a
//! batch. Not here: the row kernel and the activations' quantization
//! (`kquant_int8`), or the 32-weight formats (`packed.rs`).

use std::arch::x86_64::*;

use super::kquant_int8::{Header, SuperRows, Unpacked};
use super::kquants::{KFormat, SUPER_BLOCK};
use super::panel_rows::{self, PANEL, broadcast_four};

mod avx512;
mod tiled;

/// Weights per vector of one row.
const STEP: usize = 4;
/// Steps per super-block.
const STEPS: usize = SUPER_BLOCK / STEP;
/// Bytes of quants per panel and block: Q4_K two steps per byte (low and
/// high nibbles), Q6_K one. (Q6_K's six bits packed as in the GGUF block
/// saved 108 MB of a 1.5B decode step's reads, but putting each weight
/// back together cost more time than that saved; docs/src/benchmarks.md.)
const Q4K_BYTES: usize = PANEL * SUPER_BLOCK / 2;
const Q6K_BYTES: usize = PANEL * SUPER_BLOCK;
/// Bytes of scales per panel and block: one per row and scale group
/// (Q4_K's eight sub-blocks of 32, Q6_K's sixteen groups of 16), a group's
/// eight rows side by side. They are widened to i16 lanes, each row's
/// twice, as they are loaded: a decode step reads every byte of the panels
/// once, so their size is its time. With d and dmin the panels take 0.594
/// bytes a weight for Q4_K and 1.094 for Q6_K (the GGUF blocks 0.563 and
/// 0.820); stored as the lanes they are loaded into, 0.656 and 1.219.
const Q4K_SCALE_BYTES: usize = 8 * PANEL;
const Q6K_SCALE_BYTES: usize = 16 * PANEL;
/// Bytes of offsets per panel and block: Q4_K's 6-bit mins, one per row and
/// sub-block as its scales. Q6_K keeps none: the offset of its quants' −32
/// is its scale times 32, read from the scales.
const Q4K_OFFSET_BYTES: usize = 8 * PANEL;

/// Up to four activation rows on their way through the panels: their
/// quantized form (quants, scales, group sums) from row `first`.
pub(super) struct RowGroup<'a> {
    x: &'a SuperRows,
    first: usize,
    count: usize,
}

/// A weight matrix as panels, panel by panel and block by block.
pub(super) struct Panels {
    format: KFormat,
    outputs: usize,
    blocks: usize,
    quants: Vec<u8>,
    scales: Vec<i8>,
    offsets: Vec<i8>,
    d: Vec<f32>,
    dmin: Vec<f32>,
}

impl Panels {
    /// The panels of `outputs` weight rows of GGUF `blocks`; None where
    /// there are none, where the rows do not fill whole panels, or where the
    /// CPU lacks AVX2.
    pub(super) fn new(format: KFormat, blocks: &[u8], outputs: usize) -> Option<Panels> {
        let whole_panels = !blocks.is_empty() && outputs != 0 && outputs.is_multiple_of(PANEL);
        if !whole_panels || !super::packed::has_avx2_kernels() {
            return None;
        }
        let row_bytes = blocks.len() / outputs;
        let per_row = row_bytes / format.block_bytes();
        let (quant_bytes, scale_bytes, offset_bytes) = match format {
            KFormat::Q4K => (Q4K_BYTES, Q4K_SCALE_BYTES, Q4K_OFFSET_BYTES),
            KFormat::Q6K => (Q6K_BYTES, Q6K_SCALE_BYTES, 0),
        };
        let count = outputs / PANEL * per_row;
        let mut panels = Panels {
            format,
            outputs,
            blocks: per_row,
            quants: vec![0; count * quant_bytes],
            scales: vec![0; count * scale_bytes],
            offsets: vec![0; count * offset_bytes],
            d: vec![0.0; count * PANEL],
            dmin: vec![0.0; count * PANEL],
        };
        for o in 0..outputs {
            let row = &blocks[o * row_bytes..(o + 1) * row_bytes];
            for (b, block) in row.chunks_exact(format.block_bytes()).enumerate() {
                let index = (o / PANEL) * per_row + b;
                panels.put(index, o % PANEL, &Unpacked::new(format, block));
            }
        }
        Some(panels)
    }

    /// Row `r` of panel block `index`.
    fn put(&mut self, index: usize, r: usize, w: &Unpacked) {
        let Header {
            scales,
            offsets,
            d,
            dmin,
        } = w.header;
        self.d[index * PANEL + r] = d;
        self.dmin[index * PANEL + r] = dmin;
        match self.format {
            KFormat::Q4K => {
                // The header gives each sub-block's scale and min to both of
                // its groups of 16.
                for sub in 0..8 {
                    self.scales[index * Q4K_SCALE_BYTES + PANEL * sub + r] = byte(scales[2 * sub]);
                    self.offsets[index * Q4K_OFFSET_BYTES + PANEL * sub + r] =
                        byte(offsets[2 * sub]);
                }
                let quants = &mut self.quants[index * Q4K_BYTES..(index + 1) * Q4K_BYTES];
                // Vector (pair, step): sub-block 2·pair in the low nibbles,
                // 2·pair + 1 in the high ones.
                for pair in 0..4 {
                    for step in 0..8 {
                        let vector = &mut quants[32 * (8 * pair + step)..];
                        for k in 0..STEP {
                            let low = w.quants[64 * pair + STEP * step + k];
                            let high = w.quants[64 * pair + 32 + STEP * step + k];
                            vector[STEP * r + k] = low | (high << 4);
                        }
                    }
                }
            }
            KFormat::Q6K => {
                for (group, &scale) in scales.iter().enumerate() {
                    self.scales[index * Q6K_SCALE_BYTES + PANEL * group + r] = byte(scale);
                }
                let quants = &mut self.quants[index * Q6K_BYTES..(index + 1) * Q6K_BYTES];
                for step in 0..STEPS {
                    let vector = &mut quants[32 * step..];
                    vector[STEP * r..STEP * (r + 1)]
                        .copy_from_slice(&w.quants[STEP * step..STEP * (step + 1)]);
                }
            }
        }
    }

    /// x · Wᵀ for the quantized rows of `x`: `rows` rows of `outputs`
    /// values, split across threads as `panel_rows` splits them.
    pub(super) fn matmul(&self, x: &SuperRows) -> Vec<f32> {
        assert_eq!(x.blocks_per_row(), self.blocks, "x is not rows × inputs");
        if self.takes_tiles(x.rows()) {
            return self.tiled_matmul(x);
        }
        panel_rows::matmul(self, x.rows(), self.outputs, |first, count| RowGroup {
            x,
            first,
            count,
        })
    }

    /// Σ scale · Σ q_w q_x per row of a Q4_K panel block, in i32 lanes.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    fn q4k_block<const A: usize>(&self, index: usize, x: &[*const i8; A]) -> [__m256i; A] {
        let quants = self.quants[index * Q4K_BYTES..(index + 1) * Q4K_BYTES].as_ptr();
        let scales = self.scales[index * Q4K_SCALE_BYTES..].as_ptr();
        let mask = _mm256_set1_epi8(0x0F);
        let mut sums = [_mm256_setzero_si256(); A];
        for sub in 0..8 {
            let (pair, high) = (sub / 2, sub % 2 == 1);
            let mut products = [_mm256_setzero_si256(); A];
            for step in 0..8 {
                // SAFETY: 32 vectors of 32 bytes per panel block; each
                // activation block holds 64 steps of four.
                unsafe {
                    let v = _mm256_loadu_si256(quants.add(32 * (8 * pair + step)).cast());
                    let w = if high {
                        _mm256_and_si256(_mm256_srli_epi16::<4>(v), mask)
                    } else {
                        _mm256_and_si256(v, mask)
                    };
                    for a in 0..A {
                        let four = broadcast_four(x[a].add(STEP * (8 * sub + step)));
                        let p = _mm256_maddubs_epi16(w, four);
                        products[a] = _mm256_add_epi16(products[a], p);
                    }
                }
            }
            // SAFETY: eight sub-blocks' eight scales per panel block.
            let s = unsafe { widen_twice(scales.add(PANEL * sub)) };
            for a in 0..A {
                sums[a] = _mm256_add_epi32(sums[a], _mm256_madd_epi16(products[a], s));
            }
        }
        sums
    }

    /// Σ scale · Σ q_w q_x per row of a Q6_K panel block, in i32 lanes;
    /// two steps' products fit an i16.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    fn q6k_block<const A: usize>(&self, index: usize, x: &[*const i8; A]) -> [__m256i; A] {
        let quants = self.quants[index * Q6K_BYTES..(index + 1) * Q6K_BYTES].as_ptr();
        let scales = self.scales[index * Q6K_SCALE_BYTES..].as_ptr();
        let mut sums = [_mm256_setzero_si256(); A];
        for group in 0..16 {
            // SAFETY: sixteen groups' eight scales per panel block.
            let s = unsafe { widen_twice(scales.add(PANEL * group)) };
            for half in 0..2 {
                let mut products = [_mm256_setzero_si256(); A];
                for step in 4 * group + 2 * half..4 * group + 2 * half + 2 {
                    // SAFETY: 64 vectors of 32 bytes per panel block; each
                    // activation block holds 64 steps of four.
                    unsafe {
                        let w = _mm256_loadu_si256(quants.add(32 * step).cast());
                        for a in 0..A {
                            let four = broadcast_four(x[a].add(STEP * step));
                            let p = _mm256_maddubs_epi16(w, four);
                            products[a] = _mm256_add_epi16(products[a], p);
                        }
                    }
                }
                for a in 0..A {
                    sums[a] = _mm256_add_epi32(sums[a], _mm256_madd_epi16(products[a], s));
                }
            }
        }
        sums
    }

    /// Σ_g offset_g · Σ q_x per row of a panel block, in i32 lanes, from
    /// each row's sixteen group sums, two groups at a time.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    fn offset_sums<const A: usize>(&self, index: usize, group_sums: [&[i16]; A]) -> [__m256i; A] {
        // The block's Q4_K mins or Q6_K scales, sliced once for all pairs.
        let offsets = match self.format {
            KFormat::Q4K => &self.offsets[index * Q4K_OFFSET_BYTES..][..Q4K_OFFSET_BYTES],
            KFormat::Q6K => &self.scales[index * Q6K_SCALE_BYTES..][..Q6K_SCALE_BYTES],
        }
        .as_ptr();
        let mut sums = [_mm256_setzero_si256(); A];
        for pair in 0..8 {
            // Lanes 2r and 2r + 1: row r's offsets of groups 2·pair and
            // 2·pair + 1. SAFETY: eight sub-blocks' mins (Q4_K) or sixteen
            // groups' scales (Q6_K) of eight rows, as sliced above.
            let o = unsafe {
                match self.format {
                    KFormat::Q4K => widen_twice(offsets.add(PANEL * pair)),
                    KFormat::Q6K => {
                        _mm256_slli_epi16::<5>(widen_interleaved(offsets.add(2 * PANEL * pair)))
                    }
                }
            };
            for a in 0..A {
                let two = i32::from(group_sums[a][2 * pair] as u16)
                    | (i32::from(group_sums[a][2 * pair + 1] as u16) << 16);
                sums[a] = _mm256_add_epi32(sums[a], _mm256_madd_epi16(o, _mm256_set1_epi32(two)));
            }
        }
        sums
    }
}

/// A header value as the byte it was read from: Q4_K's scales and mins
/// are 6-bit, Q6_K's scales signed bytes.
fn byte(value: i16) -> i8 {
    i8::try_from(value).expect("a K-quant scale or min is one byte")
}

/// Eight rows' bytes at `rows`, each sign-extended into two i16 lanes:
/// row r's in lanes 2r and 2r + 1, the two that `_mm256_madd_epi16` adds
/// into its i32 lane r.
///
/// # Safety
/// `rows` points at eight readable bytes.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn widen_twice(rows: *const i8) -> __m256i {
    // SAFETY: the caller's.
    let v = unsafe { _mm_loadl_epi64(rows.cast()) };
    _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(v, v))
}

/// Two groups' eight rows' bytes at `rows`, sign-extended and interleaved
/// row by row: row r's of the first group in lane 2r, of the second in
/// lane 2r + 1.
///
/// # Safety
/// `rows` points at sixteen readable bytes.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn widen_interleaved(rows: *const i8) -> __m256i {
    // SAFETY: the caller's.
    let v = unsafe { _mm_loadu_si128(rows.cast()) };
    _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(v, _mm_srli_si128::<8>(v)))
}

impl<'a> panel_rows::Kernel<'a> for Panels {
    type Rows = RowGroup<'a>;

    fn count(rows: &Self::Rows) -> usize {
        rows.count
    }

    fn pairs(&self) -> bool {
        super::pair_vectors::has_pair_kernels()
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
        let RowGroup { x, first, .. } = *rows;
        let inputs = self.blocks * SUPER_BLOCK;
        assert!(first + A <= x.rows());
        let (quants, scales, group_sums) = x.parts();
        let mut acc = [_mm256_setzero_ps(); A];
        for b in 0..self.blocks {
            let index = panel * self.blocks + b;
            // Block b of each row, as an index into the activations' blocks.
            let row_block: [usize; A] = std::array::from_fn(|a| (first + a) * self.blocks + b);
            let activations: [*const i8; A] =
                std::array::from_fn(|a| quants[(first + a) * inputs + b * SUPER_BLOCK..].as_ptr());
            let products = match self.format {
                KFormat::Q4K => self.q4k_block::<A>(index, &activations),
                KFormat::Q6K => self.q6k_block::<A>(index, &activations),
            };
            let offsets = self.offset_sums::<A>(
                index,
                std::array::from_fn(|a| &group_sums[row_block[a] * 16..]),
            );
            // SAFETY: eight d and dmin per panel block.
            let (d, dmin) = unsafe {
                (
                    _mm256_loadu_ps(self.d.as_ptr().add(index * PANEL)),
                    _mm256_loadu_ps(self.dmin.as_ptr().add(index * PANEL)),
                )
            };
            for a in 0..A {
                let scale = _mm256_set1_ps(scales[row_block[a]]);
                let products = _mm256_cvtepi32_ps(products[a]);
                acc[a] = _mm256_fmadd_ps(_mm256_mul_ps(d, scale), products, acc[a]);
                let offsets = _mm256_cvtepi32_ps(offsets[a]);
                acc[a] = _mm256_fnmadd_ps(_mm256_mul_ps(dmin, scale), offsets, acc[a]);
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
    use super::super::kquant_int8;
    use super::super::packed::{Activations, PackedMatrix};
    use super::*;
    use candle_core::quantized::{GgmlDType, QTensor};
    use candle_core::{Device, Tensor};

    /// The panels give the row kernel's oracle's integer sums for every
    /// output and row: three and four panels, and 71 rows, so a pass goes
    /// by groups of four and a remainder while each row alone goes unit by
    /// unit; and a row alone gets the bits it gets in the batch. With pairs
    /// of panels, three panels compare the paired kernel's bits (a pass)
    /// with the single one's (a row alone, as an odd count of panels does
    /// not pair up), and four pair up both ways. With AMX tiles, a pass
    /// over four panels goes through them: 71 rows in blocks of one tile,
    /// and 150 in blocks of three (two tiles at a time, then one), each
    /// with rows after the last whole tile; a row alone does not.
    #[test]
    fn panels_give_llama_cpp_integer_sums_alone_as_in_a_batch() {
        let inputs = 3 * SUPER_BLOCK;
        if !super::super::packed::has_avx2_kernels() {
            println!("skipped: this CPU has no AVX2, so there are no panels");
            return;
        }
        if !super::super::pair_vectors::has_pair_kernels() {
            println!("pairs of panels not run: this CPU is not an Intel one with AVX-512");
        }
        if !super::super::tiles::has_tiles() {
            println!("tiles not run: this CPU or kernel gives no AMX tiles");
        }
        for (dtype, outputs, rows) in [GgmlDType::Q4K, GgmlDType::Q6K]
            .into_iter()
            .flat_map(|dtype| [(dtype, 3 * PANEL), (dtype, 4 * PANEL)])
            .flat_map(|(dtype, outputs)| [(dtype, outputs, 71), (dtype, outputs, 150)])
        {
            let values: Vec<f32> = (0..outputs * inputs)
                .map(|i| ((i * 7919 % 1000) as f32 / 500.0 - 1.0) * 0.3)
                .collect();
            let t = Tensor::from_vec(values, (outputs, inputs), &Device::Cpu).unwrap();
            let q = QTensor::quantize(&t, dtype).unwrap();
            let blocks = q.data().unwrap().into_owned();
            let format = match dtype {
                GgmlDType::Q4K => KFormat::Q4K,
                _ => KFormat::Q6K,
            };
            let packed = PackedMatrix::from_qtensor(&q).unwrap().with_panels();
            let x: Vec<f32> = (0..rows * inputs)
                .map(|i| ((i * 31 % 97) as f32 / 48.0) - 1.0)
                .collect();
            let y = packed.matmul(&x, rows, Activations::Int8);
            let quantized = SuperRows::quantize(&x, inputs);
            let row_bytes = blocks.len() / outputs;
            for o in 0..outputs {
                let weight_row = &blocks[o * row_bytes..(o + 1) * row_bytes];
                for r in 0..rows {
                    let exact = kquant_int8::exact_dot(format, weight_row, &quantized, r);
                    let got = f64::from(y[r * outputs + o]);
                    let error = (got - exact).abs();
                    assert!(
                        error < 1e-5 * (1.0 + exact.abs()),
                        "{dtype:?} {rows} rows ({r}, {o}): {got} vs {exact}"
                    );
                }
            }
            for r in 0..rows {
                let alone = packed.matmul(&x[r * inputs..(r + 1) * inputs], 1, Activations::Int8);
                assert_eq!(
                    alone,
                    y[r * outputs..(r + 1) * outputs],
                    "{dtype:?} {rows} rows, row {r}"
                );
            }
        }
    }
}
