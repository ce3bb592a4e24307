//! Few-shot exemplar retrieval: the records most similar to a query's code.
//!
//! `bm25` is the `rank_bm25`-compatible mode that reproduces the
//! summarization seed's replication code exactly; it scores in memory.
//! Tokenization there is the seed's: `code` split on single spaces. `index` is
//! a persistent tantivy index with a code tokenizer, for pools at scale.

pub mod bm25;
pub mod index;

use rayon::prelude::*;

pub use bm25::{Bm25Okapi, Bm25Params};
pub use index::{CodeIndex, IndexError, code_tokens};

use crate::corpus::Record;
use crate::generate::row::{ExemplarRef, ItemFields, PromptLine};
use crate::prompt::{PromptStyle, Shot, Template};

/// Which pool records a query may not get as exemplars, beyond itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Exclude {
    /// Only the query itself (a pool record with the query's id).
    #[default]
    SelfOnly,
    /// Also every record from the query's repository.
    SameRepo,
}

crate::choices!(Exclude { SelfOnly => "self", SameRepo => "same-repo" });

/// A retrieved exemplar: a pool index and its score.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    pub pool_index: usize,
    pub score: f64,
}

/// The `k` best pool records for each query by rank_bm25's BM25Okapi over
/// `code` split on single spaces. With `same_file`, queries are the pool
/// itself and each query is scored against the pool without it.
pub fn rank_bm25(
    pool: &[Record],
    queries: &[Record],
    same_file: bool,
    k: usize,
    exclude: Exclude,
) -> Vec<Vec<Hit>> {
    let tokens: Vec<Vec<&str>> = pool.iter().map(|r| split_on_spaces(&r.code)).collect();
    let index = Bm25Okapi::new(&tokens, Bm25Params::default());
    queries
        .par_iter()
        .enumerate()
        .map(|(q, query)| {
            let allowed = |d: usize| {
                pool[d].id != query.id
                    && (exclude != Exclude::SameRepo || pool[d].repo != query.repo)
            };
            let left_out = same_file.then_some(q);
            index
                .top_k(&split_on_spaces(&query.code), left_out, k, allowed)
                .into_iter()
                .map(|(pool_index, score)| Hit { pool_index, score })
                .collect()
        })
        .collect()
}

/// The seed's tokenization for the rank-bm25 mode: split on single spaces
/// (runs of spaces give empty tokens, as Python's `str.split(" ")`).
pub fn split_on_spaces(code: &str) -> Vec<&str> {
    code.split(' ').collect()
}

/// The `k` best pool records for each query from the tantivy index in
/// `index_dir` (built there from `pool` unless it already holds an index of a
/// pool with the same `fingerprint`). A query is never its own exemplar.
pub fn tantivy(
    pool: &[Record],
    queries: &[Record],
    index_dir: &std::path::Path,
    fingerprint: &str,
    k: usize,
    exclude: Exclude,
) -> Result<Vec<Vec<Hit>>, IndexError> {
    let index = CodeIndex::open_or_build(index_dir, pool, fingerprint)?;
    queries
        .par_iter()
        .map(|query| {
            index
                .search(query, k, exclude)
                .map_err(|source| IndexError::Search {
                    path: index_dir.to_owned(),
                    source,
                })
        })
        .collect()
}

/// The retrieval back-ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetrieveMode {
    /// rank_bm25's BM25Okapi, bit for bit.
    RankBm25,
    /// A persistent tantivy index.
    Tantivy,
}

crate::choices!(RetrieveMode { RankBm25 => "rank-bm25", Tantivy => "tantivy" });

/// What to search for each query.
#[derive(Clone, Debug, PartialEq)]
pub struct ExemplarSearch {
    pub mode: RetrieveMode,
    pub k: usize,
    pub exclude: Exclude,
    /// The queries are the pool itself (rank-bm25 then leaves each one out).
    pub same_file: bool,
    /// Tantivy: the index directory and the pool's fingerprint.
    pub index: Option<(std::path::PathBuf, String)>,
}

/// The `k` best exemplars of each query, by the mode `search` names.
pub fn find_exemplars(
    pool: &[Record],
    queries: &[Record],
    search: &ExemplarSearch,
) -> Result<Vec<Vec<Hit>>, IndexError> {
    match (search.mode, &search.index) {
        (RetrieveMode::Tantivy, Some((dir, fingerprint))) => {
            tantivy(pool, queries, dir, fingerprint, search.k, search.exclude)
        }
        _ => Ok(rank_bm25(
            pool,
            queries,
            search.same_file,
            search.k,
            search.exclude,
        )),
    }
}

/// How each query's prompt is built from its exemplars.
pub struct PromptOptions<'a> {
    pub template: &'a Template,
    pub style: PromptStyle,
    /// Estimated-token budget (see `prompt::build`).
    pub budget: Option<usize>,
    /// Each exemplar's and the query's code followed by ASAP's facts
    /// (`prompt::asap`): repository, path, tagged identifiers, data flow.
    pub asap: bool,
}

/// The prompt of `query` with its exemplars (`hits` into `pool`, best
/// first), and those exemplars.
pub fn prompt_for<'p>(
    pool: &'p [Record],
    query: &Record,
    hits: &[Hit],
    options: &PromptOptions,
) -> (crate::prompt::Prompt, Vec<&'p Record>) {
    let exemplars: Vec<&Record> = hits.iter().map(|h| &pool[h.pool_index]).collect();
    let code_of = |r: &Record| {
        if options.asap {
            crate::prompt::asap::augment(&r.code, &r.language, &r.repo, &r.path)
        } else {
            r.code.clone()
        }
    };
    let codes: Vec<String> = exemplars.iter().map(|r| code_of(r)).collect();
    let shots: Vec<Shot> = exemplars
        .iter()
        .zip(&codes)
        .map(|(r, code)| Shot {
            code,
            reference: &r.reference,
        })
        .collect();
    let prompt = crate::prompt::build(
        options.template,
        options.style,
        &shots,
        &code_of(query),
        options.budget,
    );
    (prompt, exemplars)
}

/// One JSON line per query: `{"id", "repo", "language", "reference", "code", "exemplars": [{"id", "score"}], "prompt"}`,
/// exemplars best first.
pub fn prompts_jsonl(
    pool: &[Record],
    queries: &[Record],
    hits: &[Vec<Hit>],
    options: &PromptOptions,
) -> String {
    let mut out = String::new();
    for (query, hits) in queries.iter().zip(hits) {
        let (prompt, exemplars) = prompt_for(pool, query, hits, options);
        let listed: Vec<ExemplarRef> = exemplars
            .iter()
            .zip(hits)
            .map(|(r, h)| ExemplarRef {
                id: r.id.clone(),
                score: h.score,
            })
            .collect();
        let line = PromptLine {
            id: query.id.clone(),
            prompt,
            item: ItemFields {
                code: Some(query.code.clone()),
                reference: Some(query.reference.clone()),
                repo: Some(query.repo.clone()),
                language: Some(query.language.clone()),
                exemplars: Some(listed),
                ..ItemFields::default()
            },
        };
        out += &serde_json::to_string(&line).unwrap_or_default();
        out.push('\n');
    }
    out
}
