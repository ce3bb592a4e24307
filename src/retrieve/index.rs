//! A persistent tantivy index over a pool's code, for retrieval at scale.
//!
//! Code is tokenized for code ([`code_tokens`]): words split on whitespace and
//! punctuation, each kept whole and also split at snake_case and camelCase
//! boundaries, all lower-cased. The index is built once into a directory and
//! reused while the pool is unchanged. Scores are tantivy's BM25 (k1 1.2,
//! b 0.75), not rank_bm25's; for the seed's exact numbers use `bm25`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::tokenizer::{TextAnalyzer, WhitespaceTokenizer};
use tantivy::{Index, IndexReader, TantivyDocument, Term, doc};

use super::{Exclude, Hit};
use crate::corpus::Record;

const TOKENIZER: &str = "codecal_code";
const STAMP: &str = "codecal-pool.txt";

/// A search of an open index that failed.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("tantivy: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    #[error("tantivy: a document without its ordinal")]
    NoOrdinal,
}

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{path}: {source}")]
    Search { path: PathBuf, source: SearchError },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: tantivy: {message}")]
    Tantivy { path: PathBuf, message: String },
    #[error(
        "{path}: not empty and not a codecal index (no {STAMP}); refusing to delete it, \
         name an empty or new directory"
    )]
    NotAnIndex { path: PathBuf },
}

/// Removes an old index directory. A reader of the old index that is still
/// open (in this process or another) may create its lock files there while
/// the removal runs, so a "directory not empty" is retried, a few times,
/// briefly.
fn remove_index_dir(dir: &Path) -> std::io::Result<()> {
    let mut attempt = 0;
    loop {
        match std::fs::remove_dir_all(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) if attempt < 20 && e.kind() == std::io::ErrorKind::DirectoryNotEmpty => {
                attempt += 1;
                std::thread::sleep(std::time::Duration::from_millis(10 * attempt));
            }
            Err(e) => return Err(e),
        }
    }
}

/// What identifies a pool file's contents for index reuse: its canonical path,
/// size and modification time.
pub fn pool_fingerprint(path: &Path) -> std::io::Result<String> {
    let meta = std::fs::metadata(path)?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let canonical = std::fs::canonicalize(path)?;
    Ok(format!(
        "{} {} {modified}\n",
        canonical.display(),
        meta.len()
    ))
}

/// `<home>/indexes/<pool file name>-<hash of the fingerprint>`.
pub fn default_index_dir(home: &Path, pool: &Path, fingerprint: &str) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    fingerprint.hash(&mut hasher);
    let name = pool
        .file_name()
        .map_or("pool".into(), |n| n.to_string_lossy().into_owned());
    home.join("indexes")
        .join(format!("{name}-{:016x}", hasher.finish()))
}

/// Words of `code` for indexing and querying (see the module doc).
pub fn code_tokens(code: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    for word in code.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if word.is_empty() {
            continue;
        }
        tokens.push(word.to_lowercase());
        let parts = identifier_parts(word);
        if parts.len() > 1 {
            tokens.extend(parts.into_iter().map(|p| p.to_lowercase()));
        }
    }
    tokens
}

/// `getHTTPServer_name` -> get, HTTP, Server, name.
fn identifier_parts(word: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for piece in word.split('_').filter(|p| !p.is_empty()) {
        let chars: Vec<(usize, char)> = piece.char_indices().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, here) = (chars[i - 1].1, chars[i].1);
            let next_lower = chars.get(i + 1).is_some_and(|&(_, c)| c.is_lowercase());
            let boundary = (prev.is_lowercase() && here.is_uppercase())
                || (prev.is_uppercase() && here.is_uppercase() && next_lower);
            if boundary {
                parts.push(&piece[start..chars[i].0]);
                start = chars[i].0;
            }
        }
        parts.push(&piece[start..]);
    }
    parts
}

/// The index's fields.
struct Fields {
    ordinal: Field,
    id: Field,
    repo: Field,
    code: Field,
}

/// A tantivy index over a pool, searchable in parallel.
pub struct CodeIndex {
    reader: IndexReader,
    fields: Fields,
}

impl CodeIndex {
    /// Opens the index in `dir` if it was built from a pool with `fingerprint`,
    /// else (re)builds it there from `pool`.
    pub fn open_or_build(
        dir: &Path,
        pool: &[Record],
        fingerprint: &str,
    ) -> Result<CodeIndex, IndexError> {
        let io = |source| IndexError::Io {
            path: dir.to_owned(),
            source,
        };
        let tantivy = |e: tantivy::TantivyError| IndexError::Tantivy {
            path: dir.to_owned(),
            message: e.to_string(),
        };
        let stamp = dir.join(STAMP);
        let fresh = std::fs::read_to_string(&stamp).is_ok_and(|s| s == fingerprint);
        let index = if fresh {
            Index::open_in_dir(dir).map_err(tantivy)?
        } else {
            if dir.exists() {
                // Only what codecal built (its stamp is written first) or an
                // empty directory is ever deleted.
                let empty = std::fs::read_dir(dir).map_err(io)?.next().is_none();
                if !empty && !stamp.exists() {
                    return Err(IndexError::NotAnIndex {
                        path: dir.to_owned(),
                    });
                }
                remove_index_dir(dir).map_err(io)?;
            }
            std::fs::create_dir_all(dir).map_err(io)?;
            crate::artifact::write_atomic(&stamp, b"building").map_err(|e| IndexError::Io {
                path: stamp.clone(),
                source: e.source,
            })?;
            let index = Index::create_in_dir(dir, schema()).map_err(tantivy)?;
            register_tokenizer(&index);
            let fields = fields(&index.schema()).map_err(tantivy)?;
            let mut writer = index
                .writer_with_num_threads(2, 200_000_000)
                .map_err(tantivy)?;
            for (ordinal, record) in pool.iter().enumerate() {
                writer
                    .add_document(doc!(
                        fields.ordinal => ordinal as u64,
                        fields.id => record.id.as_str(),
                        fields.repo => record.repo.as_str(),
                        fields.code => code_tokens(&record.code).join(" "),
                    ))
                    .map_err(tantivy)?;
            }
            writer.commit().map_err(tantivy)?;
            // Merges run on after a commit and write and delete segment files;
            // wait for them, so that the index is whole (and a rebuild can
            // remove the directory) once this returns.
            writer.wait_merging_threads().map_err(tantivy)?;
            // The stamp goes last: an index without it is rebuilt, never trusted.
            crate::artifact::write_atomic(&stamp, fingerprint.as_bytes()).map_err(|e| {
                IndexError::Io {
                    path: e.path,
                    source: e.source,
                }
            })?;
            index
        };
        register_tokenizer(&index);
        // A stamped directory whose schema is not codecal's (edited on disk,
        // or made by another version) is an error, not a panic.
        let fields = fields(&index.schema()).map_err(tantivy)?;
        let reader = index.reader().map_err(tantivy)?;
        Ok(CodeIndex { reader, fields })
    }

    /// The `k` best pool records for `query`, never the query itself (same id),
    /// nor its repository's records with `Exclude::SameRepo`.
    pub fn search(
        &self,
        query: &Record,
        k: usize,
        exclude: Exclude,
    ) -> Result<Vec<Hit>, SearchError> {
        let terms: BTreeSet<String> = code_tokens(&query.code).into_iter().collect();
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|t| {
                let term = Term::from_field_text(self.fields.code, t);
                (
                    Occur::Should,
                    Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)) as Box<dyn Query>,
                )
            })
            .collect();
        let mut exclude_value = |field: Field, value: &str| {
            let term = Term::from_field_text(field, value);
            clauses.push((
                Occur::MustNot,
                Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
            ));
        };
        exclude_value(self.fields.id, &query.id);
        if exclude == Exclude::SameRepo {
            exclude_value(self.fields.repo, &query.repo);
        }
        let searcher = self.reader.searcher();
        let top = searcher.search(&BooleanQuery::new(clauses), &TopDocs::with_limit(k))?;
        top.into_iter()
            .map(|(score, address)| {
                let stored: TantivyDocument = searcher.doc(address)?;
                let ordinal = stored
                    .get_first(self.fields.ordinal)
                    .and_then(|v| v.as_u64())
                    .ok_or(SearchError::NoOrdinal)?;
                Ok(Hit {
                    pool_index: ordinal as usize,
                    score: f64::from(score),
                })
            })
            .collect()
    }
}

fn schema() -> Schema {
    let mut builder = Schema::builder();
    builder.add_u64_field("ordinal", STORED);
    builder.add_text_field("id", STRING);
    builder.add_text_field("repo", STRING);
    let code = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    builder.add_text_field("code", code);
    builder.build()
}

fn fields(schema: &Schema) -> tantivy::Result<Fields> {
    let field = |name| schema.get_field(name);
    Ok(Fields {
        ordinal: field("ordinal")?,
        id: field("id")?,
        repo: field("repo")?,
        code: field("code")?,
    })
}

/// Tokens arrive pre-split and lower-cased by `code_tokens`; whitespace splits them.
fn register_tokenizer(index: &Index) {
    index.tokenizers().register(
        TOKENIZER,
        TextAnalyzer::builder(WhitespaceTokenizer::default()).build(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_tokens_keep_words_and_split_identifiers() {
        assert_eq!(
            code_tokens("int getHTTPServer_name(x) { return foo.bar; }"),
            [
                "int",
                "gethttpserver_name",
                "get",
                "http",
                "server",
                "name",
                "x",
                "return",
                "foo",
                "bar"
            ]
        );
    }

    fn record(id: &str, repo: &str, code: &str) -> Record {
        Record {
            id: id.into(),
            repo: repo.into(),
            path: String::new(),
            func_name: String::new(),
            language: "java".into(),
            code: code.into(),
            reference: String::new(),
        }
    }

    #[test]
    fn index_is_built_once_and_searched_with_exclusions() {
        let dir = tempfile::tempdir().unwrap();
        let pool = [
            record("a", "r1", "int getSize() { return size; }"),
            record("b", "r1", "int size() { return size; }"),
            record("c", "r2", "int sizeOf(List list) { return list.size(); }"),
            record("d", "r2", "void clear() { items = null; }"),
        ];
        let path = dir.path().join("index");
        let index = CodeIndex::open_or_build(&path, &pool, "v1").unwrap();
        let hits = index.search(&pool[0], 2, Exclude::SelfOnly).unwrap();
        let ids: Vec<&str> = hits
            .iter()
            .map(|h| pool[h.pool_index].id.as_str())
            .collect();
        assert_eq!(ids.len(), 2);
        assert!(!ids.contains(&"a"), "never the query itself");
        assert_eq!(ids[0], "b");
        let other_repo = index.search(&pool[0], 2, Exclude::SameRepo).unwrap();
        assert!(other_repo.iter().all(|h| pool[h.pool_index].repo == "r2"));
        // Reopened with the same fingerprint: no rebuild (the segment files stay).
        let before: Vec<_> = std::fs::read_dir(&path)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        CodeIndex::open_or_build(&path, &pool, "v1").unwrap();
        let after: Vec<_> = std::fs::read_dir(&path)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(before.len(), after.len());
        // A changed pool rebuilds.
        let rebuilt = CodeIndex::open_or_build(&path, &pool[..2], "v2").unwrap();
        assert_eq!(
            rebuilt
                .search(&pool[0], 3, Exclude::SelfOnly)
                .unwrap()
                .len(),
            1
        );
    }
}
