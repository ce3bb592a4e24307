//! The response cache: every generation, keyed by what was asked, in an
//! SQLite database.
//!
//! The key is the sha256 of the backend kind, the model, the prompt and the
//! decoding parameters, so a repeated request is served from disk and a
//! changed one is not. Each answer is stored in its own transaction as soon
//! as it arrives; with SQLite's write-ahead log, a process killed at any
//! moment leaves every committed answer readable and the file consistent.
//! This module stores and finds answers; it never calls a backend.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};

use super::{BackendId, Generation, Params};
use crate::prompt::Prompt;

/// An open cache database.
pub struct Cache {
    path: PathBuf,
    connection: Mutex<Connection>,
}

/// A cache that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{path}: response cache: {message}")]
pub struct CacheError {
    pub path: PathBuf,
    pub message: String,
}

/// The cache key of one request.
pub fn request_key(backend: &BackendId, prompt: &Prompt, params: &Params) -> String {
    let mut request = serde_json::json!({
        "backend": backend.kind,
        "model": backend.model,
        "prompt": prompt,
        "params": params,
    });
    // Added only when set, so that the keys of earlier caches stay valid.
    if !backend.extra_body.is_empty() {
        request["extra_body"] = serde_json::Value::Object(backend.extra_body.clone());
    }
    crate::digest::sha256_hex(request.to_string().as_bytes())
}

impl Cache {
    /// Opens (creating if needed) the database at `path`.
    pub fn open(path: &Path) -> Result<Cache, CacheError> {
        let error = |e: rusqlite::Error| CacheError {
            path: path.to_owned(),
            message: e.to_string(),
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| CacheError {
                path: dir.to_owned(),
                message: e.to_string(),
            })?;
        }
        let connection = Connection::open(path).map_err(error)?;
        // WAL keeps readers and the writer apart and survives a killed process;
        // busy_timeout lets two codecal processes share one cache.
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(error)?;
        connection
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(error)?;
        connection
            .busy_timeout(std::time::Duration::from_secs(30))
            .map_err(error)?;
        connection
            .execute_batch(
                "CREATE TABLE IF NOT EXISTS generations (
                    key TEXT PRIMARY KEY,
                    backend TEXT NOT NULL,
                    model TEXT NOT NULL,
                    request TEXT NOT NULL,
                    generation TEXT NOT NULL,
                    seconds REAL NOT NULL,
                    created TEXT NOT NULL DEFAULT (datetime('now'))
                )",
            )
            .map_err(error)?;
        Ok(Cache {
            path: path.to_owned(),
            connection: Mutex::new(connection),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn error(&self, message: impl ToString) -> CacheError {
        CacheError {
            path: self.path.clone(),
            message: message.to_string(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite half-written.
        self.connection.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The stored generation for `key` and the seconds it took, if any.
    pub fn get(&self, key: &str) -> Result<Option<(Generation, f64)>, CacheError> {
        let row: Option<(String, f64)> = self
            .lock()
            .query_row(
                "SELECT generation, seconds FROM generations WHERE key = ?1",
                params![key],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(|e| self.error(e))?;
        row.map(|(json, seconds)| {
            serde_json::from_str(&json)
                .map(|g| (g, seconds))
                .map_err(|e| self.error(format!("entry {key} is unreadable: {e}")))
        })
        .transpose()
    }

    /// Stores one generation in its own transaction.
    pub fn put(
        &self,
        key: &str,
        backend: &BackendId,
        request: &serde_json::Value,
        generation: &Generation,
        seconds: f64,
    ) -> Result<(), CacheError> {
        let json = serde_json::to_string(generation).map_err(|e| self.error(e))?;
        let mut connection = self.lock();
        let tx = connection.transaction().map_err(|e| self.error(e))?;
        tx.execute(
            "INSERT OR REPLACE INTO generations (key, backend, model, request, generation, seconds)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                key,
                backend.kind,
                backend.model,
                request.to_string(),
                json,
                seconds
            ],
        )
        .map_err(|e| self.error(e))?;
        tx.commit().map_err(|e| self.error(e))
    }

    /// How many generations are stored.
    pub fn len(&self) -> Result<usize, CacheError> {
        self.lock()
            .query_row("SELECT COUNT(*) FROM generations", [], |row| {
                row.get::<_, i64>(0)
            })
            .map(|n| n as usize)
            .map_err(|e| self.error(e))
    }

    /// SQLite's own consistency check: `ok`, or what is wrong.
    pub fn integrity_check(&self) -> Result<String, CacheError> {
        self.lock()
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .map_err(|e| self.error(e))
    }

    pub fn is_empty(&self) -> Result<bool, CacheError> {
        self.len().map(|n| n == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generation(text: &str) -> Generation {
        Generation {
            text: text.into(),
            tokens: Vec::new(),
            prompt_tokens: Some(3),
            completion_tokens: None,
            finish_reason: Some("stop".into()),
        }
    }

    #[test]
    fn stored_answers_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.sqlite");
        let backend = BackendId {
            kind: "openai".into(),
            model: "m".into(),
            ..BackendId::default()
        };
        let prompt = Prompt::Completion("p".into());
        let key = request_key(&backend, &prompt, &Params::default());
        {
            let cache = Cache::open(&path).unwrap();
            assert!(cache.get(&key).unwrap().is_none());
            cache
                .put(
                    &key,
                    &backend,
                    &serde_json::json!({}),
                    &generation("a"),
                    0.5,
                )
                .unwrap();
        }
        let cache = Cache::open(&path).unwrap();
        assert_eq!(cache.get(&key).unwrap(), Some((generation("a"), 0.5)));
        assert_eq!(cache.len().unwrap(), 1);
    }

    #[test]
    fn key_changes_with_every_part_of_the_request() {
        let backend = BackendId {
            kind: "openai".into(),
            model: "m".into(),
            ..BackendId::default()
        };
        let prompt = Prompt::Completion("p".into());
        let base = request_key(&backend, &prompt, &Params::default());
        let other_model = BackendId {
            model: "n".into(),
            ..backend.clone()
        };
        let hotter = Params {
            temperature: 1.0,
            ..Params::default()
        };
        let mut extra_body = serde_json::Map::new();
        extra_body.insert("repeat_penalty".into(), serde_json::json!(1.0));
        let unpenalised = BackendId {
            extra_body,
            ..backend.clone()
        };
        assert_ne!(base, request_key(&unpenalised, &prompt, &Params::default()));
        assert_ne!(base, request_key(&other_model, &prompt, &Params::default()));
        assert_ne!(base, request_key(&backend, &prompt, &hotter));
        assert_ne!(
            base,
            request_key(
                &backend,
                &Prompt::Completion("q".into()),
                &Params::default()
            )
        );
        assert_eq!(base, request_key(&backend, &prompt, &Params::default()));
    }
}
