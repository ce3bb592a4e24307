//! A run split into shards: which items a shard owns (the hash of the item
//! id mod n, the same in every stage and on every machine), what a finished
//! shard says about itself (`shard.json`), and the config identity shards
//! must share. Joining shards is `merge`; running one is `pipeline::run`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::config::RunConfig;
use super::{ConfigError, PipelineError};
use crate::artifact::write_atomic;

/// The file a finished shard writes last.
pub const SHARD_FILE: &str = "shard.json";

/// The most shards a run may be split into.
pub const MAX_SHARDS: usize = 100_000;

/// Shard `index` of `count`, written `i/n` with i from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Reads `i/n`: n from 1 to 100000, i from 0 to n - 1.
    pub fn parse(text: &str) -> Result<Shard, ConfigError> {
        let bad = |why: &str| ConfigError::Key {
            key: "--shard".to_owned(),
            message: format!("{text:?}: {why}"),
        };
        let (index, count) = text
            .split_once('/')
            .ok_or_else(|| bad("expected i/n, e.g. 0/4 (i counts from 0)"))?;
        let parse = |part: &str| part.trim().parse::<usize>().ok();
        let (Some(index), Some(count)) = (parse(index), parse(count)) else {
            return Err(bad("i and n must be whole numbers, e.g. 0/4"));
        };
        if !(1..=MAX_SHARDS).contains(&count) {
            return Err(bad("n must be from 1 to 100000"));
        }
        if index >= count {
            return Err(bad("i counts from 0, so it must be below n"));
        }
        Ok(Shard { index, count })
    }

    /// Whether this shard does the work of item `id`.
    pub fn owns(&self, id: &str) -> bool {
        owner(id, self.count) == self.index
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The shard of `count` that owns item `id`: the first eight bytes of the
/// id's sha256, little-endian, mod `count`.
pub fn owner(id: &str, count: usize) -> usize {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(id.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    (u64::from_le_bytes(first) % count as u64) as usize
}

/// The config's identity: its sha256 without where the run is written
/// (`runs_dir`, `name`), so that shards written to different directories,
/// and the run they merge into, share it.
pub fn config_hash(config: &RunConfig) -> String {
    let mut value = serde_json::to_value(config).unwrap_or_default();
    if let Some(object) = value.as_object_mut() {
        object.remove("runs_dir");
        object.remove("name");
    }
    crate::digest::sha256_hex(value.to_string().as_bytes())
}

/// `shard.json`: what a finished shard holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardRecord {
    pub config_hash: String,
    pub shard: Shard,
    /// Items this shard owns among the run's prompts.
    pub items: usize,
    /// Its per-item outputs, relative to the shard directory, which a merge
    /// interleaves; every other output is the same in every shard.
    pub item_outputs: Vec<String>,
}

/// Writes `shard.json` into a shard whose every stage has finished.
pub(crate) fn write_record(dir: &Path, record: &ShardRecord) -> Result<(), PipelineError> {
    let text = serde_json::to_string_pretty(record).unwrap_or_default() + "\n";
    write_atomic(&dir.join(SHARD_FILE), text.as_bytes())?;
    Ok(())
}

/// The ids of a run's prompts, in their order.
pub(crate) fn prompt_ids(dir: &Path) -> Result<Vec<String>, PipelineError> {
    /// The part of a prompt line that names it.
    #[derive(serde::Deserialize)]
    struct Id {
        id: String,
    }
    let rows: Vec<Id> = super::artifacts::read_jsonl(&dir.join("prompts.jsonl"))?;
    Ok(rows.into_iter().map(|row| row.id).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_has_exactly_one_owner() {
        for count in [1, 2, 3, 7] {
            for id in ["a", "HumanEval/0", "CRUXEval/12", ""] {
                let owners = (0..count)
                    .filter(|&index| Shard { index, count }.owns(id))
                    .count();
                assert_eq!(owners, 1, "{id} of {count}");
            }
        }
    }

    #[test]
    fn shards_parse_from_i_over_n_and_refuse_the_rest() {
        assert_eq!(Shard::parse("2/3").unwrap(), Shard { index: 2, count: 3 });
        assert_eq!(Shard::parse("2/3").unwrap().to_string(), "2/3");
        for bad in ["3/3", "1", "a/2", "0/0", "-1/2", "1/2/3"] {
            let message = Shard::parse(bad).unwrap_err().to_string();
            assert!(message.contains("--shard"), "{bad}: {message}");
        }
    }

    #[test]
    fn owners_spread_items_and_stay_fixed() {
        let counts = (0..300).fold([0usize; 3], |mut counts, i| {
            counts[owner(&format!("item-{i}"), 3)] += 1;
            counts
        });
        assert!(
            counts.iter().all(|&c| (70..=130).contains(&c)),
            "{counts:?}"
        );
        // Fixed values (Python: int.from_bytes(sha256(id)[:8], "little") % n):
        // the rule must not change between versions, or shards made by two
        // codecals would not merge.
        assert_eq!(owner("HumanEval/0", 1000), 622);
        assert_eq!(owner("CRUXEval/12", 1000), 293);
    }
}
