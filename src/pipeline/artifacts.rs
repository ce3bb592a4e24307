//! What every flow of `codecal run` shares about its run directory: reading
//! the JSONL artifacts stages wrote, and the errors a stage reports. Not the
//! books (which stage ran on what): those are `Books` in the parent module.

use std::path::Path;

use serde::de::DeserializeOwned;

use super::PipelineError;

/// What is wrong with a file of the run directory.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("cannot remove: {0}")]
    Remove(std::io::Error),
    #[error("line {line}: {source}")]
    Line {
        line: usize,
        source: serde_json::Error,
    },
    /// A line of a file written alongside another is not for the same item.
    #[error("line {line} is for {found} where {expected} was expected")]
    OutOfStep {
        line: usize,
        found: String,
        expected: String,
    },
    #[error("a row of {cells} cells under a header of {header} ({first:?})")]
    RowWidth {
        cells: usize,
        header: usize,
        first: String,
    },
    #[error(transparent)]
    Records(#[from] crate::corpus::CorpusError),
}

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

/// Each line of a JSONL file, typed: a generation row, a verdict, a
/// problem. A line that does not read names its number.
pub(crate) fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, PipelineError> {
    let error = |source: ArtifactError| PipelineError::Artifact {
        path: path.to_owned(),
        source,
    };
    // A FIFO in a run or shard directory would block the read forever.
    let text = crate::artifact::read_regular_text(path, crate::artifact::TABLE_CAP_BYTES)
        .map_err(|e| error(e.into()))?;
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|source| {
                error(ArtifactError::Line {
                    line: i + 1,
                    source,
                })
            })
        })
        .collect()
}

/// Rows as JSON lines.
pub(crate) fn to_jsonl<T: serde::Serialize>(rows: &[T]) -> String {
    rows.iter()
        .map(|row| serde_json::to_string(row).unwrap_or_default() + "\n")
        .collect()
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
