//! Similarity of a generated summary to the developer's reference: SentenceBERT
//! cosine, BERTScore, BLEU and ROUGE, one [`PairScores`] per [`Pair`].
//!
//! [`Scorer`] is the library face used by `codecal score` and later stages. It
//! embeds each distinct text once, whatever its number of pairs. Models reach it
//! only through the [`Embedder`] trait; choosing a threshold is `thresholds`'
//! business, not this module's.

pub mod embed;
pub mod lexical;

use std::collections::HashMap;

use serde::Serialize;

pub use embed::{Device, EmbedError, EmbedOptions, Embedder, Embedding, OnnxEmbedder};
pub use lexical::{LexicalScores, Prf, Tokenization, lexical_scores};

/// A reference summary and a candidate to compare with it.
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    pub id: String,
    pub reference: String,
    pub candidate: String,
}

/// Every similarity metric of one pair.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairScores {
    pub id: String,
    /// Cosine of the SentenceBERT sentence embeddings, in [-1, 1].
    pub sbert_cosine: f64,
    /// (sbert_cosine + 1) / 2: the scale of the summarization seed's thresholds.
    pub sbert_cosine01: f64,
    /// BERTScore by greedy cosine matching of MiniLM token vectors (not
    /// roberta-large, so not comparable with published BERTScore numbers).
    pub bertscore: Prf,
    #[serde(flatten)]
    pub lexical: LexicalScores,
}

impl PairScores {
    /// Every score with its column name, in output order (the id excluded).
    pub fn named_values(&self) -> Vec<(String, f64)> {
        let mut values = vec![
            ("sbert_cosine".to_owned(), self.sbert_cosine),
            ("sbert_cosine01".to_owned(), self.sbert_cosine01),
            ("bertscore_p".to_owned(), self.bertscore.precision),
            ("bertscore_r".to_owned(), self.bertscore.recall),
            ("bertscore_f".to_owned(), self.bertscore.f),
        ];
        values.extend(self.lexical.named_values());
        values
    }
}

/// Texts embedded per call to the embedder, so progress can be reported between calls.
const EMBED_CHUNK: usize = 1024;

/// Scores pairs with one embedder and one tokenization.
pub struct Scorer<E: Embedder> {
    embedder: E,
    tokenization: Tokenization,
}

impl<E: Embedder> Scorer<E> {
    pub fn new(embedder: E, tokenization: Tokenization) -> Scorer<E> {
        Scorer {
            embedder,
            tokenization,
        }
    }

    /// Texts truncated to the model's window so far.
    pub fn truncated(&self) -> usize {
        self.embedder.truncated()
    }

    /// Scores every pair; `progress(done, total)` is called as texts are embedded.
    pub fn score(
        &mut self,
        pairs: &[Pair],
        mut progress: impl FnMut(usize, usize),
    ) -> Result<Vec<PairScores>, EmbedError> {
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut distinct: Vec<&str> = Vec::new();
        for pair in pairs {
            for text in [pair.reference.as_str(), pair.candidate.as_str()] {
                index.entry(text).or_insert_with(|| {
                    distinct.push(text);
                    distinct.len() - 1
                });
            }
        }
        // Chunks of similar length keep the embedder's batches free of padding.
        let mut order: Vec<usize> = (0..distinct.len()).collect();
        order.sort_by_key(|&i| distinct[i].len());
        let mut slots: Vec<Option<Embedding>> = vec![None; distinct.len()];
        let mut done = 0;
        for chunk in order.chunks(EMBED_CHUNK) {
            let texts: Vec<&str> = chunk.iter().map(|&i| distinct[i]).collect();
            for (&i, embedding) in chunk.iter().zip(self.embedder.embed(&texts)?) {
                slots[i] = Some(embedding);
            }
            done += chunk.len();
            progress(done, distinct.len());
        }
        let embeddings: Vec<Embedding> = slots.into_iter().flatten().collect();
        Ok(pairs
            .iter()
            .map(|pair| {
                let reference = &embeddings[index[pair.reference.as_str()]];
                let candidate = &embeddings[index[pair.candidate.as_str()]];
                let cosine = f64::from(dot(&reference.sentence, &candidate.sentence));
                PairScores {
                    id: pair.id.clone(),
                    sbert_cosine: cosine,
                    sbert_cosine01: (cosine + 1.0) / 2.0,
                    bertscore: bertscore(&reference.tokens, &candidate.tokens),
                    lexical: lexical_scores(
                        &self.tokenization.tokenize(&pair.reference),
                        &self.tokenization.tokenize(&pair.candidate),
                    ),
                }
            })
            .collect())
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn normalized(vectors: &[Vec<f32>]) -> Vec<Vec<f32>> {
    vectors
        .iter()
        .map(|v| {
            let norm = dot(v, v).sqrt().max(1e-12);
            v.iter().map(|x| x / norm).collect()
        })
        .collect()
}

/// BERTScore without idf weighting: each token's best cosine on the other side, averaged.
pub fn bertscore(reference: &[Vec<f32>], candidate: &[Vec<f32>]) -> Prf {
    if reference.is_empty() || candidate.is_empty() {
        return Prf::default();
    }
    let (reference, candidate) = (normalized(reference), normalized(candidate));
    let best = |from: &[Vec<f32>], to: &[Vec<f32>]| {
        let total: f64 = from
            .iter()
            .map(|a| {
                to.iter()
                    .map(|b| f64::from(dot(a, b)))
                    .fold(f64::MIN, f64::max)
            })
            .sum();
        total / from.len() as f64
    };
    Prf::new(best(&candidate, &reference), best(&reference, &candidate))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Embeds a text as its length and word count: enough to test the scorer's plumbing.
    struct LengthEmbedder {
        calls: Vec<usize>,
    }

    impl Embedder for LengthEmbedder {
        fn embed(&mut self, texts: &[&str]) -> Result<Vec<Embedding>, EmbedError> {
            self.calls.push(texts.len());
            Ok(texts
                .iter()
                .map(|t| {
                    let v = vec![t.len() as f32 + 1.0, t.split_whitespace().count() as f32];
                    let norm = dot(&v, &v).sqrt();
                    Embedding {
                        sentence: v.iter().map(|x| x / norm).collect(),
                        tokens: t
                            .split_whitespace()
                            .map(|w| vec![w.len() as f32, 1.0])
                            .collect(),
                    }
                })
                .collect())
        }

        fn truncated(&self) -> usize {
            0
        }
    }

    #[test]
    fn each_distinct_text_is_embedded_once() {
        let pair = |id: &str, c: &str| Pair {
            id: id.into(),
            reference: "returns the sum".into(),
            candidate: c.into(),
        };
        let pairs = [
            pair("a", "adds numbers"),
            pair("b", "returns the sum"),
            pair("c", "adds numbers"),
        ];
        let mut scorer = Scorer::new(LengthEmbedder { calls: vec![] }, Tokenization::Whitespace);
        let scores = scorer.score(&pairs, |_, _| {}).unwrap();
        assert_eq!(scorer.embedder.calls, vec![2]);
        assert!((scores[1].sbert_cosine - 1.0).abs() < 1e-6);
        assert_eq!(scores[0].sbert_cosine, scores[2].sbert_cosine);
        assert!((scores[1].bertscore.f - 1.0).abs() < 1e-6);
        assert_eq!(
            scores[1].sbert_cosine01,
            (scores[1].sbert_cosine + 1.0) / 2.0
        );
    }

    #[test]
    fn bertscore_matches_greedily() {
        let reference = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
        let candidate = vec![vec![1.0, 0.0]];
        let s = bertscore(&reference, &candidate);
        assert!((s.precision - 1.0).abs() < 1e-12);
        assert!((s.recall - 0.5).abs() < 1e-12);
        assert_eq!(bertscore(&[], &candidate), Prf::default());
    }
}
