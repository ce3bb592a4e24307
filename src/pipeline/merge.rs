//! `codecal merge`: joins the shards of one run into the run directory the
//! run would have written in one piece, then calibrates and reports there.
//!
//! The shards must share one config (by [`config_hash`]) and one n, and be
//! every i from 0 to n - 1 once; every per-item output of every shard must
//! hold exactly the items that shard owns. Anything else is refused, naming
//! the shard and the items. The other outputs (problems, prompts) must be
//! the same bytes in every shard. Rows are interleaved back into the
//! prompts' order byte for byte, so the merged tables are the one-piece
//! run's. Not running a shard (`pipeline::run_shard`).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use super::config::RunConfig;
use super::shard::{MAX_SHARDS, SHARD_FILE, ShardRecord, config_hash, owner, prompt_ids};
use super::{Existing, Manifest, Mode, PipelineError, Progress, RunSummary};
use crate::artifact::write_dir_atomic;
use crate::manifest::{gather_json, json_line_id, read_manifest};

/// Why shards cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("no shard directories given")]
    NoShards,
    #[error("{0}: no {SHARD_FILE}: not a finished shard (run it with --shard i/n until it ends)")]
    NotAShard(PathBuf),
    #[error("{path}: {message}")]
    Unreadable { path: PathBuf, message: String },
    #[error("{shard}: a shard of another config (config hash {found}; {first}'s is {expected})")]
    OtherConfig {
        shard: PathBuf,
        first: PathBuf,
        found: String,
        expected: String,
    },
    #[error("{shard}: one of {found} shards, but {first} is one of {expected}")]
    OtherCount {
        shard: PathBuf,
        first: PathBuf,
        found: usize,
        expected: usize,
    },
    #[error("{a} and {b} are both shard {shard}")]
    Twice {
        a: PathBuf,
        b: PathBuf,
        shard: String,
    },
    #[error("shard {shard} is missing: no directory given holds it ({items} items)")]
    Missing { shard: String, items: usize },
    #[error("{shard}: {file}: {problem}")]
    Items {
        shard: PathBuf,
        file: String,
        problem: String,
    },
    #[error("{shard}: {file} differs from {first}'s: the shards were made from different inputs")]
    Differs {
        shard: PathBuf,
        first: PathBuf,
        file: String,
    },
    #[error("{0} already exists and is not empty: merge into a new directory")]
    OutExists(PathBuf),
}

/// One shard directory and what it says about itself.
struct Piece {
    dir: PathBuf,
    record: ShardRecord,
}

/// Merges `shards` into the run directory `out` (which must not hold
/// anything yet) and runs calibration and the report there.
pub fn merge(
    out: &Path,
    shards: &[PathBuf],
    on_progress: &(dyn Fn(Progress) + Sync),
) -> Result<RunSummary, PipelineError> {
    let pieces = read_pieces(shards)?;
    let first = &pieces[0];
    let manifest =
        read_manifest(&first.dir.join("manifest.json")).ok_or_else(|| MergeError::Unreadable {
            path: first.dir.join("manifest.json"),
            message: "missing or not a run manifest".to_owned(),
        })?;
    let mut config: RunConfig = manifest.config().map_err(|e| MergeError::Unreadable {
        path: first.dir.join("manifest.json"),
        message: format!("its config: {e}"),
    })?;
    config.runs_dir = out.parent().map(Path::to_path_buf).unwrap_or_default();
    config.name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if config_hash(&config) != first.record.config_hash {
        return Err(MergeError::Unreadable {
            path: first.dir.join(SHARD_FILE),
            message: "its config hash is not its manifest's config's".to_owned(),
        }
        .into());
    }
    if out
        .read_dir()
        .is_ok_and(|mut entries| entries.next().is_some())
    {
        return Err(MergeError::OutExists(out.to_owned()).into());
    }
    // Before anything is written, so that a refusal leaves OUT as it was.
    config.check_offline()?;
    let every_output = manifest.stages.values().flat_map(|stage| &stage.outputs);
    if let Some(file) = every_output.into_iter().find(|file| !stays_inside(file)) {
        return Err(outside(first.dir.join("manifest.json"), file).into());
    }
    let ids = prompt_ids(&first.dir)?;
    for piece in &pieces {
        check_record(piece, &manifest, &ids)?;
    }
    let owners: Vec<usize> = ids.iter().map(|id| owner(id, pieces.len())).collect();
    let shared = shared_outputs(&manifest, &first.record);
    check_shared(&pieces, &shared)?;
    let mut merged: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for file in &first.record.item_outputs {
        merged.insert(file.clone(), interleave(&pieces, &ids, &owners, file)?);
    }
    for file in &shared {
        merged.insert(file.clone(), read(&first.dir.join(file))?);
    }
    // Written whole into a staging directory and renamed, so that a merge
    // that fails leaves nothing half-written; OUT is empty or absent here.
    let files: Vec<(&str, &[u8])> = merged
        .iter()
        .map(|(file, bytes)| (file.as_str(), bytes.as_slice()))
        .collect();
    write_dir_atomic(out, &files, &[])?;
    super::run_in(&config, Existing::Resume, Mode::Adopt, on_progress)
}

/// A shard's own record, checked in full before anything is written: its
/// item count against the prompts it owns, and its per-item outputs, which
/// must stay inside the directory and be the run's per-item outputs
/// exactly (a short list would leave a stage for the resumed run to do
/// again, by asking the server).
fn check_record(piece: &Piece, manifest: &Manifest, ids: &[String]) -> Result<(), MergeError> {
    let bad = |file: &str, message: String| MergeError::Unreadable {
        path: piece.dir.join(file),
        message,
    };
    if let Some(file) = piece
        .record
        .item_outputs
        .iter()
        .find(|file| !stays_inside(file))
    {
        return Err(outside(piece.dir.join(SHARD_FILE), file));
    }
    let shard = piece.record.shard;
    let owned = ids
        .iter()
        .filter(|id| owner(id, shard.count) == shard.index)
        .count();
    if piece.record.items != owned {
        return Err(bad(
            SHARD_FILE,
            format!(
                "items is {} but shard {shard} owns {owned} of the run's {} prompts",
                piece.record.items,
                ids.len()
            ),
        ));
    }
    let mut per_item: Vec<&String> = manifest
        .stages
        .values()
        .filter(|stage| stage.per_item)
        .flat_map(|stage| &stage.outputs)
        .collect();
    per_item.sort();
    per_item.dedup();
    let mut listed: Vec<&String> = piece.record.item_outputs.iter().collect();
    listed.sort();
    if listed != per_item {
        return Err(bad(
            SHARD_FILE,
            format!(
                "item_outputs lists {listed:?}, but the run's per-item outputs are {per_item:?}"
            ),
        ));
    }
    Ok(())
}

/// `file`, named in the file at `named_in`, would be read or written
/// outside its run directory.
fn outside(named_in: PathBuf, file: &str) -> MergeError {
    MergeError::Unreadable {
        path: named_in,
        message: format!("{file:?} is not a relative path inside the run directory"),
    }
}

/// A path of plain names only: no root, no `..`, no `.`, not empty.
fn stays_inside(file: &str) -> bool {
    let path = Path::new(file);
    !file.is_empty()
        && path
            .components()
            .all(|part| matches!(part, std::path::Component::Normal(_)))
}

/// Reads each shard's record and checks that together they are one run's
/// n shards, each once; returns them in shard order.
fn read_pieces(shards: &[PathBuf]) -> Result<Vec<Piece>, MergeError> {
    let mut pieces = Vec::with_capacity(shards.len());
    for dir in shards {
        let path = dir.join(SHARD_FILE);
        if !path.exists() {
            return Err(MergeError::NotAShard(dir.clone()));
        }
        let text = read(&path)?;
        let record: ShardRecord =
            serde_json::from_slice(&text).map_err(|e| MergeError::Unreadable {
                path,
                message: e.to_string(),
            })?;
        pieces.push(Piece {
            dir: dir.clone(),
            record,
        });
    }
    let first = pieces.first().ok_or(MergeError::NoShards)?;
    for piece in &pieces {
        let shard = piece.record.shard;
        if !(1..=MAX_SHARDS).contains(&shard.count) || shard.index >= shard.count {
            return Err(MergeError::Unreadable {
                path: piece.dir.join(SHARD_FILE),
                message: format!(
                    "shard {shard} is not one of 1 to {MAX_SHARDS} shards counted from 0"
                ),
            });
        }
    }
    for piece in &pieces[1..] {
        if piece.record.config_hash != first.record.config_hash {
            return Err(MergeError::OtherConfig {
                shard: piece.dir.clone(),
                first: first.dir.clone(),
                found: piece.record.config_hash.clone(),
                expected: first.record.config_hash.clone(),
            });
        }
        if piece.record.shard.count != first.record.shard.count {
            return Err(MergeError::OtherCount {
                shard: piece.dir.clone(),
                first: first.dir.clone(),
                found: piece.record.shard.count,
                expected: first.record.shard.count,
            });
        }
    }
    let count = first.record.shard.count;
    let mut by_index: Vec<Option<Piece>> = (0..count).map(|_| None).collect();
    for piece in pieces {
        let index = piece.record.shard.index;
        if let Some(other) = &by_index[index] {
            return Err(MergeError::Twice {
                a: other.dir.clone(),
                b: piece.dir.clone(),
                shard: piece.record.shard.to_string(),
            });
        }
        by_index[index] = Some(piece);
    }
    if let Some(index) = by_index.iter().position(Option::is_none) {
        // The first shard given has the run's prompts, to count the gap.
        let ids = by_index.iter().flatten().next().map(|p| prompt_ids(&p.dir));
        let ids = ids.and_then(Result::ok).unwrap_or_default();
        return Err(MergeError::Missing {
            shard: format!("{index}/{count}"),
            items: ids.iter().filter(|id| owner(id, count) == index).count(),
        });
    }
    Ok(by_index.into_iter().flatten().collect())
}

/// The outputs of the stages that are not per item: the same in every shard.
fn shared_outputs(manifest: &Manifest, record: &ShardRecord) -> Vec<String> {
    let mut files: Vec<String> = manifest
        .stages
        .values()
        .filter(|stage| !stage.per_item)
        .flat_map(|stage| stage.outputs.iter().cloned())
        .filter(|file| !record.item_outputs.contains(file))
        .collect();
    files.sort();
    files.dedup();
    files
}

/// Every shard holds the same shared outputs, byte for byte, and the same
/// list of per-item outputs.
fn check_shared(pieces: &[Piece], shared: &[String]) -> Result<(), MergeError> {
    let first = &pieces[0];
    for piece in &pieces[1..] {
        if piece.record.item_outputs != first.record.item_outputs {
            return Err(MergeError::Differs {
                shard: piece.dir.clone(),
                first: first.dir.clone(),
                file: format!("{SHARD_FILE} (item_outputs)"),
            });
        }
        for file in shared {
            if read(&piece.dir.join(file))? != read(&first.dir.join(file))? {
                return Err(MergeError::Differs {
                    shard: piece.dir.clone(),
                    first: first.dir.clone(),
                    file: file.clone(),
                });
            }
        }
    }
    Ok(())
}

/// One per-item output of the whole run: each shard's rows (after a CSV
/// header), checked to be exactly the items it owns (`owners[k]` owns
/// `ids[k]`), put back in the prompts' order; a JSON record becomes the
/// list of the shards' records.
fn interleave(
    pieces: &[Piece],
    ids: &[String],
    owners: &[usize],
    file: &str,
) -> Result<Vec<u8>, MergeError> {
    if file.ends_with(".json") {
        let mut documents = Vec::with_capacity(pieces.len());
        for piece in pieces {
            documents.push((piece.record.shard, read(&piece.dir.join(file))?));
        }
        return gather_json(&documents)
            .map(String::into_bytes)
            .map_err(|(i, e)| MergeError::Unreadable {
                path: pieces[i].dir.join(file),
                message: e.to_string(),
            });
    }
    let csv = file.ends_with(".csv");
    let mut header: Option<String> = None;
    let mut rows: Vec<std::vec::IntoIter<(String, String)>> = Vec::with_capacity(pieces.len());
    for piece in pieces {
        let path = piece.dir.join(file);
        let text = String::from_utf8(read(&path)?).map_err(|e| MergeError::Unreadable {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let mut lines: Vec<&str> = text.lines().collect();
        if csv && !lines.is_empty() {
            let head = lines.remove(0);
            // A shard with no rows has no columns to name.
            if !lines.is_empty() && header.get_or_insert_with(|| head.to_owned()) != head {
                return Err(item_error(piece, file, "its CSV header differs".to_owned()));
            }
        }
        let owned: Vec<&String> = ids
            .iter()
            .zip(owners)
            .filter(|(_, owner)| **owner == piece.record.shard.index)
            .map(|(id, _)| id)
            .collect();
        let keyed: Vec<(String, String)> = lines
            .iter()
            .map(|line| (row_id(line, csv), (*line).to_owned()))
            .collect();
        check_items(piece, file, &owned, &keyed)?;
        rows.push(keyed.into_iter());
    }
    let mut out = String::new();
    if let Some(header) = header.filter(|_| csv) {
        out += &header;
        out.push('\n');
    }
    for &owner in owners {
        // check_items made each shard's rows its owned ids in order.
        if let Some((_, line)) = rows[owner].next() {
            out += &line;
            out.push('\n');
        }
    }
    Ok(out.into_bytes())
}

/// A shard's rows are exactly the ids it owns, in the prompts' order;
/// otherwise names the missing and the unexpected items.
fn check_items(
    piece: &Piece,
    file: &str,
    owned: &[&String],
    keyed: &[(String, String)],
) -> Result<(), MergeError> {
    let found: Vec<&String> = keyed.iter().map(|(id, _)| id).collect();
    if found == owned {
        return Ok(());
    }
    let have: HashSet<&String> = found.iter().copied().collect();
    let want: HashSet<&String> = owned.iter().copied().collect();
    let missing: Vec<&str> = owned
        .iter()
        .filter(|id| !have.contains(*id))
        .map(|id| id.as_str())
        .collect();
    let foreign: Vec<&str> = found
        .iter()
        .filter(|id| !want.contains(*id))
        .map(|id| id.as_str())
        .collect();
    let mut seen = HashSet::new();
    let twice: Vec<&str> = found
        .iter()
        .filter(|id| !seen.insert(**id))
        .map(|id| id.as_str())
        .collect();
    let list = |ids: &[&str]| {
        let shown: Vec<&str> = ids.iter().take(5).copied().collect();
        let more = ids.len().saturating_sub(5);
        let tail = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        format!("{}{tail}", shown.join(", "))
    };
    let problem = if !missing.is_empty() {
        format!("a gap: it lacks items it owns: {}", list(&missing))
    } else if !foreign.is_empty() {
        format!(
            "an overlap: it holds items another shard owns: {}",
            list(&foreign)
        )
    } else if !twice.is_empty() {
        format!("it holds items twice: {}", list(&twice))
    } else {
        "its rows are not in the prompts' order".to_owned()
    };
    Err(item_error(piece, file, problem))
}

fn item_error(piece: &Piece, file: &str, problem: String) -> MergeError {
    MergeError::Items {
        shard: piece.dir.clone(),
        file: file.to_owned(),
        problem,
    }
}

/// The item id of a JSONL row (its `id`) or a CSV row (its first field).
fn row_id(line: &str, csv: bool) -> String {
    if !csv {
        return json_line_id(line);
    }
    match line.strip_prefix('"') {
        // A quoted field: up to the quote not doubled.
        Some(rest) => {
            let mut id = String::new();
            let mut chars = rest.chars().peekable();
            while let Some(c) = chars.next() {
                match (c, chars.peek()) {
                    ('"', Some('"')) => {
                        id.push('"');
                        chars.next();
                    }
                    ('"', _) => break,
                    _ => id.push(c),
                }
            }
            id
        }
        None => line.split(',').next().unwrap_or_default().to_owned(),
    }
}

/// A shard's file, only if it is a regular file: a FIFO would hang the merge.
fn read(path: &Path) -> Result<Vec<u8>, MergeError> {
    crate::artifact::read_regular(path, crate::artifact::TABLE_CAP_BYTES).map_err(|e| {
        MergeError::Unreadable {
            path: path.to_owned(),
            message: e.to_string(),
        }
    })
}
