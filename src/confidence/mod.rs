//! Confidence measures: numbers in [0, 1] that say how sure a model was of
//! what it wrote.
//!
//! The intrinsic measures here read the log-probabilities of the generated
//! tokens. The summarization seed uses [`average_token_probability`] (the
//! arithmetic mean of the token probabilities); the others are the usual
//! alternatives, so users can compare them on the same generations.
//! [`reflective`] holds the measures that ask the model again, and [`length`]
//! seed 000's baseline that looks only at how long the answer is. Whether a
//! measure is *calibrated* is `calibrate`'s question, not this module's.

pub mod agreement;
pub mod length;
pub mod reflective;

use crate::generate::Token;

/// A digest of the code that turns a reply into a row's measures and
/// parsed answers: a generation stage whose rows were made by other code is
/// re-made (from the response cache), so a resumed run never keeps rows
/// parsed by an older rule.
pub fn measures_fingerprint() -> String {
    let sources = concat!(
        include_str!("mod.rs"),
        include_str!("reflective.rs"),
        include_str!("length.rs"),
    );
    crate::digest::sha256_hex(sources.as_bytes())
}

/// The names of the intrinsic measures, in output order.
pub const TOKEN_MEASURES: [&str; 5] = [
    "average_token_probability",
    "geometric_mean_probability",
    "total_probability",
    "minimum_token_probability",
    "mean_topk_entropy",
];

/// Arithmetic mean of exp(logprob): the summarization seed's measure.
pub fn average_token_probability(tokens: &[Token]) -> Option<f64> {
    mean(tokens.iter().map(|t| t.logprob.exp()))
}

/// exp(mean logprob): the per-token probability of the whole sequence.
pub fn geometric_mean_probability(tokens: &[Token]) -> Option<f64> {
    mean(tokens.iter().map(|t| t.logprob)).map(f64::exp)
}

/// exp(sum logprob): the probability of the whole sequence (seed 000's p_tot).
pub fn total_probability(tokens: &[Token]) -> Option<f64> {
    (!tokens.is_empty()).then(|| tokens.iter().map(|t| t.logprob).sum::<f64>().exp())
}

pub fn minimum_token_probability(tokens: &[Token]) -> Option<f64> {
    tokens.iter().map(|t| t.logprob.exp()).reduce(f64::min)
}

/// Mean over positions of the entropy (nats) of the top-k alternatives,
/// renormalised to sum to one. Unlike the others, higher means less sure.
/// Positions without alternatives are left out.
pub fn mean_topk_entropy(tokens: &[Token]) -> Option<f64> {
    mean(tokens.iter().filter(|t| !t.top.is_empty()).map(|t| {
        let probs: Vec<f64> = t.top.iter().map(|a| a.logprob.exp()).collect();
        let total: f64 = probs.iter().sum();
        probs
            .iter()
            .map(|p| p / total)
            .filter(|p| *p > 0.0)
            .map(|p| -p * p.ln())
            .sum::<f64>()
    }))
}

/// The tokens whose text overlaps `bytes` of the reply they spell, as an
/// index range. An empty byte range gives an empty token range.
pub fn token_range(tokens: &[Token], bytes: std::ops::Range<usize>) -> std::ops::Range<usize> {
    let mut start = None;
    let mut end = 0;
    let mut offset = 0;
    for (i, token) in tokens.iter().enumerate() {
        let (from, to) = (offset, offset + token.token.len());
        offset = to;
        if bytes.is_empty() || to <= bytes.start || from >= bytes.end {
            continue;
        }
        start.get_or_insert(i);
        end = i + 1;
    }
    match start {
        Some(start) => start..end,
        None => 0..0,
    }
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// Every intrinsic measure by name, over all tokens and, with `first_k`,
/// over the first k tokens too (named with a `_first{k}` suffix).
pub fn token_measures(tokens: &[Token], first_k: Option<usize>) -> Vec<(String, Option<f64>)> {
    let mut out = named(tokens, "");
    if let Some(k) = first_k {
        out.extend(named(&tokens[..k.min(tokens.len())], &format!("_first{k}")));
    }
    out
}

fn named(tokens: &[Token], suffix: &str) -> Vec<(String, Option<f64>)> {
    let values = [
        average_token_probability(tokens),
        geometric_mean_probability(tokens),
        total_probability(tokens),
        minimum_token_probability(tokens),
        mean_topk_entropy(tokens),
    ];
    TOKEN_MEASURES
        .iter()
        .zip(values)
        .map(|(name, value)| (format!("{name}{suffix}"), value))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::Alternative;

    #[test]
    fn token_range_covers_the_tokens_that_spell_the_span() {
        let texts = ["Sure", ":\n```", "py\n", "x = ", "1", "\n```"];
        let tokens: Vec<Token> = texts
            .iter()
            .map(|t| Token {
                token: (*t).into(),
                logprob: -0.1,
                top: Vec::new(),
            })
            .collect();
        let reply: String = texts.concat();
        let at = reply.find("x = 1").unwrap();
        assert_eq!(token_range(&tokens, at..at + 5), 3..5);
        // A span that starts inside a token takes the whole token.
        assert_eq!(token_range(&tokens, at + 1..at + 5), 3..5);
        assert_eq!(token_range(&tokens, at..at), 0..0);
    }

    fn token(p: f64, top: &[f64]) -> Token {
        Token {
            token: "t".into(),
            logprob: p.ln(),
            top: top
                .iter()
                .map(|q| Alternative {
                    token: "a".into(),
                    logprob: q.ln(),
                })
                .collect(),
        }
    }

    #[test]
    fn measures_by_hand() {
        let tokens = [token(0.5, &[0.5, 0.5]), token(0.8, &[0.8]), token(0.2, &[])];
        assert!((average_token_probability(&tokens).unwrap() - 0.5).abs() < 1e-12);
        assert!((total_probability(&tokens).unwrap() - 0.08).abs() < 1e-12);
        assert!((geometric_mean_probability(&tokens).unwrap() - 0.08f64.cbrt()).abs() < 1e-12);
        assert!((minimum_token_probability(&tokens).unwrap() - 0.2).abs() < 1e-12);
        // ln 2 for the even pair, 0 for the single alternative.
        assert!((mean_topk_entropy(&tokens).unwrap() - 2f64.ln() / 2.0).abs() < 1e-12);
    }

    #[test]
    fn first_k_and_empty() {
        let tokens = [token(0.9, &[]), token(0.1, &[])];
        let named = token_measures(&tokens, Some(1));
        let first = named
            .iter()
            .find(|(n, _)| n == "average_token_probability_first1")
            .unwrap();
        assert!((first.1.unwrap() - 0.9).abs() < 1e-12);
        assert!(token_measures(&[], None).iter().all(|(_, v)| v.is_none()));
    }
}
