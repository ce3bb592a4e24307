//! Prefill and decode speed of the local backend (SmolLM2-135M-Instruct,
//! Q4_1 GGUF) on this machine, for both weight layouts.
//!
//! The prompt is a ~700-token 3-shot-sized text (the start of the local
//! Python's textwrap.py). Prefill rate = prompt tokens / time to the first
//! generated token; decode rate = further tokens / their time. Best of 3.
//!
//! The issue asks for llama.cpp on the same GGUF beside these numbers; that
//! baseline is not built here yet, so this bench reports codecal alone.

use std::time::Instant;

use candle_core::Device;
use codecal::corpus::mine::python_stdlib;
use codecal::generate::local::{LocalBackend, Weights};
use codecal::generate::{Generation, Params};
use codecal::models::ModelHome;
use codecal::prompt::Prompt;

const DECODE_TOKENS: usize = 64;

fn timed(backend: &LocalBackend, prompt: &Prompt, max_tokens: usize) -> (f64, Generation) {
    let params = Params {
        max_tokens,
        stop: Vec::new(),
        ..Params::default()
    };
    (0..3)
        .map(|_| {
            let start = Instant::now();
            let g = backend
                .generate_ids(prompt, &params)
                .expect("generation")
                .generation;
            (start.elapsed().as_secs_f64(), g)
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .expect("three runs")
}

fn main() {
    let gguf = ModelHome::from_env()
        .and_then(|h| h.ensure_smollm2())
        .expect("SmolLM2 set-up");
    let source = std::fs::read_to_string(python_stdlib().expect("python3").join("textwrap.py"))
        .expect("textwrap.py");
    let text: String = source.chars().take(2800).collect();
    // A prompt that does not invite an early end token.
    let prompt = Prompt::Completion(format!("{text}\n\nExplain this module in detail:\n"));
    println!("| weights | prompt tokens | prefill tok/s | decode tok/s |");
    println!("|---|---|---|---|");
    for weights in [Weights::F32, Weights::Quantized] {
        let backend = LocalBackend::load(&gguf, "bench", &Device::Cpu, weights).expect("load");
        let (first, g) = timed(&backend, &prompt, 1);
        let prompt_tokens = g.prompt_tokens.unwrap_or(0);
        let (all, g) = timed(&backend, &prompt, DECODE_TOKENS + 1);
        let decoded = g.tokens.len().saturating_sub(1).max(1);
        println!(
            "| {weights:?} | {prompt_tokens} | {:.0} | {:.1} |",
            prompt_tokens as f64 / first,
            decoded as f64 / (all - first)
        );
    }
}
