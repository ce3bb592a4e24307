//! What both flows share about a generation row's sampled answers: the
//! tokens they cost, the line an agreement file holds for each row, and
//! putting an agreement file's confidences back into the generation rows
//! for the calibration (through `lines_in_step`, which any per-row file of a
//! later stage reads through). Not how samples are grouped (each flow's
//! `agreement` module) nor the measures (`confidence::agreement`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::artifacts::read_jsonl;
use super::{ArtifactError, PipelineError};
use crate::generate::row::{GenerationRow, SampleAnswer};

/// One line of `agreement/<label>.jsonl`, for one generation row: the
/// agreement confidences, what the samples cost, and what the flow found
/// (`detail`: clusters, behaviour keys).
#[derive(Serialize, Deserialize)]
pub(crate) struct AgreementLine<D> {
    pub id: String,
    #[serde(flatten)]
    pub detail: D,
    pub sample_tokens: u64,
    pub confidence: BTreeMap<String, Option<f64>>,
}

/// The part of an agreement line the calibration reads.
#[derive(Deserialize)]
struct Merged {
    id: String,
    #[serde(default)]
    sample_tokens: Option<u64>,
    #[serde(default)]
    confidence: BTreeMap<String, Option<f64>>,
}

/// The tokens the samples generated.
pub(crate) fn sample_tokens(samples: &[SampleAnswer]) -> u64 {
    samples
        .iter()
        .filter_map(|s| s.completion_tokens)
        .map(|n| n as u64)
        .sum()
}

/// Named measures by name (empty where there are none).
pub(crate) fn confidence_map(
    measures: Option<Vec<(&'static str, Option<f64>)>>,
) -> BTreeMap<String, Option<f64>> {
    measures
        .into_iter()
        .flatten()
        .map(|(name, value)| (name.to_owned(), value))
        .collect()
}

/// The lines of a per-row file that a stage wrote for `generations` (one
/// line per generation row, in order), each checked against its row's id;
/// `None` when the run has no such file.
pub(crate) fn lines_in_step<L: serde::de::DeserializeOwned>(
    path: &Path,
    generations: &[GenerationRow],
    id: impl Fn(&L) -> &str,
) -> Result<Option<Vec<L>>, PipelineError> {
    if !path.exists() {
        return Ok(None);
    }
    let lines: Vec<L> = read_jsonl(path)?;
    for (i, (generation, line)) in generations.iter().zip(&lines).enumerate() {
        if generation.id != id(line) {
            return Err(PipelineError::Artifact {
                path: path.to_owned(),
                source: ArtifactError::OutOfStep {
                    line: i + 1,
                    found: id(line).to_owned(),
                    expected: generation.id.clone(),
                },
            });
        }
    }
    Ok(Some(lines))
}

/// The agreement confidences of `agreement/<label>.jsonl` (written by a
/// flow's agreement stage, one line per generation row, in order) put into
/// each row's `confidence`, where the calibration reads every measure; the
/// row's `sample_tokens` too, for the cost of each source. Nothing when the
/// run sampled nothing.
pub(crate) fn merge_agreement(
    dir: &Path,
    label: &str,
    generations: &mut [GenerationRow],
) -> Result<(), PipelineError> {
    let path = dir.join(format!("agreement/{label}.jsonl"));
    let Some(lines) = lines_in_step(&path, generations, |l: &Merged| &l.id)? else {
        return Ok(());
    };
    for (generation, line) in generations.iter_mut().zip(lines) {
        generation.confidence.extend(line.confidence);
        generation.sample_tokens = line.sample_tokens;
    }
    Ok(())
}
