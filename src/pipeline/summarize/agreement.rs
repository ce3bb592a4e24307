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

use crate::artifact::{create_dir, write_atomic};
use crate::confidence::agreement::SemanticAgreement;
use crate::generate::row::GenerationRow;
use crate::models::ModelHome;
use crate::pipeline::artifacts::{failed, read_jsonl, to_jsonl};
use crate::pipeline::config::RunConfig;
use crate::pipeline::embedding::sentence_embeddings;
use crate::pipeline::sampled::{AgreementLine, confidence_map, sample_tokens};
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
            config.scoring.device.to_string(),
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
            let rows: Vec<GenerationRow> = read_jsonl(&dir.join(&generations))?;
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
    rows: &[GenerationRow],
    cut: f64,
) -> Result<String, PipelineError> {
    let mut texts: Vec<&str> = Vec::new();
    for row in rows {
        texts.push(&row.text);
        texts.extend(row.sample_answers().iter().map(|s| s.text.as_str()));
    }
    let embeddings = sentence_embeddings(config, home, &texts, "agreement")?;
    let mut next = embeddings.into_iter();
    let mut lines = Vec::with_capacity(rows.len());
    for row in rows {
        let samples = row.sample_answers();
        let greedy = next.next().unwrap_or_default();
        let sampled: Vec<Vec<f32>> = next.by_ref().take(samples.len()).collect();
        let agreement = SemanticAgreement::of(&greedy, &sampled, cut);
        lines.push(AgreementLine {
            id: row.id.clone(),
            detail: Clusters {
                cut,
                cluster_sizes: agreement.as_ref().map(|a| a.sizes.clone()),
            },
            sample_tokens: sample_tokens(samples),
            confidence: confidence_map(agreement.as_ref().map(|a| a.measures())),
        });
    }
    Ok(to_jsonl(&lines))
}

/// What a summary's agreement line records of its clusters.
#[derive(serde::Serialize, serde::Deserialize)]
struct Clusters {
    /// The similarity above which two summaries share a cluster.
    cut: f64,
    cluster_sizes: Option<Vec<usize>>,
}
