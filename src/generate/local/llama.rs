//! A quantized decoder of the Llama family read from GGUF, on candle: the
//! `llama` architecture (SmolLM2) and `qwen2` (Qwen2.5-Coder), which adds
//! biases to the query, key and value projections and rotates the two halves
//! of each head (NEOX-style rotary embedding) instead of adjacent pairs.
//!
//! candle-transformers' `quantized_llama` returns the logits of the last
//! position only. Generation needs that, but checking the log-probabilities
//! of a generation needs a teacher-forced pass that returns every
//! position's logits, so this module runs the same blocks itself and lets
//! the caller choose. It is a model, not a decoder: sampling and stopping
//! are `local`'s job, and so is choosing which sequences share a step.
//!
//! With the f32 layout, a decode step reads the weight matrices as the GGUF
//! stores them (`packed.rs`), expanded to the same f32 values, while passes
//! over a prompt use the dense f32 matrices. The quantized layout reads the
//! GGUF's blocks in every pass, with 8-bit activations as llama.cpp does.
//!
//! The weights are read-only; each sequence's key/value cache is its own
//! [`KvCache`], so one [`Llama`] serves several sequences at once.
//! [`Llama::decode_step`] advances several sequences by one token each with
//! one matrix product per weight (the weights are read once for all of them),
//! while attention runs per sequence over its own cache. Both passes run on
//! a rayon worker, so that their parallel loops do not each pay for waking
//! threads.

use super::attention::{LayerCache, Rotary, Shape, attend_rows};
use super::embedding::QuantizedEmbedding;
use super::rope::{RopeStyle, rope_tables};
use super::vector_exp::silu_times;
use candle_core::quantized::gguf_file::Content;
use candle_core::quantized::{QMatMul, QTensor};
use candle_core::{DType, Device, IndexOp, Module, Result, Tensor};
use candle_transformers::quantized_nn::RmsNorm;

use super::packed::{Activations, PackedMatrix};

/// A weight matrix: the layout chosen for passes over a prompt, and on a
/// CPU its GGUF blocks too. The f32 layout's decode steps read the blocks
/// with f32 activations; the quantized layout uses them for every pass,
/// with 8-bit activations (`packed.rs`).
struct Linear {
    dense: QMatMul,
    packed: Option<Packed>,
    /// Added to every output row (qwen2's query, key and value projections).
    bias: Option<Tensor>,
}

impl Linear {
    /// x · Wᵀ for x of shape (1, n, inputs) or (n, inputs); `step` says
    /// whether this is a decode step.
    fn forward(&self, x: &Tensor, step: bool) -> Result<Tensor> {
        let y = self.product(x, step)?;
        match &self.bias {
            Some(bias) => y.broadcast_add(bias),
            None => Ok(y),
        }
    }

    fn product(&self, x: &Tensor, step: bool) -> Result<Tensor> {
        match self.packed_product(x, step)? {
            Some((y, dims)) => Tensor::from_vec(y, dims, x.device()),
            None => self.dense.forward(x),
        }
    }

    /// x · Wᵀ through the GGUF blocks, with the output's shape, where this
    /// pass uses them (else None): plain values, so that the MLP's gate
    /// can be applied to them in place.
    fn packed_product(&self, x: &Tensor, step: bool) -> Result<Option<(Vec<f32>, Vec<usize>)>> {
        let packed = self.packed.as_ref().filter(|p| step || p.every_pass);
        let Some(Packed {
            matrix: packed,
            activations,
            ..
        }) = packed
        else {
            return Ok(None);
        };
        let mut dims = x.dims().to_vec();
        let inputs = dims.pop().unwrap_or(0);
        let rows = x.elem_count() / inputs.max(1);
        let values = x.flatten_all()?.to_dtype(DType::F32)?.to_vec1::<f32>()?;
        dims.push(packed.outputs());
        Ok(Some((packed.matmul(&values, rows, *activations), dims)))
    }
}

impl Block {
    /// silu(x · gateᵀ) · (x · upᵀ): on the GGUF blocks' products in place,
    /// with vector exponentials (`vector_exp`); on candle's ops for the
    /// dense layout's passes.
    fn swiglu(&self, x: &Tensor, step: bool) -> Result<Tensor> {
        if let Some((mut gate, dims)) = self.gate.packed_product(x, step)?
            && let Some((up, _)) = self.up.packed_product(x, step)?
        {
            silu_times(&mut gate, &up);
            return Tensor::from_vec(gate, dims, x.device());
        }
        candle_nn::ops::silu(&self.gate.forward(x, step)?)? * self.up.forward(x, step)?
    }
}

/// A matrix's GGUF blocks, the arithmetic of their products, and whether
/// passes over a prompt use them too (else decode steps only).
struct Packed {
    matrix: PackedMatrix,
    activations: Activations,
    every_pass: bool,
}

/// One transformer block and its key/value cache.
struct Block {
    attention_norm: RmsNorm,
    wq: Linear,
    wk: Linear,
    wv: Linear,
    wo: Linear,
    ffn_norm: RmsNorm,
    gate: Linear,
    up: Linear,
    down: Linear,
}

/// One sequence's keys and values, per block, for the positions it has run.
#[derive(Clone)]
pub struct KvCache {
    blocks: Vec<LayerCache>,
}

pub struct Llama {
    embeddings: QuantizedEmbedding,
    blocks: Vec<Block>,
    norm: RmsNorm,
    output: Linear,
    rotary: Rotary,
    shape: Shape,
    device: Device,
}

pub use crate::generate::weights::Weights;

/// Which logits [`Llama::forward`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logits {
    Last,
    All,
}

/// A weight matrix laid out for `weights`: the dense form candle multiplies,
/// and on a CPU the packed blocks the decode (or every) pass multiplies.
fn linear(q: QTensor, weights: Weights, device: &Device) -> Result<Linear> {
    let arithmetic = match weights {
        Weights::F32 => Some((Activations::F32, false)),
        Weights::Mixed => Some((Activations::Int8, false)),
        Weights::Quantized => Some((Activations::Int8, true)),
        Weights::F16 => None,
    };
    let packed = arithmetic
        .filter(|_| device.is_cpu())
        .and_then(|(activations, every_pass)| {
            let matrix = PackedMatrix::from_qtensor(&q)?;
            Some(Packed {
                matrix: match activations {
                    Activations::Int8 => matrix.with_panels(),
                    Activations::F32 => matrix,
                },
                activations,
                every_pass,
            })
        });
    let dense = match weights {
        Weights::Quantized => QMatMul::from_qtensor(q)?,
        Weights::F32 | Weights::Mixed => QMatMul::Tensor(q.dequantize(device)?),
        Weights::F16 => QMatMul::TensorF16(q.dequantize_f16(device)?),
    };
    Ok(Linear {
        dense,
        packed,
        bias: None,
    })
}

impl Llama {
    /// Reads the model. With `weights` = [`Weights::F32`] the quantized
    /// matrices are expanded once at load, trading memory (about 0.6 GB for
    /// SmolLM2-135M) for dense f32 matrix products, which are several times
    /// faster on a CPU than candle's Q4_1 kernels.
    pub fn from_gguf<R: std::io::Read + std::io::Seek>(
        content: &Content,
        reader: &mut R,
        device: &Device,
        weights: Weights,
    ) -> Result<Llama> {
        let meta = |key: &str| {
            content
                .metadata
                .get(key)
                .ok_or_else(|| candle_core::Error::Msg(format!("GGUF metadata has no {key}")))
        };
        let arch = meta("general.architecture")?.to_string()?.clone();
        let rope = match arch.as_str() {
            "llama" => RopeStyle::Interleaved,
            "qwen2" => RopeStyle::Neox,
            _ => candle_core::bail!(
                "general.architecture is {arch:?}; only \"llama\" and \"qwen2\" are supported"
            ),
        };
        let count = |key: &str| {
            meta(&format!("{arch}.{key}"))
                .and_then(|v| v.to_u32())
                .map(|n| n as usize)
        };
        let heads = count("attention.head_count")?;
        let kv_heads = count("attention.head_count_kv")?;
        let hidden = count("embedding_length")?;
        let layers = count("block_count")?;
        let context = count("context_length")?;
        let eps = f64::from(meta(&format!("{arch}.attention.layer_norm_rms_epsilon"))?.to_f32()?);
        let rope_base = meta(&format!("{arch}.rope.freq_base"))
            .and_then(|v| v.to_f32())
            .unwrap_or(10_000.0);
        let head_dim = hidden / heads;
        let mut tensor = |name: &str| content.tensor(reader, name, device);
        let embedding_weights = tensor("token_embd.weight")?;
        let embeddings = QuantizedEmbedding::new(&embedding_weights)?;
        let norm = RmsNorm::from_qtensor(tensor("output_norm.weight")?, eps)?;
        // Tied embeddings: without output.weight the embedding matrix projects back.
        let matmul = |q: QTensor| linear(q, weights, device);
        let output = matmul(match tensor("output.weight") {
            Ok(t) => t,
            Err(_) => embedding_weights,
        })?;
        let mut blocks = Vec::with_capacity(layers);
        for i in 0..layers {
            let mut q = |part: &str| {
                let mut linear = matmul(tensor(&format!("blk.{i}.{part}.weight"))?)?;
                // Only qwen2's query, key and value projections have biases.
                linear.bias = match tensor(&format!("blk.{i}.{part}.bias")) {
                    Ok(bias) => Some(bias.dequantize(device)?),
                    Err(_) => None,
                };
                Ok::<_, candle_core::Error>(linear)
            };
            let (wq, wk, wv, wo) = (q("attn_q")?, q("attn_k")?, q("attn_v")?, q("attn_output")?);
            let (gate, up, down) = (q("ffn_gate")?, q("ffn_up")?, q("ffn_down")?);
            blocks.push(Block {
                attention_norm: RmsNorm::from_qtensor(
                    tensor(&format!("blk.{i}.attn_norm.weight"))?,
                    eps,
                )?,
                ffn_norm: RmsNorm::from_qtensor(tensor(&format!("blk.{i}.ffn_norm.weight"))?, eps)?,
                wq,
                wk,
                wv,
                wo,
                gate,
                up,
                down,
            });
        }
        let (cos, sin) = rope_tables(head_dim, rope_base, context, device)?;
        let (cos_rows, sin_rows) = (flat(&cos)?, flat(&sin)?);
        Ok(Llama {
            embeddings,
            blocks,
            norm,
            output,
            rotary: Rotary { cos_rows, sin_rows },
            shape: Shape {
                heads,
                kv_heads,
                head_dim,
                context,
                rope,
            },
            device: device.clone(),
        })
    }

    /// An empty cache for a new sequence.
    pub fn new_cache(&self) -> KvCache {
        KvCache {
            blocks: vec![LayerCache::default(); self.blocks.len()],
        }
    }

    fn check_context(&self, end: usize) -> Result<()> {
        if end > self.shape.context {
            candle_core::bail!(
                "{end} tokens exceed the model's context of {}",
                self.shape.context
            );
        }
        Ok(())
    }

    /// Runs `tokens` of one sequence, which start at `position` (`cache`
    /// holds the `position` tokens before them), and returns f32 logits of
    /// shape (n, vocab): n = 1 for [`Logits::Last`], else one row per token.
    pub fn forward(
        &self,
        cache: &mut KvCache,
        tokens: &[u32],
        position: usize,
        logits: Logits,
    ) -> Result<Tensor> {
        // On a rayon worker for the reason `decode_step` gives.
        rayon::scope(|_| self.forward_on_worker(cache, tokens, position, logits))
    }

    fn forward_on_worker(
        &self,
        cache: &mut KvCache,
        tokens: &[u32],
        position: usize,
        logits: Logits,
    ) -> Result<Tensor> {
        let n = tokens.len();
        self.check_context(position + n)?;
        let x = self.layers(tokens, false, |index, q, k, v| {
            let (mut q, mut k, v) = (flat(q)?, flat(k)?, flat(v)?);
            let y = attend_rows(
                self.shape,
                &self.rotary,
                &mut q,
                &mut k,
                &v,
                position,
                &mut cache.blocks[index],
            );
            Tensor::from_vec(
                y,
                (1, n, self.shape.heads * self.shape.head_dim),
                &self.device,
            )
        })?;
        let x = match logits {
            Logits::Last => x.i(n - 1..n)?,
            Logits::All => x,
        };
        self.output.forward(&x, false)?.to_dtype(DType::F32)
    }

    /// Advances several sequences by one token each: `tokens[i]` sits at
    /// `positions[i]` of the sequence whose cache is `caches[i]`. Returns f32
    /// logits of shape (sequences, vocab). Row i is what [`Llama::forward`]
    /// gives for that sequence alone, up to the rounding of a matrix product
    /// with more rows.
    pub fn decode_step(
        &self,
        caches: &mut [&mut KvCache],
        tokens: &[u32],
        positions: &[usize],
    ) -> Result<Tensor> {
        if caches.len() != tokens.len() || positions.len() != tokens.len() {
            candle_core::bail!("one cache and one position per token");
        }
        for &position in positions {
            self.check_context(position + 1)?;
        }
        // On a rayon worker, each product's parallel loop is handed to an
        // idle worker directly; from any other thread every one of the
        // step's ~200 loops would wait for a worker to wake and then for
        // this thread to wake, about 20 us each.
        rayon::scope(|_| self.step_on_worker(caches, tokens, positions))
    }

    fn step_on_worker(
        &self,
        caches: &mut [&mut KvCache],
        tokens: &[u32],
        positions: &[usize],
    ) -> Result<Tensor> {
        let x = self.layers(tokens, true, |index, q, k, v| {
            let (mut q, mut k, v) = (flat(q)?, flat(k)?, flat(v)?);
            let (q_width, kv_width) = (q.len() / tokens.len(), k.len() / tokens.len());
            let mut out = Vec::with_capacity(q.len());
            for (i, &position) in positions.iter().enumerate() {
                out.extend(attend_rows(
                    self.shape,
                    &self.rotary,
                    &mut q[i * q_width..(i + 1) * q_width],
                    &mut k[i * kv_width..(i + 1) * kv_width],
                    &v[i * kv_width..(i + 1) * kv_width],
                    position,
                    &mut caches[i].blocks[index],
                ));
            }
            Tensor::from_vec(out, (1, tokens.len(), q_width), &self.device)
        })?;
        self.output.forward(&x, true)?.to_dtype(DType::F32)
    }

    /// The blocks over `tokens` as one (1, n, hidden) batch: every weight
    /// product covers all n rows, and `attention(block index, q, k, v)`
    /// turns the rows' projections into their attention outputs, (1, n,
    /// hidden) before the output projection. `step` marks a decode step.
    /// Returns the final norm's (n, hidden) rows.
    fn layers(
        &self,
        tokens: &[u32],
        step: bool,
        mut attention: impl FnMut(usize, &Tensor, &Tensor, &Tensor) -> Result<Tensor>,
    ) -> Result<Tensor> {
        let mut x = self.embeddings.forward(tokens, &self.device)?;
        for (index, block) in self.blocks.iter().enumerate() {
            let normed = block.attention_norm.forward(&x)?;
            let (q, k, v) = (
                block.wq.forward(&normed, step)?,
                block.wk.forward(&normed, step)?,
                block.wv.forward(&normed, step)?,
            );
            x = (x + block.wo.forward(&attention(index, &q, &k, &v)?, step)?)?;
            let normed = block.ffn_norm.forward(&x)?;
            let gated = block.swiglu(&normed, step)?;
            x = (x + block.down.forward(&gated, step)?)?;
        }
        self.norm.forward(&x)?.squeeze(0)
    }
}

/// A tensor's values in row-major order.
fn flat(t: &Tensor) -> Result<Vec<f32>> {
    t.flatten_all()?.to_dtype(DType::F32)?.to_vec1::<f32>()
}
