#![cfg(feature = "onnx")]
//! The embedder's CUDA path. On a machine with an NVIDIA GPU: the
//! sentence-transformers reference vectors, embedded on the GPU. Elsewhere:
//! `--device cuda` is refused before anything is downloaded.
//!
//! A test binary of its own, because a process loads one build of ONNX
//! Runtime and the other model tests load the CPU build.

mod common;

use codecal::models::{ModelHome, nvidia_gpu_present};
use codecal::score::{Device, EmbedOptions, OnnxEmbedder};

#[test]
fn cuda_embeddings_match_sentence_transformers() {
    if !nvidia_gpu_present() {
        assert!(
            std::env::var_os("CODECAL_REQUIRE_GPU").is_none(),
            "CODECAL_REQUIRE_GPU is set, but this machine has no NVIDIA GPU"
        );
        eprintln!(
            "SKIPPED: no NVIDIA GPU here (no /proc/driver/nvidia/version); the CUDA path needs one"
        );
        return;
    }
    let files = ModelHome::from_env()
        .and_then(|home| home.ensure_minilm_on(Device::Cuda))
        .expect("the CUDA set-up");
    let options = EmbedOptions {
        device: Device::Cuda,
        ..EmbedOptions::default()
    };
    let mut embedder = OnnxEmbedder::new(&files, &options).expect("a CUDA session");
    common::assert_matches_sentence_transformers(&mut embedder);
}

#[test]
fn device_cuda_without_a_gpu_is_refused_before_any_download() {
    if nvidia_gpu_present() {
        eprintln!("SKIPPED: this machine has an NVIDIA GPU, so device cuda is not refused here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::write(
        dir.path().join("pairs.csv"),
        "id,reference,candidate\na,x,y\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args(["score", "pairs.csv", "--device", "cuda"])
        .env("CODECAL_HOME", &home)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("device cuda") && stderr.contains("no NVIDIA GPU"),
        "{stderr}"
    );
    assert!(
        !home.exists(),
        "nothing is installed for a device that cannot run"
    );
}
