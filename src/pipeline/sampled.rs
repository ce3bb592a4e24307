//! What both flows' agreement stages share about a generation row's
//! sampled answers: the samples, the tokens they cost, and the confidence
//! map an agreement line carries. Not how samples are grouped (each flow's
//! `agreement` module) nor the measures (`confidence::agreement`).

use serde_json::{Map, Value, json};

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
