//! Which files of a tree the miner reads: source files with the language's
//! extension, hidden entries, symlinks, `site-packages` and `__pycache__`
//! left out, and never a FIFO, socket or device (a read could block
//! forever). Not the reading or parsing of a file (`mine`).

use std::path::{Path, PathBuf};

use super::MineOptions;
use crate::corpus::{CorpusError, ReadReport};

/// The source files under `dir` with `extension`, hidden entries, symlinks
/// and `site-packages` left out. A FIFO, socket or device with the
/// extension is not read (it could block forever): it is counted in
/// `special`, for the caller's report.
fn collect_files(
    dir: &Path,
    extension: &str,
    files: &mut Vec<PathBuf>,
    special: &mut usize,
) -> Result<(), CorpusError> {
    let entries = std::fs::read_dir(dir).map_err(|source| CorpusError::Io {
        path: dir.to_owned(),
        source,
    })?;
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if name.to_string_lossy().starts_with('.') || kind.is_symlink() {
            continue;
        }
        if kind.is_dir() {
            if name != "site-packages" && name != "__pycache__" {
                collect_files(&path, extension, files, special)?;
            }
        } else if path.extension().is_some_and(|e| e == extension) {
            if kind.is_file() {
                files.push(path);
            } else {
                *special += 1;
            }
        }
    }
    Ok(())
}

/// The tree's source files in path order, and how many special files
/// (FIFOs, sockets, devices) bore the extension.
pub(super) fn source_files(
    root: &Path,
    options: MineOptions,
) -> Result<(Vec<PathBuf>, usize), CorpusError> {
    let (mut files, mut special) = (Vec::new(), 0);
    collect_files(root, options.language.extension(), &mut files, &mut special)?;
    files.sort();
    Ok((files, special))
}

pub(super) fn skip_special(report: &mut ReadReport, special: usize) {
    if special > 0 {
        *report
            .skipped
            .entry("not a regular file (a FIFO, socket or device)".to_owned())
            .or_insert(0) += special;
    }
}
