//! What every flow of `codecal run` shares about its run directory: reading
//! the JSONL artifacts stages wrote, and the errors a stage reports. Not the
//! books (which stage ran on what): those are `Books` in the parent module.

use std::path::Path;

use serde_json::Value;

use super::PipelineError;

/// Why a stage failed: a typed error of the library it called (kept as the
/// source), or a sentence of the flow's own.
pub(crate) type StageCause = Box<dyn std::error::Error + Send + Sync>;

/// A stage failed for a reason of its own.
pub(crate) fn failed(stage: &str, e: impl Into<StageCause>) -> PipelineError {
    PipelineError::Stage {
        stage: stage.to_owned(),
        source: e.into(),
    }
}

/// A config section as text, for the input hash of the stages it drives.
pub(crate) fn section(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// The calibration stage failed.
pub(crate) fn stage_error(e: impl Into<StageCause>) -> PipelineError {
    failed("calibrate", e)
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

#[cfg(test)]
mod tests {
    use super::failed;

    #[test]
    fn a_failed_stage_keeps_the_typed_error_as_its_source() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let error = failed("judge", io);
        assert_eq!(error.to_string(), "stage judge: gone");
        let source = std::error::Error::source(&error).expect("a source");
        let io = source
            .downcast_ref::<std::io::Error>()
            .expect("the io::Error itself");
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
        // A flow's own sentence is a source too, with the same text.
        assert_eq!(
            failed("records", "no records").to_string(),
            "stage records: no records"
        );
    }
}
