//! Writes output files atomically: to a temporary file beside the target,
//! then renamed over it, so no reader ever sees half a file.

use std::io::Write;
use std::path::{Path, PathBuf};

/// A file that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{path}: cannot write: {source}")]
pub struct WriteError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

/// Writes `bytes` to `path` through a temporary file in the same directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let error = |source| WriteError {
        path: path.to_owned(),
        source,
    };
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(error)?;
    file.write_all(bytes).map_err(error)?;
    file.as_file().sync_all().map_err(error)?;
    file.persist(path).map_err(|e| error(e.error))?;
    Ok(())
}

/// Creates `dir` and its parents.
pub fn create_dir(dir: &Path) -> Result<(), WriteError> {
    std::fs::create_dir_all(dir).map_err(|source| WriteError {
        path: dir.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_whole_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        write_atomic(&path, b"first, longer content").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn missing_directory_names_the_path() {
        let err = write_atomic(Path::new("/nonexistent-dir/x.txt"), b"x").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("/nonexistent-dir/x.txt: cannot write")
        );
    }
}
