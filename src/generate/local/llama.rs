//! A quantized Llama-architecture decoder (SmolLM2) read from GGUF, on candle.
//!
//! candle-transformers' `quantized_llama` returns the logits of the last
//! position only. Generation needs that, but checking the log-probabilities
//! of a generation needs a teacher-forced pass that returns every
//! position's logits, so this module runs the same blocks itself and lets
//! the caller choose. It is a model, not a decoder: sampling and stopping
//! are `local`'s job, and so is choosing which sequences share a step.
//!
//! The weights are read-only; each sequence's key/value cache is its own
//! [`KvCache`], so one [`Llama`] serves several sequences at once.
//! [`Llama::decode_step`] advances several sequences by one token each with
//! one matrix product per weight (the weights are read once for all of them),
//! while attention runs per sequence over its own cache.

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
}

/// One sequence's keys and values, per block, for the positions it has run.
pub struct KvCache {
    blocks: Vec<Option<(Tensor, Tensor)>>,
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

    /// An empty cache for a new sequence.
    pub fn new_cache(&self) -> KvCache {
        KvCache {
            blocks: vec![None; self.blocks.len()],
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
        let n = tokens.len();
        self.check_context(position + n)?;
        let mask = (n > 1)
            .then(|| candle_transformers::utils::build_causal_mask(n, position, &self.device))
            .transpose()?;
        let rope = (
            self.cos.narrow(0, position, n)?,
            self.sin.narrow(0, position, n)?,
        );
        let x = self.layers(tokens, |index, q, k, v| {
            attend(
                q,
                k,
                v,
                mask.as_ref(),
                &rope,
                &mut cache.blocks[index],
                self.shape,
            )
        })?;
        let x = match logits {
            Logits::Last => x.i(n - 1..n)?,
            Logits::All => x,
        };
        self.output.forward(&x)?.to_dtype(DType::F32)
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
        let ropes = positions
            .iter()
            .map(|&p| Ok((self.cos.narrow(0, p, 1)?, self.sin.narrow(0, p, 1)?)))
            .collect::<Result<Vec<_>>>()?;
        let x = self.layers(tokens, |index, q, k, v| {
            let rows = (0..tokens.len())
                .map(|i| {
                    let row = |t: &Tensor| t.narrow(1, i, 1);
                    let cache = &mut caches[i].blocks[index];
                    attend(
                        &row(q)?,
                        &row(k)?,
                        &row(v)?,
                        None,
                        &ropes[i],
                        cache,
                        self.shape,
                    )
                })
                .collect::<Result<Vec<_>>>()?;
            Tensor::cat(&rows, 1)
        })?;
        self.output.forward(&x)?.to_dtype(DType::F32)
    }

    /// The blocks over `tokens` as one (1, n, hidden) batch: every weight
    /// product covers all n rows, and `attention(block index, q, k, v)`
    /// turns the rows' projections into their attention outputs, (1, n,
    /// hidden) before the output projection. Returns the final norm's (n,
    /// hidden) rows.
    fn layers(
        &self,
        tokens: &[u32],
        mut attention: impl FnMut(usize, &Tensor, &Tensor, &Tensor) -> Result<Tensor>,
    ) -> Result<Tensor> {
        let input = Tensor::new(tokens, &self.device)?.unsqueeze(0)?;
        let mut x = self.embeddings.forward(&input)?;
        for (index, block) in self.blocks.iter().enumerate() {
            let normed = block.attention_norm.forward(&x)?;
            let (q, k, v) = (
                block.wq.forward(&normed)?,
                block.wk.forward(&normed)?,
                block.wv.forward(&normed)?,
            );
            x = (x + block.wo.forward(&attention(index, &q, &k, &v)?)?)?;
            let normed = block.ffn_norm.forward(&x)?;
            let gated = (candle_nn::ops::silu(&block.gate.forward(&normed)?)?
                * block.up.forward(&normed)?)?;
            x = (x + block.down.forward(&gated)?)?;
        }
        self.norm.forward(&x)?.squeeze(0)
    }
}

/// Attention of one sequence's rows: `q`, `k`, `v` are its (1, n, ·)
/// projections at the positions `rope` covers, `cache` its keys and values
/// before them (extended here). Returns (1, n, hidden).
fn attend(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    mask: Option<&Tensor>,
    (cos, sin): &(Tensor, Tensor),
    cache: &mut Option<(Tensor, Tensor)>,
    shape: Shape,
) -> Result<Tensor> {
    let (batch, n, _) = q.dims3()?;
    let heads = |t: &Tensor, count: usize| {
        t.reshape((batch, n, count, shape.head_dim))?
            .transpose(1, 2)?
            .contiguous()
    };
    let q = heads(q, shape.heads)?;
    let k = heads(k, shape.kv_heads)?;
    let v = heads(v, shape.kv_heads)?;
    // GGUF's Llama weights are permuted for interleaved (GPT-J style) rotary pairs.
    let q = candle_nn::rotary_emb::rope_i(&q, cos, sin)?;
    let k = candle_nn::rotary_emb::rope_i(&k, cos, sin)?;
    let (k, v) = match cache.take() {
        Some((k_cache, v_cache)) => (
            Tensor::cat(&[&k_cache, &k], 2)?,
            Tensor::cat(&[&v_cache, &v], 2)?,
        ),
        None => (k, v),
    };
    *cache = Some((k.clone(), v.clone()));
    let repeat = shape.heads / shape.kv_heads;
    let k = candle_transformers::utils::repeat_kv(k, repeat)?;
    let v = candle_transformers::utils::repeat_kv(v, repeat)?.contiguous()?;
    let scores = (q.matmul(&k.t()?)? / (shape.head_dim as f64).sqrt())?;
    let scores = match mask {
        Some(mask) => {
            let mask = mask.broadcast_as(scores.shape())?;
            let neg_inf =
                Tensor::new(f32::NEG_INFINITY, scores.device())?.broadcast_as(scores.shape())?;
            mask.where_cond(&neg_inf, &scores)?
        }
        None => scores,
    };
    let weights = candle_nn::ops::softmax_last_dim(&scores)?;
    let y = weights.matmul(&v)?;
    y.transpose(1, 2)?
        .reshape((batch, n, shape.heads * shape.head_dim))
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
