//! Lexical similarity of a candidate summary to its reference: BLEU and ROUGE.
//!
//! Texts are tokenized first ([`Tokenization`]); every metric then works on
//! token lists. No model is involved here (see `embed` for SentenceBERT and
//! BERTScore).

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

/// How texts are split into tokens for the lexical metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tokenization {
    /// Lower-case and split punctuation as the CodeXGLUE code-to-text evaluator
    /// (bleu.py, after NIST mteval-v11a) does.
    #[default]
    Codexglue,
    /// Split on whitespace only: how the Haque et al. metric columns were
    /// computed, on texts that are already tokenized.
    Whitespace,
}

crate::choices!(Tokenization { Codexglue => "codexglue", Whitespace => "whitespace" });

/// The punctuation rules of CodeXGLUE's bleu.py `normalize`, in order.
static CODEXGLUE_RULES: LazyLock<[(Regex, &'static str); 4]> = LazyLock::new(|| {
    let rule = |pattern: &str, replace| (Regex::new(pattern).expect("valid pattern"), replace);
    [
        rule(r"([\{-~\[-` -&\(-\+:-@/])", " $1 "),
        rule(r"([^0-9])([\.,])", "$1 $2 "),
        rule(r"([\.,])([^0-9])", " $1 $2"),
        rule(r"([0-9])(-)", "$1 $2 "),
    ]
});

impl Tokenization {
    pub fn tokenize(self, text: &str) -> Vec<String> {
        match self {
            Tokenization::Whitespace => text.split_whitespace().map(str::to_owned).collect(),
            Tokenization::Codexglue => {
                let joined = text
                    .replace("<skipped>", "")
                    .replace("-\n", "")
                    .replace('\n', " ");
                let mut s = format!(" {} ", joined.to_lowercase());
                for (pattern, replace) in CODEXGLUE_RULES.iter() {
                    s = pattern.replace_all(&s, *replace).into_owned();
                }
                s.split_whitespace().map(str::to_owned).collect()
            }
        }
    }
}

/// Precision, recall and F1 of one ROUGE variant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Prf {
    pub precision: f64,
    pub recall: f64,
    pub f: f64,
}

impl Prf {
    /// Precision and recall with their F1 (0 when both are 0).
    pub fn new(precision: f64, recall: f64) -> Prf {
        let f = if precision + recall > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        };
        Prf {
            precision,
            recall,
            f,
        }
    }
}

/// All lexical metrics of one (reference, candidate) pair.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LexicalScores {
    /// Cumulative BLEU-1..4: brevity penalty times the geometric mean of the
    /// modified 1..n-gram precisions (unsmoothed; 0 when a precision is 0).
    pub bleu: [f64; 4],
    /// Sentence BLEU-4 with the add-one smoothing (n > 1) and the brevity
    /// penalty of CodeXGLUE's code-to-text evaluator, in [0, 1].
    pub bleu4_codexglue: f64,
    pub rouge1: Prf,
    pub rouge2: Prf,
    pub rouge4: Prf,
    pub rouge_l: Prf,
    /// ROUGE-W with weight 1.2 (Lin 2004).
    pub rouge_w: Prf,
}

impl LexicalScores {
    /// Every score with its column name, in output order.
    pub fn named_values(&self) -> Vec<(String, f64)> {
        let mut values: Vec<(String, f64)> = (1..=4)
            .map(|n| (format!("bleu{n}"), self.bleu[n - 1]))
            .collect();
        values.push(("bleu4_codexglue".to_owned(), self.bleu4_codexglue));
        let rouges = [
            ("rouge1", self.rouge1),
            ("rouge2", self.rouge2),
            ("rouge4", self.rouge4),
            ("rouge_l", self.rouge_l),
            ("rouge_w", self.rouge_w),
        ];
        for (name, prf) in rouges {
            values.push((format!("{name}_p"), prf.precision));
            values.push((format!("{name}_r"), prf.recall));
            values.push((format!("{name}_f"), prf.f));
        }
        values
    }
}

/// ROUGE-W's weighting exponent.
const ROUGE_W_WEIGHT: f64 = 1.2;

/// Scores a tokenized candidate against a tokenized reference.
pub fn lexical_scores(reference: &[String], candidate: &[String]) -> LexicalScores {
    let matches: Vec<(usize, usize)> = (1..=4)
        .map(|n| ngram_matches(reference, candidate, n))
        .collect();
    LexicalScores {
        bleu: [1, 2, 3, 4].map(|n| bleu(&matches[..n], reference.len(), candidate.len())),
        bleu4_codexglue: codexglue_bleu4(&matches, reference.len(), candidate.len()),
        rouge1: rouge_n(reference, candidate, 1),
        rouge2: rouge_n(reference, candidate, 2),
        rouge4: rouge_n(reference, candidate, 4),
        rouge_l: rouge_lcs(reference, candidate, 1.0),
        rouge_w: rouge_lcs(reference, candidate, ROUGE_W_WEIGHT),
    }
}

fn ngram_counts(tokens: &[String], n: usize) -> HashMap<&[String], usize> {
    let mut counts = HashMap::new();
    for gram in tokens.windows(n) {
        *counts.entry(gram).or_insert(0) += 1;
    }
    counts
}

/// (clipped matches, candidate n-grams) for n-grams of length `n`.
fn ngram_matches(reference: &[String], candidate: &[String], n: usize) -> (usize, usize) {
    let reference = ngram_counts(reference, n);
    let candidate_counts = ngram_counts(candidate, n);
    let matched = candidate_counts
        .iter()
        .map(|(gram, &count)| count.min(reference.get(gram).copied().unwrap_or(0)))
        .sum();
    (matched, candidate.len().saturating_sub(n - 1))
}

/// Cumulative BLEU over the precisions in `matches` (orders 1..=matches.len()).
fn bleu(matches: &[(usize, usize)], reference_len: usize, candidate_len: usize) -> f64 {
    if candidate_len == 0 || matches.iter().any(|&(m, _)| m == 0) {
        return 0.0;
    }
    let log_precision: f64 = matches
        .iter()
        .map(|&(m, total)| (m as f64 / total as f64).ln())
        .sum::<f64>()
        / matches.len() as f64;
    let brevity = if candidate_len < reference_len {
        (1.0 - reference_len as f64 / candidate_len as f64).exp()
    } else {
        1.0
    };
    brevity * log_precision.exp()
}

/// CodeXGLUE bleu.py `score_cooked` for one pair: add-one smoothing on orders
/// 2..4, brevity penalty min(0, 1 - (r + 1)/(c + 1)) in log space.
fn codexglue_bleu4(matches: &[(usize, usize)], reference_len: usize, candidate_len: usize) -> f64 {
    let tiny = f64::MIN_POSITIVE;
    let log_bleu: f64 = matches
        .iter()
        .enumerate()
        .map(|(k, &(m, total))| {
            let smooth = if k > 0 { 1.0 } else { 0.0 };
            (m as f64 + smooth + tiny).ln() - (total as f64 + smooth + tiny).ln()
        })
        .sum::<f64>()
        / 4.0;
    let brevity = (1.0 - (reference_len as f64 + 1.0) / (candidate_len as f64 + 1.0)).min(0.0);
    (log_bleu + brevity).exp()
}

fn rouge_n(reference: &[String], candidate: &[String], n: usize) -> Prf {
    let (matched, candidate_total) = ngram_matches(reference, candidate, n);
    let reference_total = reference.len().saturating_sub(n - 1);
    let ratio = |total: usize| {
        if total == 0 {
            0.0
        } else {
            matched as f64 / total as f64
        }
    };
    Prf::new(ratio(candidate_total), ratio(reference_total))
}

/// ROUGE-L (weight 1) or ROUGE-W (weight > 1) from the weighted longest common
/// subsequence: consecutive matches of length k score k^weight.
fn rouge_lcs(reference: &[String], candidate: &[String], weight: f64) -> Prf {
    if reference.is_empty() || candidate.is_empty() {
        return Prf::default();
    }
    let f = |k: f64| k.powf(weight);
    let f_inverse = |x: f64| x.powf(1.0 / weight);
    let wlcs = weighted_lcs(reference, candidate, &f);
    let recall = f_inverse(wlcs / f(reference.len() as f64));
    let precision = f_inverse(wlcs / f(candidate.len() as f64));
    Prf::new(precision, recall)
}

/// Lin's WLCS dynamic programme; with f(k) = k it is the plain LCS length.
///
/// Two rolling rows, so memory is linear in the candidate's length: two
/// 100,000-word texts need a few megabytes, not the 80 GB of a full table.
fn weighted_lcs(x: &[String], y: &[String], f: &impl Fn(f64) -> f64) -> f64 {
    let cols = y.len() + 1;
    let (mut score_above, mut run_above) = (vec![0.0; cols], vec![0.0; cols]);
    let (mut score, mut run) = (vec![0.0; cols], vec![0.0; cols]);
    for xi in x {
        for j in 1..cols {
            if *xi == y[j - 1] {
                let k = run_above[j - 1];
                score[j] = score_above[j - 1] + f(k + 1.0) - f(k);
                run[j] = k + 1.0;
            } else {
                score[j] = score_above[j].max(score[j - 1]);
                run[j] = 0.0;
            }
        }
        std::mem::swap(&mut score, &mut score_above);
        std::mem::swap(&mut run, &mut run_above);
    }
    score_above[y.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<String> {
        Tokenization::Whitespace.tokenize(text)
    }

    #[test]
    fn codexglue_tokenization_splits_punctuation_and_lowercases() {
        assert_eq!(
            Tokenization::Codexglue.tokenize("Returns the (first) Item, e.g. x.y; 3.5 or 2-3"),
            [
                "returns", "the", "(", "first", ")", "item", ",", "e", ".", "g", ".", "x", ".",
                "y", ";", "3.5", "or", "2", "-", "3"
            ]
        );
    }

    // Haque et al. final_megafile.csv, row 0: b1 = 0.222222222.
    #[test]
    fn bleu1_is_clipped_unigram_precision_times_brevity() {
        let reference = tokens("tests if plugin is in registry");
        let candidate = tokens("checks if the plugin contains the given plugin name");
        let scores = lexical_scores(&reference, &candidate);
        assert!((scores.bleu[0] - 2.0 / 9.0).abs() < 1e-12);
        let short = lexical_scores(&candidate, &reference);
        assert!((short.bleu[0] - 2.0 / 6.0 * (1.0 - 9.0 / 6.0_f64).exp()).abs() < 1e-12);
    }

    #[test]
    fn identical_texts_score_one() {
        let t = tokens("returns the number of rows in the table");
        let s = lexical_scores(&t, &t);
        for value in s.bleu.iter().chain([&s.bleu4_codexglue]) {
            assert!((value - 1.0).abs() < 1e-12);
        }
        for prf in [s.rouge1, s.rouge2, s.rouge4, s.rouge_l, s.rouge_w] {
            assert!((prf.f - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn rouge_l_and_w_follow_lin_2004() {
        // LCS of "a b c d e" and "a b x d e y" is 4 ("a b d e") in two runs of 2.
        let reference = tokens("a b c d e");
        let candidate = tokens("a b x d e y");
        let s = lexical_scores(&reference, &candidate);
        assert!((s.rouge_l.recall - 4.0 / 5.0).abs() < 1e-12);
        assert!((s.rouge_l.precision - 4.0 / 6.0).abs() < 1e-12);
        let wlcs = 2.0 * 2.0_f64.powf(1.2);
        assert!((s.rouge_w.recall - (wlcs / 5.0_f64.powf(1.2)).powf(1.0 / 1.2)).abs() < 1e-12);
    }

    #[test]
    fn codexglue_bleu_smooths_higher_orders() {
        // One shared unigram, no shared bigram: smoothing keeps the score above 0.
        let s = lexical_scores(&tokens("get the value"), &tokens("set the key"));
        let expected = ((1.0_f64 / 3.0).ln() + (1.0_f64 / 3.0).ln() + 0.5_f64.ln() + 0.0) / 4.0;
        assert!((s.bleu4_codexglue - expected.exp()).abs() < 1e-12);
        assert_eq!(s.bleu[1], 0.0);
    }

    #[test]
    fn empty_candidate_scores_zero_without_panicking() {
        let s = lexical_scores(&tokens("a b"), &[]);
        assert_eq!(s.bleu, [0.0; 4]);
        assert_eq!(s.rouge_l, Prf::default());
    }
}
