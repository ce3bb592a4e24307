//! Products of activation rows with a weight matrix kept in the GGUF's own
//! blocks (Q4_1, Q5_0, Q8_0, and the K-quants Q4_K and Q6_K of `kquants.rs`
//! and `kquant_int8.rs`), in two arithmetics:
//!
//! - [`Activations::F32`], for the f32 layout's decode steps. A decode step
//!   multiplies one row per sequence by every weight matrix, so its cost is
//!   reading the weights: 4 bytes per weight as f32, 0.625 (Q4_1), 0.6875
//!   (Q5_0) or 1.0625 (Q8_0) as blocks. Each weight is expanded in registers exactly as
//!   candle's dequantization expands it (`q as f32 * d + m`, multiply then
//!   add, never fused), so the product uses the same weight values as the
//!   f32 GEMM of a prefill and differs from it only in the order of the sums.
//! - [`Activations::Int8`], for the quantized layout's every pass: each row
//!   is first quantized to 8 bits per 32 values as llama.cpp does (its Q8_1:
//!   scale max|x|/127 kept as f16, and the scaled sum of the quants), then
//!   multiplied in integers, 32 products per instruction. This is llama.cpp's
//!   arithmetic, not the f32 model's. The K-quants quantize each row per
//!   256 values instead, as llama.cpp's Q8_K (`kquant_int8.rs`), and go
//!   through panels of eight weight rows (`kquant_panels.rs`) where
//!   [`PackedMatrix::with_panels`] made them.
//!
//! Each output is computed the same way whatever the number of rows, so a
//! sequence gets the same bits alone as in a batch, and, with `Int8`, a
//! decode step the same products as a pass over the whole prompt. Not here:
//! attention, or the f32 layout's prefill, which stays a dense f32 GEMM
//! (`llama.rs`).

use candle_core::quantized::{GgmlDType, QTensor};
use half::f16;
use rayon::prelude::*;

use super::kquant_int8::{self, SuperRows};
use super::kquants::{self, KFormat};

/// Bytes per 32-weight block.
const Q4_1_BLOCK: usize = 20;
const Q5_0_BLOCK: usize = 22;
const Q8_0_BLOCK: usize = 34;
const BLOCK_WEIGHTS: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Q4_1,
    /// 32 weights: d (f16), the fifth bits (u32), then the low nibbles.
    Q5_0,
    Q8_0,
    /// 256-weight super-blocks (`kquants.rs`).
    K(KFormat),
}

impl Format {
    fn block_bytes(self) -> usize {
        match self {
            Format::Q4_1 => Q4_1_BLOCK,
            Format::Q5_0 => Q5_0_BLOCK,
            Format::Q8_0 => Q8_0_BLOCK,
            Format::K(k) => k.block_bytes(),
        }
    }

    fn block_weights(self) -> usize {
        match self {
            Format::K(_) => kquants::SUPER_BLOCK,
            _ => BLOCK_WEIGHTS,
        }
    }
}

/// A (outputs × inputs) weight matrix as GGUF blocks, row by row.
pub struct PackedMatrix {
    format: Format,
    blocks: Vec<u8>,
    outputs: usize,
    inputs: usize,
    /// The blocks again as panels, for every 8-bit product where the
    /// layout asks for them.
    #[cfg(target_arch = "x86_64")]
    panels: Option<Panels>,
}

/// A matrix's panels of eight weight rows: the K-quants' (`kquant_panels.rs`)
/// or the 32-weight blocks' (`packed/panels.rs`).
#[cfg(target_arch = "x86_64")]
enum Panels {
    K(super::kquant_panels::Panels),
    Blocks(panels::Panels),
}

#[cfg(target_arch = "x86_64")]
impl Panels {
    fn of(m: &PackedMatrix) -> Option<Panels> {
        match m.format {
            Format::K(k) => {
                super::kquant_panels::Panels::new(k, &m.blocks, m.outputs).map(Panels::K)
            }
            format => panels::Panels::new(format, &m.blocks, m.outputs).map(Panels::Blocks),
        }
    }
}

impl PackedMatrix {
    /// The blocks of a 2-D tensor in Q4_1, Q5_0, Q8_0, Q4_K or Q6_K, whose
    /// products have both arithmetics; None for any other layout. (The
    /// arithmetic is the caller's choice at each product.)
    pub fn from_qtensor(q: &QTensor) -> Option<PackedMatrix> {
        let format = match q.dtype() {
            GgmlDType::Q4_1 => Format::Q4_1,
            GgmlDType::Q8_0 => Format::Q8_0,
            GgmlDType::Q5_0 => Format::Q5_0,
            GgmlDType::Q4K => Format::K(KFormat::Q4K),
            GgmlDType::Q6K => Format::K(KFormat::Q6K),
            _ => return None,
        };
        let (outputs, inputs) = q.shape().dims2().ok()?;
        let blocks = q.data().ok()?.into_owned();
        let per_block = format.block_weights();
        let expected = outputs * inputs / per_block * format.block_bytes();
        (inputs % per_block == 0 && blocks.len() == expected).then_some(PackedMatrix {
            format,
            blocks,
            outputs,
            inputs,
            #[cfg(target_arch = "x86_64")]
            panels: None,
        })
    }

    /// The same matrix with its blocks also kept as panels, which every
    /// 8-bit product then uses: the mixed layout's decode steps, the
    /// quantized layout's every pass. A no-op for Q4_1, on other CPUs, and
    /// where the outputs do not fill whole panels.
    pub fn with_panels(mut self) -> PackedMatrix {
        #[cfg(target_arch = "x86_64")]
        {
            self.panels = Panels::of(&self);
        }
        self
    }

    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// `x` holds `rows` rows of `inputs` values; returns `rows` rows of
    /// `outputs` values (x · Wᵀ) in the given arithmetic.
    pub fn matmul(&self, x: &[f32], rows: usize, activations: Activations) -> Vec<f32> {
        assert_eq!(x.len(), rows * self.inputs, "x is not rows × inputs");
        match activations {
            Activations::F32 => self.products(rows, |weight_row, first, sums| {
                let tile = &x[first * self.inputs..(first + sums.len()) * self.inputs];
                dot_rows(self.format, weight_row, tile, self.inputs, sums)
            }),
            Activations::Int8 => {
                #[cfg(target_arch = "x86_64")]
                match &self.panels {
                    Some(Panels::K(panels)) => {
                        return panels.matmul(&SuperRows::quantize(x, self.inputs));
                    }
                    Some(Panels::Blocks(panels)) => {
                        return panels.matmul(&Int8Rows::quantize(x, rows, self.inputs));
                    }
                    None => {}
                }
                if let Format::K(k) = self.format {
                    let quantized = SuperRows::quantize(x, self.inputs);
                    return self.products(rows, |weight_row, first, sums| {
                        kquant_int8::dot_rows(k, weight_row, &quantized, first, sums)
                    });
                }
                let quantized = Int8Rows::quantize(x, rows, self.inputs);
                self.products(rows, |weight_row, first, sums| {
                    int8::dot_rows(self.format, weight_row, &quantized, first, sums)
                })
            }
        }
    }

    /// Every output for every row, `dot(weight row, first row, sums)`
    /// filling one output's values for the rows from `first`; the outputs
    /// are split across rayon's threads. The rows go in tiles of [`TILE`],
    /// each through all of a thread's weight rows while it stays in cache:
    /// a pass over a long prompt would otherwise stream every row's
    /// activations from memory once per weight row.
    fn products(&self, rows: usize, dot: impl Fn(&[u8], usize, &mut [f32]) + Sync) -> Vec<f32> {
        let row_bytes = self.inputs / self.format.block_weights() * self.format.block_bytes();
        // Transposed while computing: output-major, `rows` values per output.
        let mut transposed = vec![0f32; self.outputs * rows];
        const CHUNK: usize = 32;
        transposed
            .par_chunks_mut(CHUNK * rows)
            .zip(self.blocks.par_chunks(CHUNK * row_bytes))
            .for_each(|(out, weights)| {
                for first in (0..rows).step_by(TILE) {
                    let end = (first + TILE).min(rows);
                    for (sums, weight_row) in out.chunks_mut(rows).zip(weights.chunks(row_bytes)) {
                        dot(weight_row, first, &mut sums[first..end]);
                    }
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

/// Activation rows per tile of [`PackedMatrix::products`]: 64 rows of the
/// widest input (8,960 for Qwen 1.5B's `ffn_down`) are 0.6 MB as 8-bit
/// quants, within a core's L2 cache. Each row's sums are the same whatever
/// the tiling.
const TILE: usize = 64;

/// The arithmetic of [`PackedMatrix::matmul`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activations {
    /// f32 activations times the expanded f32 weights.
    F32,
    /// 8-bit activations times the blocks' integers, as llama.cpp.
    Int8,
}

/// Whether this CPU runs the block kernels' AVX2 paths (AVX2, FMA and F16C).
#[cfg(target_arch = "x86_64")]
pub(super) fn has_avx2_kernels() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("f16c")
}

/// One weight row (as blocks) against every row of `x`.
fn dot_rows(format: Format, weight_row: &[u8], x: &[f32], inputs: usize, sums: &mut [f32]) {
    if let Format::K(k) = format {
        return kquants::dot_rows(k, weight_row, x, inputs, sums);
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2_kernels() {
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
        Format::Q5_0 => {
            let high = u32::from_le_bytes([block[2], block[3], block[4], block[5]]);
            let fifth = |j: usize| (((high >> j) & 1) << 4) as i32;
            for (j, &q) in block[6..22].iter().enumerate() {
                w[j] = ((i32::from(q & 0x0F) | fifth(j)) - 16) as f32 * d;
                w[j + 16] = ((i32::from(q >> 4) | fifth(j + 16)) - 16) as f32 * d;
            }
        }
        Format::Q8_0 => {
            for (j, &q) in block[2..34].iter().enumerate() {
                w[j] = f32::from(q as i8) * d;
            }
        }
        // Super-blocks are expanded by `kquants`, which `dot_rows` calls instead.
        Format::K(_) => unreachable!("a K-quant block in the 32-weight path"),
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
pub(super) use avx2::horizontal_sum;

#[cfg(target_arch = "x86_64")]
mod avx2;

mod int8;
use int8::Int8Rows;

#[cfg(target_arch = "x86_64")]
mod panels;

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

    const OUTPUTS: usize = 70;
    const INPUTS: usize = 128;
    const ROWS: usize = 6;

    /// The products' test case: an OUTPUTS × INPUTS matrix in `dtype`, its
    /// dequantized values, its packed layout, and ROWS input rows.
    fn case(dtype: GgmlDType) -> (QTensor, Vec<f32>, PackedMatrix, Vec<f32>) {
        let (q, dense) = matrix(dtype, OUTPUTS, INPUTS);
        let packed = PackedMatrix::from_qtensor(&q).expect("a packed layout");
        let x = (0..ROWS * INPUTS)
            .map(|i| ((i * 31 % 97) as f32 / 48.0) - 1.0)
            .collect();
        (q, dense, packed, x)
    }

    /// Each row of `x` alone gets the same bits as in the batch's `y`.
    fn assert_alone_as_in_batch(packed: &PackedMatrix, x: &[f32], y: &[f32], a: Activations) {
        let (inputs, outputs) = (packed.inputs, packed.outputs);
        for r in 0..x.len() / inputs {
            let alone = packed.matmul(&x[r * inputs..(r + 1) * inputs], 1, a);
            let format = packed.format;
            assert_eq!(
                alone,
                y[r * outputs..(r + 1) * outputs],
                "{format:?} {a:?} row {r}"
            );
        }
    }

    #[test]
    fn products_use_the_dequantized_weights_and_do_not_depend_on_the_batch() {
        let (outputs, inputs, rows) = (OUTPUTS, INPUTS, ROWS);
        for dtype in [GgmlDType::Q4_1, GgmlDType::Q5_0, GgmlDType::Q8_0] {
            let (_, dense, packed, x) = case(dtype);
            let y = packed.matmul(&x, rows, Activations::F32);
            let exact = dense_matmul(&dense, &x, rows, outputs, inputs);
            for (got, want) in y.iter().zip(&exact) {
                assert!(
                    (f64::from(*got) - want).abs() < 1e-4,
                    "{dtype:?}: {got} vs {want}"
                );
            }
            assert_alone_as_in_batch(&packed, &x, &y, Activations::F32);
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

    /// The 8-bit arithmetic is llama.cpp's, which candle's quantized
    /// product also implements (up to one f16 rounding); both kernels (AVX2
    /// and portable) agree with the exact sums of the same quants; and a row
    /// gets the same bits alone as in a batch.
    #[test]
    fn int8_products_are_llama_cpp_arithmetic_and_do_not_depend_on_the_batch() {
        let (outputs, inputs, rows) = (OUTPUTS, INPUTS, ROWS);
        for dtype in [GgmlDType::Q4_1, GgmlDType::Q5_0, GgmlDType::Q8_0] {
            let (q, _, packed, x) = case(dtype);
            let y = packed.matmul(&x, rows, Activations::Int8);
            let candle = {
                let t = Tensor::from_vec(x.clone(), (rows, inputs), &Device::Cpu).unwrap();
                let matmul = candle_core::quantized::QMatMul::from_qtensor(q).unwrap();
                use candle_core::Module;
                let out = matmul.forward(&t).unwrap().flatten_all().unwrap();
                out.to_vec1::<f32>().unwrap()
            };
            // candle rounds a block's scaled sum as f16(Σq) · f16(d), in f16;
            // llama.cpp (and this module) as f16(d · Σq). So the two agree
            // to that rounding, not to f32's.
            for (got, want) in y.iter().zip(&candle) {
                assert!(
                    (got - want).abs() < 2e-3 * (1.0 + want.abs()),
                    "{dtype:?}: {got} vs {want}"
                );
            }
            assert_alone_as_in_batch(&packed, &x, &y, Activations::Int8);
            let quantized = Int8Rows::quantize(&x, rows, inputs);
            let row_bytes = inputs / BLOCK_WEIGHTS * dtype_bytes(dtype);
            let mut portable = vec![0f32; rows];
            let first_row = &packed.blocks[..row_bytes];
            int8::portable_dot_rows(packed.format, first_row, &quantized, 0, &mut portable);
            for r in 0..rows {
                let exact = int8::exact_dot(packed.format, first_row, &quantized, r);
                for got in [portable[r], y[r * outputs]] {
                    let error = (f64::from(got) - exact).abs();
                    assert!(error < 1e-5 * (1.0 + exact.abs()), "{got} vs {exact}");
                }
            }
        }
    }

    fn dtype_bytes(dtype: GgmlDType) -> usize {
        match dtype {
            GgmlDType::Q4_1 => Q4_1_BLOCK,
            GgmlDType::Q5_0 => Q5_0_BLOCK,
            _ => Q8_0_BLOCK,
        }
    }

    /// Q4_K and Q6_K (256-weight super-blocks, f32 activations only) use
    /// candle's dequantized weights, alone as in a batch, on both kernels.
    #[test]
    fn k_quant_products_use_the_dequantized_weights() {
        let (outputs, inputs, rows) = (10, 512, 5);
        for dtype in [GgmlDType::Q4K, GgmlDType::Q6K] {
            let (q, dense) = matrix(dtype, outputs, inputs);
            let packed = PackedMatrix::from_qtensor(&q).expect("packed");
            let x: Vec<f32> = (0..rows * inputs)
                .map(|i| ((i * 31 % 97) as f32 / 48.0) - 1.0)
                .collect();
            let y = packed.matmul(&x, rows, Activations::F32);
            let exact = dense_matmul(&dense, &x, rows, outputs, inputs);
            for (got, want) in y.iter().zip(&exact) {
                let error = (f64::from(*got) - want).abs();
                assert!(
                    error < 1e-4 * (1.0 + want.abs()),
                    "{dtype:?}: {got} vs {want}"
                );
            }
            assert_alone_as_in_batch(&packed, &x, &y, Activations::F32);
            let Format::K(k) = packed.format else {
                panic!("{dtype:?} is not a K-quant layout")
            };
            let row_bytes = inputs / kquants::SUPER_BLOCK * k.block_bytes();
            let mut portable = vec![0f32; rows];
            kquants::dot_rows_portable(k, &packed.blocks[..row_bytes], &x, inputs, &mut portable);
            for r in 0..rows {
                let want = exact[r * outputs];
                assert!((f64::from(portable[r]) - want).abs() < 1e-4 * (1.0 + want.abs()));
            }
        }
    }

    /// Q4_K and Q6_K with 8-bit activations: llama.cpp's Q8_K arithmetic,
    /// which candle's quantized product also implements (up to its rounding
    /// of ties away from zero); the AVX2 and portable kernels both give the
    /// exact sums of the same integers, and a row gets the same bits alone
    /// as in a batch.
    #[test]
    fn k_quant_int8_products_are_llama_cpp_arithmetic() {
        // 70 rows: a full tile and a remainder, and in each full groups of
        // 4 and a remainder.
        let (outputs, inputs, rows) = (10, 768, TILE + 6);
        for dtype in [GgmlDType::Q4K, GgmlDType::Q6K] {
            let (q, dense) = matrix(dtype, outputs, inputs);
            let packed = PackedMatrix::from_qtensor(&q).expect("packed");
            let x: Vec<f32> = (0..rows * inputs)
                .map(|i| ((i * 31 % 97) as f32 / 48.0) - 1.0)
                .collect();
            let y = packed.matmul(&x, rows, Activations::Int8);
            let candle = {
                let t = Tensor::from_vec(x.clone(), (rows, inputs), &Device::Cpu).unwrap();
                let matmul = candle_core::quantized::QMatMul::from_qtensor(q).unwrap();
                use candle_core::Module;
                matmul
                    .forward(&t)
                    .unwrap()
                    .flatten_all()
                    .unwrap()
                    .to_vec1::<f32>()
                    .unwrap()
            };
            let exact_f32 = dense_matmul(&dense, &x, rows, outputs, inputs);
            for ((got, want), f32_product) in y.iter().zip(&candle).zip(&exact_f32) {
                assert!(
                    (got - want).abs() < 1e-3 * (1.0 + want.abs()),
                    "{dtype:?}: {got} vs candle's {want}"
                );
                // 8-bit activations: within a percent of the f32 product's scale.
                assert!((f64::from(*got) - f32_product).abs() < 0.05 * (1.0 + f32_product.abs()));
            }
            assert_alone_as_in_batch(&packed, &x, &y, Activations::Int8);
            let Format::K(k) = packed.format else {
                panic!("{dtype:?} is not a K-quant layout")
            };
            let quantized = SuperRows::quantize(&x, inputs);
            let row_bytes = inputs / kquants::SUPER_BLOCK * k.block_bytes();
            let first_row = &packed.blocks[..row_bytes];
            let mut portable = vec![0f32; rows];
            kquant_int8::portable_dot_rows(k, first_row, &quantized, 0, &mut portable);
            let kernels: Vec<Vec<f32>> = kquant_int8::simd_dot_rows(k, first_row, &quantized)
                .into_iter()
                .collect();
            for r in 0..rows {
                let exact = kquant_int8::exact_dot(k, first_row, &quantized, r);
                let simd = kernels.iter().map(|sums| sums[r]);
                for got in [portable[r], y[r * outputs]].into_iter().chain(simd) {
                    let error = (f64::from(got) - exact).abs();
                    assert!(
                        error < 1e-5 * (1.0 + exact.abs()),
                        "{dtype:?}: {got} vs {exact}"
                    );
                }
            }
        }
    }

    #[test]
    fn other_layouts_are_not_packed() {
        let (q, _) = matrix(GgmlDType::Q4_0, 4, 64);
        assert!(PackedMatrix::from_qtensor(&q).is_none());
    }
}
