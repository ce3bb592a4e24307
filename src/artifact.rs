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

/// Writes a directory of `files` whole: into a temporary sibling, then
/// renamed into place, so a reader never sees half of it. An existing `dir`
/// is replaced only when every entry in it is one of `ours` (a previous
/// output of the same command); anything else there is refused, naming it,
/// and nothing is deleted.
pub fn write_dir_atomic(
    dir: &Path,
    files: &[(&str, &[u8])],
    ours: &[&str],
) -> Result<(), WriteError> {
    let error = |path: &Path, source| WriteError {
        path: path.to_owned(),
        source,
    };
    if dir.exists() {
        let entries = std::fs::read_dir(dir).map_err(|e| error(dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| error(dir, e))?;
            let name = entry.file_name();
            let is_file = entry.file_type().is_ok_and(|t| t.is_file());
            if !is_file || !ours.iter().any(|o| name == *o) {
                return Err(error(
                    &entry.path(),
                    std::io::Error::other(
                        "the output directory holds this, which codecal did not write; choose an empty or new directory",
                    ),
                ));
            }
        }
    }
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    create_dir(&parent)?;
    let name = dir
        .file_name()
        .map_or("out".into(), |n| n.to_string_lossy().into_owned());
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{name}.tmp-"))
        .tempdir_in(&parent)
        .map_err(|e| error(&parent, e))?;
    for (file, bytes) in files {
        let path = staging.path().join(file);
        if let Some(folder) = path.parent() {
            create_dir(folder)?;
        }
        write_atomic(&path, bytes)?;
    }
    if dir.exists() {
        let old = tempfile::Builder::new()
            .prefix(&format!(".{name}.old-"))
            .tempdir_in(&parent)
            .map_err(|e| error(&parent, e))?;
        let old_dir = old.path().join(&name);
        std::fs::rename(dir, &old_dir).map_err(|e| error(dir, e))?;
        std::fs::rename(staging.keep(), dir).map_err(|e| error(dir, e))?;
        // `old` holds only files checked above to be ours; dropping it removes them.
        drop(old);
    } else {
        std::fs::rename(staging.keep(), dir).map_err(|e| error(dir, e))?;
    }
    Ok(())
}

/// The most a JSON file codecal reads (a calibrator, a run's `report.json`)
/// may hold: 256 MiB, far above any it writes.
pub const JSON_CAP_BYTES: u64 = 256 << 20;
/// The most a table of items may hold: 4 GiB.
pub const TABLE_CAP_BYTES: u64 = 4 << 30;

/// Reads `path` whole, only when it is a regular file (after symlinks) of at
/// most `cap` bytes: a FIFO, a device or a directory would block, never end
/// or mean nothing, so each is refused with an error naming it.
pub fn read_regular(path: &Path, cap: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let metadata = std::fs::metadata(path)?;
    if !metadata.is_file() {
        let kind = if metadata.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        return Err(std::io::Error::other(format!(
            "{kind}; codecal reads only regular files"
        )));
    }
    if metadata.len() > cap {
        return Err(std::io::Error::other(format!(
            "{} bytes, over the {cap}-byte cap for this kind of file",
            metadata.len()
        )));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    std::fs::File::open(path)?
        .take(cap + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(std::io::Error::other(format!(
            "grew past the {cap}-byte cap while being read"
        )));
    }
    Ok(bytes)
}

/// [`read_regular`] as UTF-8 text.
pub fn read_regular_text(path: &Path, cap: u64) -> std::io::Result<String> {
    String::from_utf8(read_regular(path, cap)?)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_directory_is_replaced_whole_or_refused_untouched() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        let ours = ["a.txt", "b.txt"];
        write_dir_atomic(&out, &[("a.txt", b"1"), ("b.txt", b"2")], &ours).unwrap();
        write_dir_atomic(&out, &[("a.txt", b"3")], &ours).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["a.txt"]);
        assert_eq!(std::fs::read(out.join("a.txt")).unwrap(), b"3");
        // A directory with a file of the user's is refused and left as it was.
        std::fs::write(out.join("notes.md"), "mine").unwrap();
        let err = write_dir_atomic(&out, &[("a.txt", b"4")], &ours).unwrap_err();
        assert!(err.to_string().contains("notes.md"), "{err}");
        assert_eq!(std::fs::read(out.join("a.txt")).unwrap(), b"3");
        assert_eq!(
            std::fs::read_to_string(out.join("notes.md")).unwrap(),
            "mine"
        );
        // No staging directories are left behind.
        let leftovers = std::fs::read_dir(root.path()).unwrap().count();
        assert_eq!(leftovers, 1);
    }

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
