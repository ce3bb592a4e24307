//! The agreement stage of a summarization run: each function's main summary
//! and its sampled summaries are embedded with the scorer's SentenceBERT,
//! and their similarities counted into confidences
//! (`confidence::agreement`): semantic consistency, the main summary's
//! similarity to the samples, and semantic entropy over clusters at a cut.
//! The cut is the best-F1 threshold on `sbert_cosine01` that the human
//! ratings chose (the thresholds file), never one tuned on the run's own
//! items. Writes `agreement/<label>.jsonl`, one line per generation row.
//! Not the sampling (the generation stage's) nor the calibration.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::artifact::{create_dir, write_atomic};
use crate::confidence::agreement::SemanticAgreement;
use crate::models::ModelHome;
use crate::pipeline::artifacts::{failed, read_jsonl, text_field};
use crate::pipeline::config::RunConfig;
use crate::pipeline::embedding::sentence_embeddings;
use crate::pipeline::sampled::{confidence_map, sample_tokens, samples_of};
use crate::pipeline::{Books, PipelineError, hash_strings};
use crate::thresholds::file::{OperatingPointName, read_threshold};

/// The metric whose human-rated threshold is the clustering cut.
const CUT_METRIC: &str = "sbert_cosine01";

/// The thresholds file that holds the cut: the run's own when it is on
/// `sbert_cosine01`, else the one shipped for it.
fn cut_file(config: &RunConfig) -> PathBuf {
    match read_threshold(&config.scoring.thresholds, OperatingPointName::BestF1) {
        Ok(found) if found.metric == CUT_METRIC => config.scoring.thresholds.clone(),
        _ => PathBuf::from(crate::pipeline::config::DEFAULT_SBERT_THRESHOLDS),
    }
}

fn cut(path: &Path) -> Result<f64, PipelineError> {
    let found =
        read_threshold(path, OperatingPointName::BestF1).map_err(|e| failed("agreement", e))?;
    if found.metric != CUT_METRIC {
        return Err(failed(
            "agreement",
            format!(
                "{}: holds {} thresholds, not {CUT_METRIC}",
                path.display(),
                found.metric
            ),
        ));
    }
    Ok(found.threshold)
}

pub(super) fn stage(
    config: &RunConfig,
    label: &str,
    home: &ModelHome,
    books: &mut Books,
) -> Result<(), PipelineError> {
    let generations = format!("generations/{label}.jsonl");
    let cut_path = cut_file(config);
    let cut = cut(&cut_path)?;
    let inputs = vec![
        books.file_hash(&generations)?,
        hash_strings(&[
            cut.to_string(),
            config.scoring.device.clone(),
            include_str!("../../confidence/agreement.rs").to_owned(),
        ]),
    ];
    let output = format!("agreement/{label}.jsonl");
    books.item_stage(
        &format!("agreement {label}"),
        &inputs,
        std::slice::from_ref(&output),
        0,
        |dir| {
            let rows = read_jsonl(&dir.join(&generations))?;
            let lines = agreement_lines(config, home, &rows, cut)?;
            create_dir(&dir.join("agreement"))?;
            write_atomic(&dir.join(&output), lines.as_bytes())?;
            Ok(())
        },
    )
}

fn agreement_lines(
    config: &RunConfig,
    home: &ModelHome,
    rows: &[Value],
    cut: f64,
) -> Result<String, PipelineError> {
    let mut texts: Vec<String> = Vec::new();
    for row in rows {
        texts.push(text_field(row, "text"));
        for sample in row["samples"].as_array().into_iter().flatten() {
            texts.push(text_field(sample, "text"));
        }
    }
    let borrowed: Vec<&str> = texts.iter().map(String::as_str).collect();
    let embeddings = sentence_embeddings(config, home, &borrowed, "agreement")?;
    let mut next = embeddings.into_iter();
    let mut lines = String::new();
    for row in rows {
        let samples = samples_of(row);
        let greedy = next.next().unwrap_or_default();
        let sampled: Vec<Vec<f32>> = next.by_ref().take(samples.len()).collect();
        let agreement = SemanticAgreement::of(&greedy, &sampled, cut);
        let confidence = confidence_map(agreement.as_ref().map(|a| a.measures()));
        let tokens = sample_tokens(&samples);
        let line = json!({
            "id": text_field(row, "id"),
            "cut": cut,
            "cluster_sizes": agreement.as_ref().map(|a| a.sizes.clone()),
            "sample_tokens": tokens,
            "confidence": confidence,
        });
        lines += &(line.to_string() + "\n");
    }
    Ok(lines)
}
