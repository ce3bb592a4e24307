//! `manifest.json`, the record of what made a run directory: the codecal
//! version, the config as it was run, the installed models' hashes, and
//! each stage's input hash and outputs. The run's books read and write it;
//! a merge reads its shards', and gathers their per-item files. Not the
//! stages themselves (`pipeline`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// One stage's entry in the manifest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageRecord {
    pub input_hash: String,
    pub outputs: Vec<String>,
    pub seconds: f64,
    /// Its outputs hold a row per item (a shard's share of the items when
    /// the run is a shard), so a merge interleaves them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub per_item: bool,
}

/// `manifest.json`: what made this run directory.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub codecal_version: String,
    /// The run's config as JSON: a record, kept whole even where a later
    /// codecal reads configs differently (see [`Manifest::config`]).
    config: serde_json::Value,
    /// sha256 of each model file, by name.
    pub models: BTreeMap<String, String>,
    pub stages: BTreeMap<String, StageRecord>,
}

impl Manifest {
    /// Records the run's config.
    pub fn set_config(&mut self, config: &impl Serialize) {
        self.config = serde_json::to_value(config).unwrap_or_default();
    }

    /// The run's name as recorded, read from the raw config so that a config
    /// of another codecal version still names its run.
    pub fn recorded_name(&self) -> Option<&str> {
        self.config.get("name")?.as_str()
    }

    /// The recorded config, read as `T` (a merge rebuilds its run from it).
    pub fn config<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_value(self.config.clone())
    }

    /// The manifest as the file holds it.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// The manifest at `path`, or `None` where there is none or it does not read.
pub fn read_manifest(path: &Path) -> Option<Manifest> {
    let bytes = crate::artifact::read_regular(path, crate::artifact::JSON_CAP_BYTES).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Per-piece JSON documents of a sharded run gathered into one:
/// `{"shards": [{"shard": S, "record": DOCUMENT}, ...]}`, pretty-printed.
/// `Err` names the piece that is not JSON.
pub fn gather_json<S: Serialize>(
    documents: &[(S, Vec<u8>)],
) -> Result<String, (usize, serde_json::Error)> {
    let mut records = Vec::with_capacity(documents.len());
    for (i, (shard, bytes)) in documents.iter().enumerate() {
        let record: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| (i, e))?;
        records.push(serde_json::json!({ "shard": shard, "record": record }));
    }
    let text = serde_json::to_string_pretty(&serde_json::json!({ "shards": records }));
    Ok(text.unwrap_or_default() + "\n")
}

/// The `id` of a JSON line (empty where it has none).
pub fn json_line_id(line: &str) -> String {
    #[derive(Deserialize)]
    struct Id {
        #[serde(default)]
        id: String,
    }
    serde_json::from_str::<Id>(line).map_or_else(|_| String::new(), |row| row.id)
}
