#![cfg(feature = "onnx")]
//! Tests that need the real all-MiniLM-L6-v2 on ONNX Runtime.
//!
//! The model is installed on first use (see `common::model_files`).

mod common;

use std::sync::{Mutex, OnceLock};

use codecal::score::{EmbedOptions, Embedder, OnnxEmbedder};
use common::model_files;

/// One embedder shared by the tests (loading the session is the slow part).
fn embedder() -> Option<&'static Mutex<OnnxEmbedder>> {
    static EMBEDDER: OnceLock<Mutex<OnnxEmbedder>> = OnceLock::new();
    let files = model_files()?;
    Some(EMBEDDER.get_or_init(|| {
        let embedder = OnnxEmbedder::new(&files, &EmbedOptions::default()).expect("session loads");
        Mutex::new(embedder)
    }))
}

#[test]
fn sentence_embeddings_match_sentence_transformers() {
    let Some(embedder) = embedder() else { return };
    common::assert_matches_sentence_transformers(&mut *embedder.lock().unwrap());
}

#[test]
fn batching_does_not_change_embeddings() {
    let Some(embedder) = embedder() else { return };
    let texts = [
        "a short one",
        "a much longer sentence with many more words in it than the other",
        "x",
    ];
    let mut embedder = embedder.lock().unwrap();
    let together = embedder.embed(&texts).unwrap();
    for (i, text) in texts.iter().enumerate() {
        let alone = embedder.embed(&[text]).unwrap();
        for (a, b) in alone[0].sentence.iter().zip(&together[i].sentence) {
            assert!((a - b).abs() < 1e-5, "{text}");
        }
        assert_eq!(alone[0].tokens.len(), together[i].tokens.len());
    }
}

#[test]
fn batches_in_parallel_sessions_come_back_in_order() {
    let Some(files) = model_files() else { return };
    let texts: Vec<String> = (0..40)
        .map(|i| format!("returns item {i} of the list{}", " and more".repeat(i % 7)))
        .collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let embed_with = |threads| {
        let options = EmbedOptions {
            batch_size: 3,
            threads,
            ..EmbedOptions::default()
        };
        OnnxEmbedder::new(&files, &options)
            .unwrap()
            .embed(&texts)
            .unwrap()
    };
    let (one_session, four_sessions) = (embed_with(1), embed_with(4));
    for (text, (a, b)) in texts.iter().zip(one_session.iter().zip(&four_sessions)) {
        assert_eq!(a.tokens.len(), b.tokens.len(), "{text}");
        for (x, y) in a.sentence.iter().zip(&b.sentence) {
            assert!((x - y).abs() < 1e-6, "{text}");
        }
    }
}

#[test]
fn token_ids_match_the_reference_tokenizer() {
    let Some(files) = model_files() else { return };
    let tokenizer = codecal::score::embed::load_tokenizer(&files).unwrap();
    let encoding = tokenizer
        .encode("This is an example sentence", true)
        .unwrap();
    assert_eq!(encoding.get_ids(), [101, 2023, 2003, 2019, 2742, 6251, 102]);
}

#[test]
fn long_texts_are_truncated_and_counted() {
    let Some(files) = model_files() else { return };
    let mut embedder = OnnxEmbedder::new(&files, &EmbedOptions::default()).unwrap();
    let long = "word ".repeat(400);
    let embeddings = embedder.embed(&[&long, "short"]).unwrap();
    assert_eq!(embedder.truncated(), 1);
    assert_eq!(
        embeddings[0].tokens.len(),
        254,
        "256 tokens less [CLS] and [SEP]"
    );
}

#[test]
fn score_command_writes_one_row_per_pair() {
    if model_files().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = "id,reference,candidate\n\
                 a,returns the sum of two numbers,returns the sum of two numbers\n\
                 b,returns the sum of two numbers,\"opens a file, then reads it\"\n\
                 c,returns the sum of two numbers,\n";
    std::fs::write(dir.path().join("pairs.csv"), input).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args(["score", "pairs.csv", "--out", "scores.csv"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.path().join("scores.csv")).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 4);
    assert_eq!(&rows[0][..3], ["id", "sbert_cosine", "sbert_cosine01"]);
    let cosine = |row: usize| rows[row][1].parse::<f64>().unwrap();
    assert!((cosine(1) - 1.0).abs() < 1e-5, "identical texts");
    assert!(cosine(2) < 0.5, "unrelated texts: {}", cosine(2));
    assert!(
        cosine(3).is_finite(),
        "an empty candidate is embedded, not rejected"
    );
}
