//! Embedding throughput: codecal's `OnnxEmbedder` beside Python `onnxruntime`
//! (benches/ort_embed.py) on the same ONNX file, tokenizer, texts, batch size
//! (32) and thread count, on the CPU, in the same run.
//!
//! Texts: every reference docstring (`final_1.gold`) and Codex output
//! (`result_10.output`) of ../shared/data/fewshot-codexglue/. Before reporting
//! speed, the first text's embedding from both is checked to agree to 1e-5.
//! Where an NVIDIA GPU is present, the bench also embeds the texts with the
//! CUDA provider (batch 256), in a child process of itself, since a process
//! loads one build of ONNX Runtime; elsewhere it says why it skips that.
//! Results go to stdout and target/bench-results/embed.json.
//!
//! Run: cargo bench --bench embed

#[path = "common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use codecal::models::{ModelHome, nvidia_gpu_present};
use codecal::score::{Device, EmbedOptions, Embedder, OnnxEmbedder};
use serde_json::{Value, json};

/// Set in the child process that measures the CUDA provider.
const CUDA_CHILD: &str = "CODECAL_BENCH_EMBED_CUDA";
const CUDA_BATCH: usize = 256;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let texts = read_texts(&root.join("../shared/data/fewshot-codexglue"));
    if std::env::var_os(CUDA_CHILD).is_some() {
        return measure_cuda(&texts);
    }
    let files = ModelHome::from_env()
        .and_then(|home| home.ensure_minilm())
        .expect("model set-up");
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let work = tempfile::tempdir().expect("temp dir");
    let texts_path = work.path().join("texts.txt");
    std::fs::write(&texts_path, texts.join("\n") + "\n").expect("texts file");

    let options = EmbedOptions {
        batch_size: 32,
        threads,
        ..EmbedOptions::default()
    };
    let mut embedder = OnnxEmbedder::new(&files, &options).expect("session");
    let (codecal_s, first) = best_of_three(&mut embedder, &texts);

    let python = common::baseline_python(
        root,
        "bench-venv-embed",
        "requirements-embed.txt",
        "onnxruntime, tokenizers, numpy",
    );
    let script = root.join("benches/ort_embed.py");
    let mut python_s = f64::INFINITY;
    let mut theirs = Value::Null;
    for _ in 0..3 {
        theirs = json_from(
            Command::new(&python)
                .arg(&script)
                .args([&files.onnx, &files.tokenizer, &texts_path])
                .arg(threads.to_string()),
        );
        python_s = python_s.min(theirs["seconds"].as_f64().unwrap());
    }
    assert_same_leading_dims(&first, &theirs, "codecal and Python onnxruntime");
    let n = texts.len() as f64;
    let (ours, python_rate) = (n / codecal_s, n / python_s);
    println!(
        "embed {} texts, CPU, {threads} threads, batch 32: codecal {ours:.0}/s, Python onnxruntime {python_rate:.0}/s, ratio {:.2}x (best of 3)",
        texts.len(),
        ours / python_rate
    );
    let gflops = matrix_product_flops(&files, &texts) / codecal_s / 1e9;
    println!(
        "codecal's rate is about {gflops:.0} GFLOP/s of the encoder's matrix products (padding not counted)"
    );
    let cuda = cuda_rate(&first);
    let out_dir = root.join("target/bench-results");
    std::fs::create_dir_all(&out_dir).expect("results dir");
    let report = json!({ "bench": "embed", "texts": texts.len(), "threads": threads,
        "codecal_per_s": ours, "python_onnxruntime_per_s": python_rate, "ratio": ours / python_rate,
        "codecal_matrix_gflop_per_s": gflops,
        "codecal_cuda_per_s": cuda, "cuda_batch_size": CUDA_BATCH });
    std::fs::write(
        out_dir.join("embed.json"),
        serde_json::to_string_pretty(&report).unwrap(),
    )
    .expect("results");
}

/// Floating-point operations of all-MiniLM-L6-v2's dense layers over the
/// texts' word pieces: per token and layer, the Q, K, V and output
/// projections (4 h^2 multiply-adds) and the feed-forward pair (2 h f), with
/// h = 384, f = 1536, over 6 layers. Attention scores add a little more.
fn matrix_product_flops(files: &codecal::models::MiniLmFiles, texts: &[String]) -> f64 {
    const HIDDEN: f64 = 384.0;
    const FEED_FORWARD: f64 = 1536.0;
    const LAYERS: f64 = 6.0;
    let tokenizer = codecal::score::embed::load_tokenizer(files).expect("tokenizer");
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let tokens: usize = tokenizer
        .encode_batch(refs, true)
        .expect("tokenized")
        .iter()
        .map(|e| e.len())
        .sum();
    let per_token = 2.0 * LAYERS * (4.0 * HIDDEN * HIDDEN + 2.0 * HIDDEN * FEED_FORWARD);
    tokens as f64 * per_token
}

/// Texts per second on CUDA, measured by a child process; `None` (with the
/// reason printed) where there is no NVIDIA GPU.
fn cuda_rate(cpu_first: &[f32]) -> Option<f64> {
    if !nvidia_gpu_present() {
        println!("embed on CUDA: skipped, this machine has no NVIDIA GPU");
        return None;
    }
    let child =
        json_from(Command::new(std::env::current_exe().expect("own path")).env(CUDA_CHILD, "1"));
    assert_same_leading_dims(cpu_first, &child, "CPU and CUDA");
    let rate = child["per_s"].as_f64().unwrap();
    println!("embed on CUDA, batch {CUDA_BATCH}: codecal {rate:.0}/s (best of 3)");
    Some(rate)
}

/// The child's work: best of 3 over all texts on CUDA, as JSON on stdout.
fn measure_cuda(texts: &[String]) {
    let files = ModelHome::from_env()
        .and_then(|home| home.ensure_minilm_on(Device::Cuda))
        .expect("CUDA set-up");
    let options = EmbedOptions {
        batch_size: CUDA_BATCH,
        device: Device::Cuda,
        ..EmbedOptions::default()
    };
    let mut embedder = OnnxEmbedder::new(&files, &options).expect("CUDA session");
    let (best, first) = best_of_three(&mut embedder, texts);
    let per_s = texts.len() as f64 / best;
    println!("{}", json!({ "per_s": per_s, "first": first }));
}

/// The JSON a finished command printed; panics with its stderr if it failed.
fn json_from(command: &mut Command) -> Value {
    let out = command.output().expect("the command starts");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// Panics unless `ours` and the `first` array of `theirs` agree to 1e-5.
fn assert_same_leading_dims(ours: &[f32], theirs: &Value, engines: &str) {
    for (a, b) in ours.iter().zip(theirs["first"].as_array().unwrap()) {
        let b = b.as_f64().unwrap() as f32;
        assert!(
            (a - b).abs() < 1e-5,
            "{engines} embeddings differ: {a} vs {b}"
        );
    }
}

/// The shortest of three passes over all texts, in seconds, after one
/// untimed batch (session start-up, CUDA's kernel loading), and the first
/// text's leading dimensions to compare with the other engine.
fn best_of_three(embedder: &mut OnnxEmbedder, texts: &[String]) -> (f64, Vec<f32>) {
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    embedder
        .embed(&refs[..32.min(refs.len())])
        .expect("warm-up");
    let mut best = f64::INFINITY;
    let mut first = Vec::new();
    for _ in 0..3 {
        let start = Instant::now();
        let embeddings = embedder.embed(&refs).expect("embedding");
        best = best.min(start.elapsed().as_secs_f64());
        first = embeddings[0].sentence[..8].to_vec();
    }
    (best, first)
}

/// The second field of every line of every `final_1.gold` and `result_10.output`.
fn read_texts(data: &Path) -> Vec<String> {
    let mut texts = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(data)
        .expect("../shared/data/fewshot-codexglue is beside the repo")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        for name in ["final_1.gold", "result_10.output"] {
            let text = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
            for line in text.lines() {
                let body = line.split_once('\t').map_or(line, |(_, t)| t);
                texts.push(body.replace(['\n', '\r'], " "));
            }
        }
    }
    texts
}
