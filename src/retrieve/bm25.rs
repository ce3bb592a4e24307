//! BM25Okapi as the Python `rank_bm25` package computes it, bit for bit, for
//! the summarization seed's retrieval: k1 = 1.5, b = 0.75, and negative IDFs
//! replaced by epsilon (0.25) times the mean IDF.
//!
//! The index is built once over all documents; [`Bm25Okapi::top_k_leave_one_out`]
//! scores a query against every *other* document with the statistics that
//! corpus would have (N - 1 documents, its own document frequencies and mean
//! IDF), without rebuilding. Sums run in `rank_bm25`'s order, so equal scores
//! stay equal and ties break the same way (stable descending sort by index).

use std::collections::HashMap;

/// BM25Okapi's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bm25Params {
    pub k1: f64,
    pub b: f64,
    pub epsilon: f64,
}

impl Default for Bm25Params {
    /// `rank_bm25.BM25Okapi`'s defaults.
    fn default() -> Self {
        Bm25Params {
            k1: 1.5,
            b: 0.75,
            epsilon: 0.25,
        }
    }
}

/// An in-memory BM25Okapi index over tokenized documents.
pub struct Bm25Okapi {
    params: Bm25Params,
    vocabulary: HashMap<String, u32>,
    /// Per term: (document, term frequency), documents ascending.
    postings: Vec<Vec<(u32, u32)>>,
    doc_len: Vec<usize>,
    total_len: usize,
    /// Per document: its distinct terms, in order of first occurrence within it.
    doc_terms: Vec<Vec<u32>>,
}

impl Bm25Okapi {
    pub fn new(documents: &[Vec<&str>], params: Bm25Params) -> Bm25Okapi {
        let mut index = Bm25Okapi {
            params,
            vocabulary: HashMap::new(),
            postings: Vec::new(),
            doc_len: Vec::with_capacity(documents.len()),
            total_len: 0,
            doc_terms: Vec::with_capacity(documents.len()),
        };
        for (d, tokens) in documents.iter().enumerate() {
            let mut counts: Vec<(u32, u32)> = Vec::new();
            let mut slot: HashMap<u32, usize> = HashMap::new();
            for token in tokens {
                let next = index.vocabulary.len() as u32;
                let term = *index.vocabulary.entry((*token).to_owned()).or_insert(next);
                if term == next {
                    index.postings.push(Vec::new());
                }
                let at = *slot.entry(term).or_insert_with(|| {
                    counts.push((term, 0));
                    counts.len() - 1
                });
                counts[at].1 += 1;
            }
            for &(term, count) in &counts {
                index.postings[term as usize].push((d as u32, count));
            }
            index
                .doc_terms
                .push(counts.iter().map(|&(t, _)| t).collect());
            index.doc_len.push(tokens.len());
            index.total_len += tokens.len();
        }
        index
    }

    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    /// rank_bm25's `get_scores`: the score of every document for `query_tokens`.
    pub fn scores(&self, query_tokens: &[&str]) -> Vec<f64> {
        self.scores_without(query_tokens, None)
    }

    /// The `k` best other documents for document `query` (scored with its own
    /// tokens `query_tokens`), best first: (document, score).
    pub fn top_k_leave_one_out(
        &self,
        query: usize,
        query_tokens: &[&str],
        k: usize,
    ) -> Vec<(usize, f64)> {
        self.top_k(query_tokens, Some(query), k, |_| true)
    }

    /// The `k` best documents that `keep` accepts, best first, scored as an
    /// index without `left_out` would score them (`left_out` itself is never returned).
    pub fn top_k(
        &self,
        query_tokens: &[&str],
        left_out: Option<usize>,
        k: usize,
        keep: impl Fn(usize) -> bool,
    ) -> Vec<(usize, f64)> {
        let scores = self.scores_without(query_tokens, left_out);
        let mut order: Vec<usize> = (0..self.len())
            .filter(|&d| Some(d) != left_out && keep(d))
            .collect();
        // Stable: equal scores keep index order, as Python's sorted(..., key=-score).
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
        order.truncate(k);
        order.into_iter().map(|d| (d, scores[d])).collect()
    }

    /// Scores as an index without document `left_out` would give them (its own
    /// score stays 0).
    fn scores_without(&self, query_tokens: &[&str], left_out: Option<usize>) -> Vec<f64> {
        let mut scores = vec![0.0_f64; self.len()];
        let n = self.len() - usize::from(left_out.is_some());
        if n == 0 {
            return scores;
        }
        let total = self.total_len - left_out.map_or(0, |d| self.doc_len[d]);
        let avgdl = total as f64 / n as f64;
        let idf = self.idf_without(left_out, n);
        let Bm25Params { k1, b, .. } = self.params;
        for token in query_tokens {
            let Some(&term) = self.vocabulary.get(*token) else {
                continue;
            };
            let Some(term_idf) = idf[term as usize] else {
                continue;
            };
            for &(d, f) in &self.postings[term as usize] {
                let d = d as usize;
                if Some(d) == left_out {
                    continue;
                }
                // The operations in rank_bm25's order, so sums agree to the last bit.
                let f = f64::from(f);
                let norm = k1 * ((1.0 - b) + b * self.doc_len[d] as f64 / avgdl);
                scores[d] += term_idf * (f * (k1 + 1.0) / (f + norm));
            }
        }
        scores
    }

    /// Every term's IDF among the `n` documents other than `left_out` (None
    /// where the term does not occur there), negative IDFs replaced as rank_bm25 does.
    fn idf_without(&self, left_out: Option<usize>, n: usize) -> Vec<Option<f64>> {
        let mut idf: Vec<Option<f64>> = vec![None; self.postings.len()];
        let n = n as f64;
        // rank_bm25 sums IDFs in the order terms first occur in its corpus.
        let (mut sum, mut count) = (0.0, 0usize);
        for term in self.first_occurrence_order(left_out) {
            let postings = &self.postings[term as usize];
            let present = postings.iter().any(|&(d, _)| Some(d as usize) == left_out);
            let df = (postings.len() - usize::from(present)) as f64;
            let value = (n - df + 0.5).ln() - (df + 0.5).ln();
            idf[term as usize] = Some(value);
            sum += value;
            count += 1;
        }
        let floor = self.params.epsilon * (sum / count as f64);
        for value in idf.iter_mut().flatten() {
            if *value < 0.0 {
                *value = floor;
            }
        }
        idf
    }

    /// The terms of the documents other than `left_out`, in order of first occurrence.
    fn first_occurrence_order(&self, left_out: Option<usize>) -> Vec<u32> {
        let first_doc = |term: u32| {
            self.postings[term as usize]
                .iter()
                .map(|&(d, _)| d as usize)
                .find(|&d| Some(d) != left_out)
        };
        let mut order = Vec::with_capacity(self.postings.len());
        for (d, terms) in self.doc_terms.iter().enumerate() {
            if Some(d) != left_out {
                order.extend(terms.iter().filter(|&&t| first_doc(t) == Some(d)));
            }
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(texts: &[&'static str]) -> Vec<Vec<&'static str>> {
        texts.iter().map(|t| t.split(' ').collect()).collect()
    }

    #[test]
    fn leave_one_out_equals_an_index_without_the_document() {
        let texts = [
            "int get value return value",
            "void set value int value",
            "return this name",
            "int size return size of list",
            "boolean is empty return size == 0",
        ];
        let all = docs(&texts);
        let index = Bm25Okapi::new(&all, Bm25Params::default());
        for query in 0..texts.len() {
            let got = index.top_k_leave_one_out(query, &all[query], 4);
            // The same corpus without the query, built directly.
            let pool: Vec<Vec<&str>> = (0..texts.len())
                .filter(|&d| d != query)
                .map(|d| all[d].clone())
                .collect();
            let expected = Bm25Okapi::new(&pool, Bm25Params::default()).scores(&all[query]);
            for (d, score) in got {
                let pool_index = if d > query { d - 1 } else { d };
                assert_eq!(score, expected[pool_index], "query {query} doc {d}");
            }
        }
    }

    #[test]
    fn negative_idf_is_replaced_by_epsilon_times_the_mean() {
        // "a" is in every document: idf ln(0.5/3.5) < 0 becomes 0.25 x mean IDF.
        let all = docs(&["a b", "a c", "a d", "a e"]);
        let index = Bm25Okapi::new(&all, Bm25Params::default());
        let idf = index.idf_without(Some(3), 3);
        let a = (0.5_f64).ln() - (3.5_f64).ln();
        let single = (3.0_f64 - 1.0 + 0.5).ln() - (1.5_f64).ln();
        let mean = (a + 3.0 * single) / 4.0;
        assert_eq!(idf[0], Some(0.25 * mean));
        assert_eq!(idf[4], None, "'e' only occurs in the left-out document");
    }
}
