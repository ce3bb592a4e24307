//! Prefill and decode speed of the local backend (SmolLM2-135M-Instruct,
//! Q4_1 GGUF) on this machine, for both weight layouts.
//!
//! The prompt is a ~700-token 3-shot-sized text (the start of the local
//! Python's textwrap.py). Prefill rate = prompt tokens / time to the first
//! generated token; decode rate = further tokens / their time. Best of 3.
//!
//! The baseline is llama.cpp on the same GGUF and prompt, in the same run:
//! `benches/llama_cpp/build.sh` builds it from the llama-cpp-sys-2 crate's
//! sources (first run only) and `timing.cpp` measures it the same way. The
//! bench also checks that llama.cpp's tokenizer gives the prompt the same
//! ids as codecal's, which tests the tokenizer rebuilt from GGUF metadata.
//!
//! Then the README main job's own prompts (`runs/default/prompts.jsonl`,
//! written by `cargo run --release -- run`; skipped with the reason where
//! absent), generated with its decoding (greedy, at most 100 tokens, stop at
//! a newline) by codecal one prompt at a time and with the default
//! `--parallel`: prompts per hour, generated tokens per second, and the
//! ratio. llama.cpp at the same parallelism is not in this bench yet.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use candle_core::Device;
use codecal::corpus::mine::python_stdlib;
use codecal::generate::batch::{parallel_map, read_prompts};
use codecal::generate::local::default_parallel;
use codecal::generate::local::{LocalBackend, Weights};
use codecal::generate::{Backend, Generation, Params};
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
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let baseline = llama_cpp(&gguf, prompt_text(&prompt), threads);
    println!(
        "| engine | prompt tokens | prefill tok/s | decode tok/s | prefill ratio | decode ratio |"
    );
    println!("|---|---|---|---|---|---|");
    if let Some(b) = &baseline {
        println!(
            "| llama.cpp ({threads} threads) | {} | {:.0} | {:.1} | 1 | 1 |",
            b.prompt_tokens, b.prefill, b.decode
        );
    }
    for weights in [Weights::F32, Weights::Quantized, Weights::F16] {
        let backend = LocalBackend::load(&gguf, "bench", &Device::Cpu, weights).expect("load");
        let (first, g) = timed(&backend, &prompt, 1);
        let prompt_tokens = g.prompt_tokens.unwrap_or(0);
        let (all, g) = timed(&backend, &prompt, DECODE_TOKENS + 1);
        let decoded = g.tokens.len().saturating_sub(1).max(1);
        let (prefill, decode) = (prompt_tokens as f64 / first, decoded as f64 / (all - first));
        let ratio = |ours: f64, theirs: Option<f64>| {
            theirs.map_or("-".to_owned(), |t| format!("{:.2}x", ours / t))
        };
        println!(
            "| codecal {weights:?} | {prompt_tokens} | {prefill:.0} | {decode:.1} | {} | {} |",
            ratio(prefill, baseline.as_ref().map(|b| b.prefill)),
            ratio(decode, baseline.as_ref().map(|b| b.decode)),
        );
        if let (Some(b), Weights::F32) = (&baseline, weights) {
            let ours = backend.encode(prompt_text(&prompt)).expect("encode");
            println!(
                "\ntokenizer check: llama.cpp and codecal give the prompt {} ids ({} and {} ids)\n",
                if ours == b.ids {
                    "the same"
                } else {
                    "DIFFERENT"
                },
                b.ids.len(),
                ours.len()
            );
        }
    }
    aggregate(&gguf);
}

/// The main job's prompts through codecal at parallelism 1 and the default.
fn aggregate(gguf: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("runs/default/prompts.jsonl");
    if !path.exists() {
        println!(
            "aggregate: skipped, {} is missing (run `cargo run --release -- run` first)",
            path.display()
        );
        return;
    }
    let rows = read_prompts(&path).expect("the main job's prompts");
    let params = Params {
        max_tokens: 100,
        stop: vec!["\n".to_owned()],
        ..Params::default()
    };
    println!(
        "\n| engine | parallel | prompts | seconds | prompts/hour | generated tok/s | vs parallel 1 |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut first = None;
    for parallel in [1, default_parallel()] {
        let backend = LocalBackend::load(gguf, "bench", &Device::Cpu, Weights::F32)
            .expect("load")
            .with_parallel(parallel);
        let start = Instant::now();
        let answers = parallel_map(parallel, &rows, |row| {
            backend
                .generate(&row.prompt, &params)
                .map(|g| g.tokens.len())
        })
        .expect("generation");
        let seconds = start.elapsed().as_secs_f64();
        let tokens: usize = answers.iter().sum();
        let rate = tokens as f64 / seconds;
        let base = *first.get_or_insert(rate);
        println!(
            "| codecal F32 | {parallel} | {} | {seconds:.1} | {:.0} | {rate:.1} | {:.2}x |",
            rows.len(),
            rows.len() as f64 * 3600.0 / seconds,
            rate / base
        );
    }
}

fn prompt_text(prompt: &Prompt) -> &str {
    match prompt {
        Prompt::Completion(text) => text,
        Prompt::Chat(_) => unreachable!("the bench prompt is a completion"),
    }
}

struct Baseline {
    prompt_tokens: usize,
    prefill: f64,
    decode: f64,
    ids: Vec<u32>,
}

/// llama.cpp's rates on the same prompt, or None (with the reason) where it cannot be built.
fn llama_cpp(gguf: &Path, prompt: &str, threads: usize) -> Option<Baseline> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let built = Command::new("bash")
        .arg(root.join("benches/llama_cpp/build.sh"))
        .output()
        .ok()?;
    if !built.status.success() {
        eprintln!(
            "llama.cpp baseline not built: {}",
            String::from_utf8_lossy(&built.stderr)
        );
        return None;
    }
    let program = String::from_utf8_lossy(&built.stdout).trim().to_owned();
    let prompt_file = root.join("target/llama-cpp/prompt.txt");
    std::fs::write(&prompt_file, prompt).ok()?;
    let out = Command::new(program)
        .arg(gguf)
        .arg(&prompt_file)
        .arg(DECODE_TOKENS.to_string())
        .arg(threads.to_string())
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "llama.cpp baseline failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    Some(Baseline {
        prompt_tokens: v["prompt_tokens"].as_u64()? as usize,
        prefill: v["prefill_tokens_per_s"].as_f64()?,
        decode: v["decode_tokens_per_s"].as_f64()?,
        ids: v["ids"]
            .as_array()?
            .iter()
            .filter_map(|i| i.as_u64().map(|i| i as u32))
            .collect(),
    })
}
