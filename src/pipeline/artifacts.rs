//! What every flow of `codecal run` shares about its run directory: reading
//! the JSONL artifacts stages wrote, and the errors a stage reports. Not the
//! books (which stage ran on what): those are `Books` in the parent module.

use std::path::Path;

use serde_json::Value;

use super::PipelineError;

/// A stage failed for a reason of its own.
pub(crate) fn failed(stage: &str, e: impl std::fmt::Display) -> PipelineError {
    PipelineError::Stage {
        stage: stage.to_owned(),
        message: e.to_string(),
    }
}

/// A config section as text, for the input hash of the stages it drives.
pub(crate) fn section(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// The calibration stage failed.
pub(crate) fn stage_error(message: impl std::fmt::Display) -> PipelineError {
    PipelineError::Stage {
        stage: "calibrate".into(),
        message: message.to_string(),
    }
}

pub(crate) fn read_jsonl(path: &Path) -> Result<Vec<Value>, PipelineError> {
    let error = |message: String| PipelineError::Artifact {
        path: path.to_owned(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| error(e.to_string()))?;
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|e| error(format!("line {}: {e}", i + 1)))
        })
        .collect()
}

pub(crate) fn text_field(row: &Value, key: &str) -> String {
    row.get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}
