//! What both flows share about a generation row's sampled answers: the
//! samples, the tokens they cost, the confidence map an agreement line
//! carries, and putting an agreement file's confidences back into the
//! generation rows for the calibration. Not how samples are grouped (each
//! flow's `agreement` module) nor the measures (`confidence::agreement`).

use std::path::Path;

use serde_json::{Map, Value, json};

use super::PipelineError;
use super::artifacts::read_jsonl;

/// The row's sampled answers (none when it has no `samples`).
pub(crate) fn samples_of(row: &Value) -> Vec<Value> {
    row["samples"].as_array().cloned().unwrap_or_default()
}

/// The tokens the samples generated.
pub(crate) fn sample_tokens(samples: &[Value]) -> u64 {
    samples
        .iter()
        .filter_map(|s| s["completion_tokens"].as_u64())
        .sum()
}

/// Named measures as a JSON object (empty where there are none).
pub(crate) fn confidence_map(
    measures: Option<Vec<(&'static str, Option<f64>)>>,
) -> Map<String, Value> {
    measures
        .into_iter()
        .flatten()
        .map(|(name, value)| (name.to_owned(), json!(value)))
        .collect()
}

/// The agreement confidences of `agreement/<label>.jsonl` (written by a
/// flow's agreement stage, one line per generation row, in order) put into
/// each row's `confidence`, where the calibration reads every measure; the
/// row's `sample_tokens` too, for the cost of each source. Nothing when the
/// run sampled nothing.
pub(crate) fn merge_agreement(
    dir: &Path,
    label: &str,
    generations: &mut [Value],
) -> Result<(), PipelineError> {
    let path = dir.join(format!("agreement/{label}.jsonl"));
    if !path.exists() {
        return Ok(());
    }
    let rows = read_jsonl(&path)?;
    for (generation, row) in generations.iter_mut().zip(&rows) {
        if generation["id"] != row["id"] {
            return Err(PipelineError::Artifact {
                path: path.clone(),
                message: format!(
                    "line for {} where {} was expected",
                    row["id"], generation["id"]
                ),
            });
        }
        if let (Some(confidence), Some(measures)) = (
            generation["confidence"].as_object_mut(),
            row["confidence"].as_object(),
        ) {
            confidence.extend(measures.clone());
        }
        generation["sample_tokens"] = row["sample_tokens"].clone();
    }
    Ok(())
}
