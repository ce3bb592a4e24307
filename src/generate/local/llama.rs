//! A quantized Llama-architecture decoder (SmolLM2) read from GGUF, on candle.
//!
//! candle-transformers' `quantized_llama` returns the logits of the last
//! position only. Generation needs that, but checking the log-probabilities
//! of a generation needs a teacher-forced pass that returns every
//! position's logits, so this module runs the same blocks itself and lets
//! the caller choose. It is a model, not a decoder: sampling and stopping
//! are `local`'s job.

use candle_core::quantized::gguf_file::Content;
use candle_core::quantized::{QMatMul, QTensor};
use candle_core::{D, DType, Device, IndexOp, Module, Result, Tensor};
use candle_transformers::quantized_nn::RmsNorm;

/// One transformer block and its key/value cache.
struct Block {
    attention_norm: RmsNorm,
    wq: QMatMul,
    wk: QMatMul,
    wv: QMatMul,
    wo: QMatMul,
    ffn_norm: RmsNorm,
    gate: QMatMul,
    up: QMatMul,
    down: QMatMul,
    cache: Option<(Tensor, Tensor)>,
}

/// The model's shape, from the GGUF metadata.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub context: usize,
}

pub struct Llama {
    embeddings: candle_nn::Embedding,
    blocks: Vec<Block>,
    norm: RmsNorm,
    output: QMatMul,
    cos: Tensor,
    sin: Tensor,
    shape: Shape,
    device: Device,
}

/// How the weight matrices are kept in memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Weights {
    /// Expanded to f32 at load: the fast path on a CPU (the default).
    #[default]
    F32,
    /// As stored (Q4_1), multiplied with 8-bit-quantized activations as in llama.cpp.
    Quantized,
    /// Expanded to f16 at load: half the memory traffic of f32 per decoded
    /// token, so faster decoding, but one-row and batched products round
    /// differently (about 1e-3 nats).
    F16,
}

/// Which logits [`Llama::forward`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logits {
    Last,
    All,
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
        if arch != "llama" {
            candle_core::bail!("general.architecture is {arch:?}; only \"llama\" is supported");
        }
        let heads = meta("llama.attention.head_count")?.to_u32()? as usize;
        let kv_heads = meta("llama.attention.head_count_kv")?.to_u32()? as usize;
        let hidden = meta("llama.embedding_length")?.to_u32()? as usize;
        let layers = meta("llama.block_count")?.to_u32()? as usize;
        let context = meta("llama.context_length")?.to_u32()? as usize;
        let eps = f64::from(meta("llama.attention.layer_norm_rms_epsilon")?.to_f32()?);
        let rope_base = meta("llama.rope.freq_base")
            .and_then(|v| v.to_f32())
            .unwrap_or(10_000.0);
        let head_dim = hidden / heads;
        let mut tensor = |name: &str| content.tensor(reader, name, device);
        let embedding_weights = tensor("token_embd.weight")?;
        let embeddings = candle_nn::Embedding::new(embedding_weights.dequantize(device)?, hidden);
        let norm = RmsNorm::from_qtensor(tensor("output_norm.weight")?, eps)?;
        // Tied embeddings: without output.weight the embedding matrix projects back.
        let matmul = |q: QTensor| match weights {
            Weights::Quantized => QMatMul::from_qtensor(q),
            Weights::F32 => Ok(QMatMul::Tensor(q.dequantize(device)?)),
            Weights::F16 => Ok(QMatMul::TensorF16(q.dequantize_f16(device)?)),
        };
        let output = matmul(match tensor("output.weight") {
            Ok(t) => t,
            Err(_) => embedding_weights,
        })?;
        let mut blocks = Vec::with_capacity(layers);
        for i in 0..layers {
            let mut q = |part: &str| matmul(tensor(&format!("blk.{i}.{part}.weight"))?);
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
                cache: None,
            });
        }
        let (cos, sin) = rope_tables(head_dim, rope_base, context, device)?;
        Ok(Llama {
            embeddings,
            blocks,
            norm,
            output,
            cos,
            sin,
            shape: Shape {
                heads,
                kv_heads,
                head_dim,
                context,
            },
            device: device.clone(),
        })
    }

    /// Forgets the key/value cache, before a new sequence.
    pub fn clear_cache(&mut self) {
        for block in &mut self.blocks {
            block.cache = None;
        }
    }

    /// Runs `tokens`, which start at `position` in the sequence (the cache
    /// holds the `position` tokens before them), and returns f32 logits of
    /// shape (n, vocab): n = 1 for [`Logits::Last`], else one row per token.
    pub fn forward(&mut self, tokens: &[u32], position: usize, logits: Logits) -> Result<Tensor> {
        let n = tokens.len();
        if position + n > self.shape.context {
            candle_core::bail!(
                "{} tokens exceed the model's context of {}",
                position + n,
                self.shape.context
            );
        }
        let input = Tensor::new(tokens, &self.device)?.unsqueeze(0)?;
        let mask = (n > 1)
            .then(|| candle_transformers::utils::build_causal_mask(n, position, &self.device))
            .transpose()?;
        let cos = self.cos.narrow(0, position, n)?;
        let sin = self.sin.narrow(0, position, n)?;
        let mut x = self.embeddings.forward(&input)?;
        for block in &mut self.blocks {
            let attention = block.attention(
                &block.attention_norm.forward(&x)?,
                mask.as_ref(),
                (&cos, &sin),
                self.shape,
            )?;
            x = (x + attention)?;
            let normed = block.ffn_norm.forward(&x)?;
            let gated = (candle_nn::ops::silu(&block.gate.forward(&normed)?)?
                * block.up.forward(&normed)?)?;
            x = (x + block.down.forward(&gated)?)?;
        }
        let x = self.norm.forward(&x)?.squeeze(0)?;
        let x = match logits {
            Logits::Last => x.i(n - 1..n)?,
            Logits::All => x,
        };
        self.output.forward(&x)?.to_dtype(DType::F32)
    }
}

impl Block {
    fn attention(
        &mut self,
        x: &Tensor,
        mask: Option<&Tensor>,
        (cos, sin): (&Tensor, &Tensor),
        shape: Shape,
    ) -> Result<Tensor> {
        let (batch, n, hidden) = x.dims3()?;
        let heads = |t: Tensor, count: usize| {
            t.reshape((batch, n, count, shape.head_dim))?
                .transpose(1, 2)?
                .contiguous()
        };
        let q = heads(self.wq.forward(x)?, shape.heads)?;
        let k = heads(self.wk.forward(x)?, shape.kv_heads)?;
        let v = heads(self.wv.forward(x)?, shape.kv_heads)?;
        // GGUF's Llama weights are permuted for interleaved (GPT-J style) rotary pairs.
        let q = candle_nn::rotary_emb::rope_i(&q, cos, sin)?;
        let k = candle_nn::rotary_emb::rope_i(&k, cos, sin)?;
        let (k, v) = match self.cache.take() {
            Some((k_cache, v_cache)) => (
                Tensor::cat(&[&k_cache, &k], 2)?,
                Tensor::cat(&[&v_cache, &v], 2)?,
            ),
            None => (k, v),
        };
        self.cache = Some((k.clone(), v.clone()));
        let repeat = shape.heads / shape.kv_heads;
        let k = candle_transformers::utils::repeat_kv(k, repeat)?;
        let v = candle_transformers::utils::repeat_kv(v, repeat)?.contiguous()?;
        let scores = (q.matmul(&k.t()?)? / (shape.head_dim as f64).sqrt())?;
        let scores = match mask {
            Some(mask) => {
                let mask = mask.broadcast_as(scores.shape())?;
                let neg_inf = Tensor::new(f32::NEG_INFINITY, scores.device())?
                    .broadcast_as(scores.shape())?;
                mask.where_cond(&neg_inf, &scores)?
            }
            None => scores,
        };
        let weights = candle_nn::ops::softmax_last_dim(&scores)?;
        let y = weights.matmul(&v)?;
        let y = y.transpose(1, 2)?.reshape((batch, n, hidden))?;
        self.wo.forward(&y)
    }
}

fn rope_tables(
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
