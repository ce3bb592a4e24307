//! The scorer's SentenceBERT (all-MiniLM-L6-v2 on ONNX Runtime) as every
//! flow opens it: on the `[scoring] device`, installed on first use. Shared
//! by the scores stage, the summaries' agreement stage and the
//! `code_cluster` group feature. Not what the embeddings are used for.

use super::PipelineError;
use super::artifacts::failed;
use super::config::RunConfig;
use crate::models::ModelHome;

/// The embedder on the run's device; errors name `stage`.
#[cfg(feature = "onnx")]
pub(crate) fn open_minilm(
    config: &RunConfig,
    home: &ModelHome,
    stage: &str,
) -> Result<crate::score::OnnxEmbedder, PipelineError> {
    use crate::score::{EmbedOptions, OnnxEmbedder};
    let device = config.scoring.device;
    let files = home
        .ensure_minilm_on(device)
        .map_err(|e| failed(stage, e))?;
    let options = EmbedOptions {
        device,
        ..EmbedOptions::default()
    };
    OnnxEmbedder::new(&files, &options).map_err(|e| failed(stage, e))
}

/// Each text's sentence embedding (L2-normalised); errors name `stage`.
#[cfg(feature = "onnx")]
pub(crate) fn sentence_embeddings(
    config: &RunConfig,
    home: &ModelHome,
    texts: &[&str],
    stage: &str,
) -> Result<Vec<Vec<f32>>, PipelineError> {
    use crate::score::Embedder;
    let mut embedder = open_minilm(config, home, stage)?;
    Ok(embedder
        .embed(texts)
        .map_err(|e| failed(stage, e))?
        .into_iter()
        .map(|e| e.sentence)
        .collect())
}

#[cfg(not(feature = "onnx"))]
pub(crate) fn sentence_embeddings(
    _: &RunConfig,
    _: &ModelHome,
    _: &[&str],
    stage: &str,
) -> Result<Vec<Vec<f32>>, PipelineError> {
    Err(failed(
        stage,
        "this codecal was built without the `onnx` feature",
    ))
}
