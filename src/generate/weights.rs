//! How the local model keeps its weight matrices in memory: a choice that
//! a config names (`lm_weights`) even in a build without the local model,
//! so that such a build still reads every config and its check can say
//! what is missing. What each layout does is `generate::local`'s.

/// How the weight matrices are kept in memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Weights {
    /// Expanded to f32 at load: the fast path on a CPU (the default).
    #[default]
    F32,
    /// As stored (SmolLM2's Q4_1 and Q8_0; the Qwen files' Q5_0, Q4_K and
    /// Q6_K), multiplied with 8-bit-quantized activations as in llama.cpp:
    /// llama.cpp's arithmetic,
    /// and a decode step and a pass over the prompt agree to about 0.1 nats
    /// (8-bit rounding amplifies f32 differences), not 1e-4.
    Quantized,
    /// Expanded to f16 at load: half the memory traffic of f32 per decoded
    /// token, so faster decoding, but one-row and batched products round
    /// differently (about 1e-3 nats).
    F16,
    /// The f32 layout's passes over a prompt (dense f32 products) with the
    /// quantized layout's decode steps (8-bit activations on the GGUF's
    /// blocks): the fastest of the layouts for the Qwen files' K-quants on
    /// a CPU, whose f32 expansion costs more than reading them. A decode
    /// step and a teacher-forced pass then differ by the 8-bit rounding
    /// (tenths of a nat at worst, as the quantized layout).
    Mixed,
}

crate::choices!(Weights { F32 => "f32", Quantized => "quantized", F16 => "f16", Mixed => "mixed" });
