//! Few-shot exemplar retrieval: the records most similar to a query's code.
//!
//! `bm25` is the `rank_bm25`-compatible mode that reproduces the
//! summarization seed's replication code exactly; it scores in memory.
//! Tokenization here is the seed's: `code` split on single spaces.

pub mod bm25;

pub use bm25::{Bm25Okapi, Bm25Params};

/// The seed's tokenization for the rank-bm25 mode: split on single spaces
/// (runs of spaces give empty tokens, as Python's `str.split(" ")`).
pub fn split_on_spaces(code: &str) -> Vec<&str> {
    code.split(' ').collect()
}
