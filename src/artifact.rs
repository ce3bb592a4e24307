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
/// A path that exists as anything but a regular file (a device, a FIFO, a
/// directory) is refused, never replaced.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let error = |source| WriteError {
        path: path.to_owned(),
        source,
    };
    existing_regular_file(path)?;
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

/// The metadata of `path` where it exists; an error where it exists as
/// anything but a regular file, which codecal must never replace.
fn existing_regular_file(path: &Path) -> Result<Option<std::fs::Metadata>, WriteError> {
    match std::fs::metadata(path) {
        Ok(metadata) if !metadata.is_file() => Err(WriteError {
            path: path.to_owned(),
            source: std::io::Error::other(
                "not a regular file; codecal writes only regular files and never replaces others",
            ),
        }),
        Ok(metadata) => Ok(Some(metadata)),
        Err(_) => Ok(None),
    }
}

/// Refuses, before any work, an output that is one of the inputs (the same
/// path, or a hard or symbolic link to the same file) or that exists as
/// anything but a regular file, which [`write_atomic`] would refuse only at
/// the end.
pub fn refuse_unsafe_outputs(outputs: &[&Path], inputs: &[&Path]) -> Result<(), WriteError> {
    use std::os::unix::fs::MetadataExt;
    let identity = |m: &std::fs::Metadata| (m.dev(), m.ino());
    for output in outputs {
        let Some(out) = existing_regular_file(output)? else {
            continue;
        };
        let same =
            |input: &&&Path| std::fs::metadata(input).is_ok_and(|m| identity(&m) == identity(&out));
        if let Some(input) = inputs.iter().find(same) {
            return Err(WriteError {
                path: output.to_path_buf(),
                source: std::io::Error::other(format!(
                    "is the input {}; refusing to overwrite an input",
                    input.display()
                )),
            });
        }
    }
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
    fn special_files_and_inputs_are_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_atomic(Path::new("/dev/null"), b"x").unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        use std::os::unix::fs::FileTypeExt;
        assert!(
            std::fs::metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device()
        );
        let input = dir.path().join("in.csv");
        std::fs::write(&input, "a\n").unwrap();
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        let hard = dir.path().join("hard.csv");
        std::fs::hard_link(&input, &hard).unwrap();
        for output in [&input, &link, &hard] {
            let err = refuse_unsafe_outputs(&[output], &[&input]).unwrap_err();
            assert!(err.to_string().contains("refusing to overwrite"), "{err}");
        }
        let err = refuse_unsafe_outputs(&[Path::new("/dev/full")], &[&input]).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let fresh = dir.path().join("out.csv");
        refuse_unsafe_outputs(&[&fresh], &[&input]).unwrap();
        assert_eq!(std::fs::read_to_string(&input).unwrap(), "a\n");
    }

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
