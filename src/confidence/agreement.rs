//! Confidence from agreement: how much several sampled answers to the same
//! prompt agree with each other and with the greedy answer.
//!
//! Code answers are grouped by a behaviour key (what the answer does on
//! shared inputs, computed by `task::behaviour` in the sandbox): answers
//! with equal keys form one cluster. Summaries are grouped by the cosine of
//! their SentenceBERT embeddings at a cut. This module only counts: it runs
//! nothing and embeds nothing, and every measure is a number in [0, 1],
//! higher meaning more agreement, so that `calibrate` treats it like any
//! other confidence.
//!
//! The measures follow the agreement literature:
//! - functional entropy (Bouchard et al. 2026): the entropy of the cluster
//!   sizes over the k samples, reported as `1 - H / ln k`;
//! - the cluster count, as `1 - (C - 1) / (k - 1)`;
//! - agreement: the share of the samples in the greedy answer's cluster
//!   (uqlm's functional-equivalence rate);
//! - weighted agreement: that share with each sample weighted by its mean
//!   token probability (the geometric mean, `exp` of the mean log-probability,
//!   so that a long answer is not down-weighted for its length);
//! - for summaries, the mean pairwise similarity of the samples (a
//!   kernel-style semantic consistency), the greedy summary's mean
//!   similarity to them, and the discrete semantic entropy of Farquhar et
//!   al. (2024: cluster counts, not Kuhn et al.'s sums of sequence
//!   probabilities) over clusters made by Kuhn et al.'s greedy rule (a
//!   sample joins the first cluster whose first member it is similar to),
//!   similar meaning a cosine similarity above a cut rather than their
//!   bidirectional entailment.

/// The agreement measures of code answers, in output order.
pub const CODE_MEASURES: [&str; 4] = [
    "agreement",
    "functional_entropy",
    "cluster_count",
    "weighted_agreement",
];

/// The agreement measures of summaries, in output order.
pub const SUMMARY_MEASURES: [&str; 3] = [
    "semantic_consistency",
    "greedy_similarity",
    "semantic_entropy",
];

/// One sampled answer as agreement sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Equal keys mean equal behaviour.
    pub key: String,
    /// The sample's mean log-probability per token; `None` without tokens.
    pub mean_logprob: Option<f64>,
}

/// Cluster index of each key: equal keys share one, numbered in order of
/// first appearance.
pub fn clusters_by_key<S: AsRef<str>>(keys: &[S]) -> Vec<usize> {
    let mut firsts: Vec<&str> = Vec::new();
    keys.iter()
        .map(|key| {
            let key = key.as_ref();
            match firsts.iter().position(|first| *first == key) {
                Some(at) => at,
                None => {
                    firsts.push(key);
                    firsts.len() - 1
                }
            }
        })
        .collect()
}

/// How many members each cluster has, by cluster index.
pub fn cluster_sizes(assignment: &[usize]) -> Vec<usize> {
    let count = assignment.iter().max().map_or(0, |m| m + 1);
    let mut sizes = vec![0; count];
    for &cluster in assignment {
        sizes[cluster] += 1;
    }
    sizes
}

/// The entropy (natural log) of the distribution the cluster sizes give.
pub fn entropy(sizes: &[usize]) -> f64 {
    let total: usize = sizes.iter().sum();
    if total == 0 {
        return 0.0;
    }
    let total = total as f64;
    sizes
        .iter()
        .filter(|&&n| n > 0)
        .map(|&n| {
            let p = n as f64 / total;
            p * (1.0 / p).ln()
        })
        .sum::<f64>()
        + 0.0
}

/// A value in [0, 1] without the rounding dust of `1 - H / ln k` (a
/// 2e-16 where the answer is 0).
fn unit(value: f64) -> f64 {
    ((value * 1e12).round() / 1e12).clamp(0.0, 1.0)
}

/// `1 - H / ln k`: 1 when every sample is in one cluster, 0 when each is
/// alone. `None` below two samples, where the entropy bounds nothing.
pub fn entropy_confidence(sizes: &[usize]) -> Option<f64> {
    let k: usize = sizes.iter().sum();
    (k >= 2).then(|| unit(1.0 - entropy(sizes) / (k as f64).ln()))
}

/// `1 - (C - 1) / (k - 1)` for C clusters among k samples.
pub fn count_confidence(sizes: &[usize]) -> Option<f64> {
    let k: usize = sizes.iter().sum();
    let clusters = sizes.iter().filter(|&&n| n > 0).count();
    (k >= 2).then(|| 1.0 - (clusters as f64 - 1.0) / (k as f64 - 1.0))
}

/// What the samples of one code answer say, before any mapping to [0, 1].
#[derive(Clone, Debug, PartialEq)]
pub struct CodeAgreement {
    /// Samples drawn.
    pub samples: usize,
    /// Clusters among the samples.
    pub clusters: usize,
    /// Entropy of the cluster sizes (natural log).
    pub entropy: f64,
    /// Samples whose behaviour equals the greedy answer's.
    pub with_greedy: usize,
    /// Their share of the samples' total mean token probability, where
    /// every sample has tokens.
    pub weighted_share: Option<f64>,
}

impl CodeAgreement {
    /// The agreement of `samples` with each other and with the greedy
    /// answer's key; `None` below two samples.
    pub fn of(greedy_key: &str, samples: &[Sample]) -> Option<CodeAgreement> {
        if samples.len() < 2 {
            return None;
        }
        let keys: Vec<&str> = samples.iter().map(|s| s.key.as_str()).collect();
        let sizes = cluster_sizes(&clusters_by_key(&keys));
        let with_greedy = keys.iter().filter(|&&k| k == greedy_key).count();
        let weights: Option<Vec<f64>> = samples
            .iter()
            .map(|s| s.mean_logprob.map(f64::exp))
            .collect();
        let weighted_share = weights.and_then(|weights| {
            let total: f64 = weights.iter().sum();
            let agreeing: f64 = weights
                .iter()
                .zip(&keys)
                .filter(|(_, key)| **key == greedy_key)
                .map(|(w, _)| w)
                .sum();
            (total > 0.0).then(|| unit(agreeing / total))
        });
        Some(CodeAgreement {
            samples: samples.len(),
            clusters: sizes.len(),
            entropy: entropy(&sizes),
            with_greedy,
            weighted_share,
        })
    }

    /// The four measures of [`CODE_MEASURES`] as confidences in [0, 1].
    pub fn measures(&self) -> Vec<(&'static str, Option<f64>)> {
        let k = self.samples as f64;
        vec![
            ("agreement", Some(self.with_greedy as f64 / k)),
            (
                "functional_entropy",
                Some(unit(1.0 - self.entropy / k.ln())),
            ),
            (
                "cluster_count",
                Some(1.0 - (self.clusters as f64 - 1.0) / (k - 1.0)),
            ),
            ("weighted_agreement", self.weighted_share),
        ]
    }
}

/// `(cos + 1) / 2` of two vectors: the scorer's `sbert_cosine01` scale, so
/// that a cut chosen on that metric's human ratings applies as it is.
pub fn cosine01(a: &[f32], b: &[f32]) -> f64 {
    let (mut dot, mut aa, mut bb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        aa += x * x;
        bb += y * y;
    }
    if aa == 0.0 || bb == 0.0 {
        return 0.5;
    }
    (dot / (aa.sqrt() * bb.sqrt()) + 1.0) / 2.0
}

/// What the samples of one summary say.
#[derive(Clone, Debug, PartialEq)]
pub struct SemanticAgreement {
    /// Mean `cosine01` over the pairs of samples.
    pub consistency: f64,
    /// Mean `cosine01` of the greedy summary with each sample.
    pub greedy_similarity: f64,
    /// Cluster sizes at the cut (Kuhn et al.'s first-member rule), for the
    /// discrete semantic entropy (Farquhar et al. 2024).
    pub sizes: Vec<usize>,
}

impl SemanticAgreement {
    /// `None` below two samples.
    pub fn of(greedy: &[f32], samples: &[Vec<f32>], cut: f64) -> Option<SemanticAgreement> {
        if samples.len() < 2 {
            return None;
        }
        let mut pairs = Vec::new();
        for (i, a) in samples.iter().enumerate() {
            for b in &samples[i + 1..] {
                pairs.push(cosine01(a, b));
            }
        }
        let to_greedy: Vec<f64> = samples.iter().map(|s| cosine01(greedy, s)).collect();
        let mut firsts: Vec<usize> = Vec::new();
        let assignment: Vec<usize> = samples
            .iter()
            .enumerate()
            .map(|(i, sample)| {
                match firsts
                    .iter()
                    .position(|&first| cosine01(&samples[first], sample) >= cut)
                {
                    Some(cluster) => cluster,
                    None => {
                        firsts.push(i);
                        firsts.len() - 1
                    }
                }
            })
            .collect();
        Some(SemanticAgreement {
            consistency: mean(&pairs),
            greedy_similarity: mean(&to_greedy),
            sizes: cluster_sizes(&assignment),
        })
    }

    /// The three measures of [`SUMMARY_MEASURES`] as confidences in [0, 1].
    pub fn measures(&self) -> Vec<(&'static str, Option<f64>)> {
        vec![
            ("semantic_consistency", Some(self.consistency)),
            ("greedy_similarity", Some(self.greedy_similarity)),
            ("semantic_entropy", entropy_confidence(&self.sizes)),
        ]
    }
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(key: &str, mean_logprob: f64) -> Sample {
        Sample {
            key: key.into(),
            mean_logprob: Some(mean_logprob),
        }
    }

    #[test]
    fn clusters_are_numbered_by_first_appearance() {
        assert_eq!(clusters_by_key(&["b", "a", "b", "c"]), vec![0, 1, 0, 2]);
        assert_eq!(cluster_sizes(&[0, 1, 0, 2]), vec![2, 1, 1]);
    }

    #[test]
    fn entropy_and_count_span_zero_to_one() {
        // Five samples in one cluster: certain.
        assert_eq!(entropy(&[5]), 0.0);
        assert_eq!(entropy_confidence(&[5]), Some(1.0));
        assert_eq!(count_confidence(&[5]), Some(1.0));
        // Five apart: H = ln 5, the most there can be.
        assert!((entropy(&[1, 1, 1, 1, 1]) - 5f64.ln()).abs() < 1e-12);
        assert!(entropy_confidence(&[1, 1, 1, 1, 1]).unwrap().abs() < 1e-12);
        assert_eq!(count_confidence(&[1, 1, 1, 1, 1]), Some(0.0));
        // 3 + 2: H = -(0.6 ln 0.6 + 0.4 ln 0.4) = 0.673012 nats.
        assert!((entropy(&[3, 2]) - 0.673_011_667_009_256).abs() < 1e-12);
        assert_eq!(count_confidence(&[3, 2]), Some(0.75));
        assert_eq!(entropy_confidence(&[1]), None);
    }

    #[test]
    fn agreement_counts_the_greedy_cluster_and_weighs_by_token_probability() {
        let samples = [
            sample("x", 0.0),
            sample("x", (0.5f64).ln()),
            sample("y", (0.5f64).ln()),
            sample("z", 0.0),
        ];
        let a = CodeAgreement::of("x", &samples).unwrap();
        assert_eq!((a.samples, a.clusters, a.with_greedy), (4, 3, 2));
        // Weights 1, 0.5, 0.5, 1: the greedy cluster holds 1.5 of 3.
        assert!((a.weighted_share.unwrap() - 0.5).abs() < 1e-12);
        let measures: Vec<f64> = a.measures().iter().map(|(_, v)| v.unwrap()).collect();
        assert_eq!(measures[0], 0.5);
        assert!((measures[2] - (1.0 - 2.0 / 3.0)).abs() < 1e-12);
        // A greedy answer no sample agrees with.
        let alone = CodeAgreement::of("w", &samples).unwrap();
        assert_eq!(alone.measures()[0].1, Some(0.0));
        assert_eq!(alone.measures()[3].1, Some(0.0));
        // Without tokens there is no weighting, and one sample is not enough.
        let untokened = [
            Sample {
                key: "x".into(),
                mean_logprob: None,
            },
            sample("x", 0.0),
        ];
        assert_eq!(
            CodeAgreement::of("x", &untokened).unwrap().weighted_share,
            None
        );
        assert_eq!(CodeAgreement::of("x", &samples[..1]), None);
    }

    #[test]
    fn summaries_cluster_at_the_cut_by_their_first_member() {
        let north = vec![1.0, 0.0];
        let north_east = vec![1.0, 1.0];
        let south = vec![-1.0, 0.0];
        // cosine01(north, north_east) = (0.7071 + 1) / 2 = 0.8536.
        let samples = vec![north.clone(), north_east.clone(), south.clone()];
        let loose = SemanticAgreement::of(&north, &samples, 0.85).unwrap();
        assert_eq!(loose.sizes, vec![2, 1]);
        let strict = SemanticAgreement::of(&north, &samples, 0.9).unwrap();
        assert_eq!(strict.sizes, vec![1, 1, 1]);
        // Pairs: 0.8536, 0.0, 0.1464 -> mean 1/3.
        assert!((loose.consistency - 1.0 / 3.0).abs() < 1e-9);
        // Greedy (north) to each: 1.0, 0.8536, 0.0.
        assert!((loose.greedy_similarity - (1.0 + 0.853_553_390_6) / 3.0).abs() < 1e-9);
        assert_eq!(strict.measures()[2].1.map(|v| (v * 1e9).round()), Some(0.0));
    }
}
