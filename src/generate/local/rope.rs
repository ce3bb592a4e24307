//! The rotary position embedding of the local model: the cos/sin tables
//! and the two ways a head's dimensions turn together (llama's interleaved
//! pairs, qwen2's NEOX halves), which `attention` applies row by row, in a
//! pass over a prompt as in a decode step.

use candle_core::{D, DType, Device, Result, Tensor};

/// Which dimensions of a head the rotary embedding turns together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RopeStyle {
    /// Adjacent pairs (2i, 2i + 1): GGUF's `llama` weights are permuted for it.
    Interleaved,
    /// Dimension i with i + head_dim / 2, as llama.cpp rotates `qwen2`.
    Neox,
}

/// The interleaved rotary embedding (GPT-J pairs) of every head in `x` at
/// one position, as candle's `rope_i` computes it.
pub(super) fn rotate_pairs(x: &mut [f32], cos: &[f32], sin: &[f32]) {
    for head in x.chunks_mut(cos.len() * 2) {
        for (pair, (c, s)) in head.chunks_exact_mut(2).zip(cos.iter().zip(sin)) {
            let (a, b) = (pair[0], pair[1]);
            pair[0] = a * c - b * s;
            pair[1] = a * s + b * c;
        }
    }
}

/// The NEOX-style rotary embedding of every head in `x` at one position:
/// dimension i turns with i + head_dim / 2, as candle's `rope` computes it.
pub(super) fn rotate_halves(x: &mut [f32], cos: &[f32], sin: &[f32]) {
    let half = cos.len();
    for head in x.chunks_mut(half * 2) {
        let (first, second) = head.split_at_mut(half);
        for ((a, b), (c, s)) in first.iter_mut().zip(second).zip(cos.iter().zip(sin)) {
            let (x0, x1) = (*a, *b);
            *a = x0 * c - x1 * s;
            *b = x0 * s + x1 * c;
        }
    }
}

/// The cos and sin of every position's angle for each pair of a head's
/// dimensions, at frequency base `base`: (context, head_dim / 2) each.
pub(super) fn rope_tables(
    head_dim: usize,
    base: f32,
    context: usize,
    device: &Device,
) -> Result<(Tensor, Tensor)> {
    let inverse: Vec<f32> = (0..head_dim)
        .step_by(2)
        .map(|i| 1.0 / base.powf(i as f32 / head_dim as f32))
        .collect();
    let inverse = Tensor::new(inverse.as_slice(), device)?.unsqueeze(0)?;
    let positions = Tensor::arange(0u32, context as u32, device)?
        .to_dtype(DType::F32)?
        .unsqueeze(D::Minus1)?;
    let angles = positions.broadcast_mul(&inverse)?;
    Ok((angles.cos()?, angles.sin()?))
}
