//! Calibration and discrimination metrics over (confidence, correct) pairs.
//!
//! Every metric is computed from item weights, so one prepared [`Sample`]
//! serves both the plain evaluation (all weights 1) and each bootstrap
//! resample (weights = how often an item was drawn) without re-sorting.
//! No rescaling and no resampling happens here.

use std::sync::OnceLock;

use rayon::prelude::*;
use serde::Serialize;

use super::bins::{self, ece_of};
pub use super::bins::{Bin, BinSpec, Binning, equal_width_bin};
use super::ranks::{average_ranks, order_by, order_by_confidence, weighted_pearson};
use super::runs::{Run, Totals};
use super::{decompose, selective, smooth, tests_of_fit};

/// The metrics of one set of confidences against correctness.
///
/// `None` marks a metric that is undefined for this data, e.g. AUROC with a
/// single class, or Spearman's rho without a target column.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Metrics {
    pub n: usize,
    /// Fraction of correct items (the success rate).
    pub base_rate: f64,
    pub ece: f64,
    pub mce: f64,
    pub brier: f64,
    /// Brier score of always predicting the base rate: p(1 - p).
    pub brier_ref: f64,
    /// (brier_ref - brier) / brier_ref; scikit-learn's `d2_brier_score`.
    pub skill_score: Option<f64>,
    /// "Open the Oyster"'s ECE (its Eq. 5): the mean over items of
    /// |correct - confidence|, a per-item absolute error with no bins.
    pub oyster_ece: f64,
    /// "Open the Oyster"'s Performance Score: 1 - brier / (c(1 - c)), c the mean confidence.
    pub performance_score: Option<f64>,
    pub auroc: Option<f64>,
    pub log_loss: f64,
    /// Spearman's rho between confidence and the target column.
    pub spearman: Option<f64>,
    /// Area under the risk–coverage curve (see `selective`).
    pub aurc: f64,
    /// AURC minus the AURC of a ranking with every correct item first.
    pub e_aurc: f64,
    /// Area under the generalized risk–coverage curve (Traub et al. 2024).
    pub augrc: f64,
    /// The largest fraction a confidence cutoff accepts at precision ≥ 0.8.
    pub coverage_at_p80: f64,
    /// The same at precision ≥ 0.9.
    pub coverage_at_p90: f64,
    /// The same at precision ≥ 0.95.
    pub coverage_at_p95: f64,
    /// ECE over equal-mass bins (as many as the equal-width ones), reported
    /// beside it: the two disagree most on skewed confidences.
    pub ece_equal_mass: f64,
    /// Smooth ECE (Błasiok and Nakkiran 2024; relplot's smECE, see `smooth`).
    pub smooth_ece: f64,
    /// The kernel bandwidth σ* smooth ECE was read at.
    pub smooth_ece_sigma: f64,
    /// Debiased L2 calibration error (Kumar et al. 2019, 15 equal-mass bins).
    pub debiased_l2_ce: f64,
    /// CORP miscalibration, discrimination and uncertainty: Brier = MCB − DSC + UNC.
    pub corp_mcb: f64,
    pub corp_dsc: f64,
    pub corp_unc: f64,
    /// Murphy's binned reliability and resolution over the ECE's bins.
    pub murphy_rel: f64,
    pub murphy_res: f64,
    /// Spiegelhalter's Z and its one-sided p-value for "calibrated".
    pub spiegelhalter_z: Option<f64>,
    pub spiegelhalter_p: Option<f64>,
}

/// Names of the metrics that get confidence intervals, in table order.
pub const METRIC_NAMES: [&str; METRIC_COUNT] = [
    "base_rate",
    "ece",
    "ece_equal_mass",
    "smooth_ece",
    "debiased_l2_ce",
    "mce",
    "brier",
    "brier_ref",
    "skill_score",
    "corp_mcb",
    "corp_dsc",
    "corp_unc",
    "murphy_rel",
    "murphy_res",
    "oyster_ece",
    "performance_score",
    "auroc",
    "log_loss",
    "spearman",
    "spiegelhalter_z",
    "spiegelhalter_p",
    "aurc",
    "e_aurc",
    "augrc",
    "coverage_at_p80",
    "coverage_at_p90",
    "coverage_at_p95",
];

/// How many metrics [`Metrics::values`] gives.
pub const METRIC_COUNT: usize = 27;

impl Metrics {
    /// The metric values in the order of [`METRIC_NAMES`].
    pub fn values(&self) -> [Option<f64>; METRIC_COUNT] {
        [
            Some(self.base_rate),
            Some(self.ece),
            Some(self.ece_equal_mass),
            Some(self.smooth_ece),
            Some(self.debiased_l2_ce),
            Some(self.mce),
            Some(self.brier),
            Some(self.brier_ref),
            self.skill_score,
            Some(self.corp_mcb),
            Some(self.corp_dsc),
            Some(self.corp_unc),
            Some(self.murphy_rel),
            Some(self.murphy_res),
            Some(self.oyster_ece),
            self.performance_score,
            self.auroc,
            Some(self.log_loss),
            self.spearman,
            self.spiegelhalter_z,
            self.spiegelhalter_p,
            Some(self.aurc),
            Some(self.e_aurc),
            Some(self.augrc),
            Some(self.coverage_at_p80),
            Some(self.coverage_at_p90),
            Some(self.coverage_at_p95),
        ]
    }
}

/// Confidences, labels and an optional target, sorted once for fast weighted evaluation.
///
/// The items are held in ascending order of confidence (ties: wrong before
/// right), so that every pass a metric makes over them in that order reads
/// memory in sequence, and a bootstrap resample's weights are put in that
/// order once ([`Sample::order`]) rather than looked up per metric.
pub struct Sample {
    confidence: Vec<f64>,
    correct: Vec<bool>,
    target: Option<Vec<f64>>,
    bins: BinSpec,
    /// The caller's index of each sorted item.
    order: Vec<usize>,
    by_target: Option<Vec<usize>>,
    /// Where each run of tied confidences ends (exclusive), ascending.
    run_ends: Vec<usize>,
    /// Each run's log-loss terms: −ln(clipped f) and −ln(1 − clipped f).
    run_log_loss: Vec<(f64, f64)>,
    /// Whether to compute smooth ECE (about a millisecond per evaluation).
    smooth: bool,
    /// What smooth ECE reuses across resamples, prepared on first use.
    smooth_items: OnceLock<smooth::SmoothItems>,
}

/// Log loss clips probabilities to [eps, 1 - eps], as scikit-learn does for float64.
const LOG_LOSS_EPS: f64 = f64::EPSILON;

impl Sample {
    /// Prepares a sample; the slices must have equal lengths and finite values.
    pub fn new(
        confidence: &[f64],
        correct: &[bool],
        target: Option<&[f64]>,
        bins: BinSpec,
    ) -> Sample {
        debug_assert_eq!(confidence.len(), correct.len());
        let order = order_by_confidence(confidence, correct);
        let confidence: Vec<f64> = order.iter().map(|&i| confidence[i]).collect();
        let correct: Vec<bool> = order.iter().map(|&i| correct[i]).collect();
        let target: Option<Vec<f64>> = target.map(|t| order.iter().map(|&i| t[i]).collect());
        let mut run_ends: Vec<usize> = (1..confidence.len())
            .filter(|&k| confidence[k] != confidence[k - 1])
            .collect();
        run_ends.push(confidence.len());
        // Two logarithms a run: spread over the cores.
        let run_log_loss = (0..run_ends.len())
            .into_par_iter()
            .with_min_len(1 << 14)
            .map(|k| {
                let start = if k == 0 { 0 } else { run_ends[k - 1] };
                let clipped = confidence[start].clamp(LOG_LOSS_EPS, 1.0 - LOG_LOSS_EPS);
                (-clipped.ln(), -(1.0 - clipped).ln())
            })
            .collect();
        Sample {
            run_log_loss,
            run_ends,
            by_target: target.as_deref().map(order_by),
            confidence,
            correct,
            target,
            bins,
            order,
            smooth: true,
            smooth_items: OnceLock::new(),
        }
    }

    /// The confidences, ascending, and their labels (the sample's order).
    pub fn sorted(&self) -> (&[f64], &[bool]) {
        (&self.confidence, &self.correct)
    }

    /// The caller's index of each item in the sample's (confidence) order:
    /// weights for [`Sample::metrics_in_order`] are given in this order.
    pub fn order(&self) -> &[usize] {
        &self.order
    }

    /// With `false`, smooth ECE is left out (NaN): for callers that read
    /// only other metrics.
    pub fn with_smooth_ece(mut self, on: bool) -> Self {
        self.smooth = on;
        self
    }

    pub fn len(&self) -> usize {
        self.confidence.len()
    }

    pub fn is_empty(&self) -> bool {
        self.confidence.is_empty()
    }

    /// All metrics, with item `i` (in the caller's order) counted
    /// `weights[i]` times (once when `None`).
    pub fn metrics(&self, weights: Option<&[u32]>) -> Metrics {
        let sorted: Option<Vec<u32>> = weights.map(|w| self.order.iter().map(|&i| w[i]).collect());
        self.metrics_in_order(sorted.as_deref())
    }

    /// All metrics, with weights given in the sample's order ([`Sample::order`]).
    pub fn metrics_in_order(&self, weights: Option<&[u32]>) -> Metrics {
        self.metrics_and_bins(weights).0
    }

    /// All metrics (weights in the sample's order), with smooth ECE only
    /// where `smooth` (and the sample) asks for it: NaN otherwise.
    pub fn metrics_with(&self, weights: Option<&[u32]>, smooth: bool) -> Metrics {
        self.metrics_and_bins_with(weights, smooth).0
    }

    /// The metrics and the reliability bins they were computed from; weights
    /// in the sample's order.
    pub fn metrics_and_bins(&self, weights: Option<&[u32]>) -> (Metrics, Vec<Bin>) {
        self.metrics_and_bins_with(weights, true)
    }

    fn metrics_and_bins_with(&self, weights: Option<&[u32]>, smooth: bool) -> (Metrics, Vec<Bin>) {
        // One copy of the work per kind of weight, so that the per-item
        // passes do not ask on every item whether there are weights.
        match weights {
            Some(weights) => self.weighted(|i| f64::from(weights[i]), false, smooth),
            None => self.weighted(|_| 1.0, true, smooth),
        }
    }

    /// The metrics and bins with item i counted `w(i)` times; `unweighted`
    /// when every weight is 1 (the bins then get their intervals).
    fn weighted(
        &self,
        w: impl Fn(usize) -> f64 + Sync,
        unweighted: bool,
        smooth: bool,
    ) -> (Metrics, Vec<Bin>) {
        // Smooth ECE (its bisection) beside the rest: on all items the
        // second core would otherwise wait; in a bootstrap rayon runs the
        // two halves on whichever thread is free.
        let (smooth, (mut metrics, bins)) = rayon::join(
            || self.smooth_ece(&w, smooth),
            || self.all_but_smooth(&w, unweighted),
        );
        metrics.smooth_ece = smooth.value;
        metrics.smooth_ece_sigma = smooth.sigma;
        (metrics, bins)
    }

    /// Every metric but smooth ECE (left NaN), from the tie runs, and the bins.
    fn all_but_smooth(&self, w: &impl Fn(usize) -> f64, unweighted: bool) -> (Metrics, Vec<Bin>) {
        let (runs, totals) = self.runs_and_totals(w);
        let total = totals.weight;
        let base_rate = totals.right / total;
        let mean_conf = totals.confidence / total;
        let brier = totals.brier / total;
        let brier_ref = base_rate * (1.0 - base_rate);
        let bins = self.bins_of(self.bins.binning, &runs, unweighted);
        let gaps = bins.iter().map(|b| (b.accuracy - b.mean_confidence).abs());
        let ece = ece_of(&bins, total);
        let mce = gaps.fold(0.0, f64::max);
        let spread = mean_conf * (1.0 - mean_conf);
        let selective = selective::selective_of_runs(&runs);
        let corp = decompose::corp_of_runs(&runs);
        let murphy = decompose::murphy(&bins);
        let spiegelhalter = tests_of_fit::spiegelhalter_of_sums(
            totals.spiegelhalter_numerator,
            totals.spiegelhalter_variance,
        );
        let equal_mass = match self.bins.binning {
            Binning::EqualMass => ece,
            Binning::EqualWidth => ece_of(&self.bins_of(Binning::EqualMass, &runs, false), total),
        };
        let [coverage_at_p80, coverage_at_p90, coverage_at_p95] = selective.coverage_at_precision;
        let metrics = Metrics {
            n: total.round() as usize,
            base_rate,
            ece,
            mce,
            brier,
            brier_ref,
            skill_score: (brier_ref > 0.0).then(|| (brier_ref - brier) / brier_ref),
            oyster_ece: totals.absolute / total,
            performance_score: (spread > 0.0).then(|| 1.0 - brier / spread),
            auroc: auroc(&runs),
            log_loss: totals.log_loss / total,
            spearman: self.spearman(w),
            aurc: selective.aurc,
            e_aurc: selective.e_aurc,
            augrc: selective.augrc,
            coverage_at_p80,
            coverage_at_p90,
            coverage_at_p95,
            ece_equal_mass: equal_mass,
            smooth_ece: f64::NAN,
            smooth_ece_sigma: f64::NAN,
            debiased_l2_ce: tests_of_fit::debiased_l2_ce_of_runs(&runs),
            corp_mcb: corp.mcb,
            corp_dsc: corp.dsc,
            corp_unc: corp.unc,
            murphy_rel: murphy.rel,
            murphy_res: murphy.res,
            spiegelhalter_z: spiegelhalter.map(|(z, _)| z),
            spiegelhalter_p: spiegelhalter.map(|(_, p)| p),
        };
        (metrics, bins)
    }

    /// The risk–coverage curve at every tie-run end (unweighted), from the
    /// sample's one sort.
    pub fn risk_coverage_curve(&self) -> Vec<selective::CurvePoint> {
        selective::curve_of_runs(&self.runs_and_totals(&|_| 1.0).0)
    }

    /// The non-empty bins of the reliability diagram under `weights` (in
    /// the sample's order).
    pub fn reliability(&self, weights: Option<&[u32]>) -> Vec<Bin> {
        let w = |i: usize| weights.map_or(1.0, |w| f64::from(w[i]));
        let (runs, _) = self.runs_and_totals(&w);
        self.bins_of(self.bins.binning, &runs, weights.is_none())
    }

    /// The non-empty bins cut by `binning` (with the sample's bin count),
    /// from the tie runs (highest first).
    fn bins_of(&self, binning: Binning, runs: &[Run], unweighted: bool) -> Vec<Bin> {
        bins::bins_of_runs(
            runs,
            BinSpec {
                count: self.bins.count,
                binning,
            },
            unweighted,
        )
    }

    /// Smooth ECE and its bandwidth (NaN when switched off).
    fn smooth_ece(&self, w: &(impl Fn(usize) -> f64 + Sync), wanted: bool) -> smooth::SmoothEce {
        if !(self.smooth && wanted) {
            return smooth::SmoothEce {
                value: f64::NAN,
                sigma: f64::NAN,
            };
        }
        self.smooth_items
            .get_or_init(|| smooth::SmoothItems::new(&self.confidence, &self.correct))
            .smooth_ece(w)
    }

    /// The tie runs of positive weight (highest confidence first) and the
    /// weighted sums, in one pass over the items.
    fn runs_and_totals(&self, w: &impl Fn(usize) -> f64) -> (Vec<Run>, Totals) {
        let mut start = 0;
        let mut runs: Vec<Run> = Vec::with_capacity(self.run_ends.len());
        let mut totals = Totals::default();
        for (&end, &(log_right, log_wrong)) in self.run_ends.iter().zip(&self.run_log_loss) {
            let (mut weight, mut errors) = (0.0, 0.0);
            for i in start..end {
                let wi = w(i);
                weight += wi;
                errors += if self.correct[i] { 0.0 } else { wi };
            }
            if weight > 0.0 {
                let run = Run {
                    confidence: self.confidence[start],
                    weight,
                    errors,
                };
                totals.add(&run, log_right, log_wrong);
                runs.push(run);
            }
            start = end;
        }
        runs.reverse();
        (runs, totals)
    }

    /// Spearman's rho: Pearson correlation of average ranks, as scipy's `spearmanr`.
    fn spearman(&self, w: &impl Fn(usize) -> f64) -> Option<f64> {
        let target = self.target.as_deref()?;
        let by_target = self.by_target.as_ref()?;
        // The items are held in confidence order: their order is 0..n.
        let in_order: Vec<usize> = (0..self.len()).collect();
        let conf_rank = average_ranks(&in_order, &self.confidence, w);
        let target_rank = average_ranks(by_target, target, w);
        weighted_pearson(&conf_rank, &target_rank, w)
    }
}

/// Area under the ROC curve from the tie runs (highest confidence first);
/// tied confidences count half (Mann-Whitney).
fn auroc(runs: &[Run]) -> Option<f64> {
    let (mut neg_below, mut area, mut pos_total) = (0.0, 0.0, 0.0);
    for run in runs.iter().rev() {
        let (pos, neg) = (run.weight - run.errors, run.errors);
        area += pos * (neg_below + 0.5 * neg);
        neg_below += neg;
        pos_total += pos;
    }
    (pos_total > 0.0 && neg_below > 0.0).then(|| area / (pos_total * neg_below))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// tests/fixtures/calibration_small.csv as columns.
    pub(crate) struct Fixture {
        pub repo: Vec<String>,
        pub confidence: Vec<f64>,
        pub correct: Vec<bool>,
        pub similarity: Vec<f64>,
    }

    pub(crate) fn fixture() -> Fixture {
        let text = include_str!("../../tests/fixtures/calibration_small.csv");
        let mut f = Fixture {
            repo: vec![],
            confidence: vec![],
            correct: vec![],
            similarity: vec![],
        };
        for line in text.lines().skip(1) {
            let cells: Vec<&str> = line.split(',').collect();
            f.repo.push(cells[1].to_owned());
            f.confidence.push(cells[2].parse().unwrap());
            f.correct.push(cells[3] == "1");
            f.similarity.push(cells[4].parse().unwrap());
        }
        f
    }

    const WIDTH10: BinSpec = BinSpec {
        count: 10,
        binning: Binning::EqualWidth,
    };

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }

    // Expected values: python3 tests/sklearn_expected.py (scikit-learn 1.9.1, scipy 1.17.1).
    #[test]
    fn metrics_match_scikit_learn() {
        let f = fixture();
        let sample = Sample::new(&f.confidence, &f.correct, Some(&f.similarity), WIDTH10);
        let m = sample.metrics(None);
        assert_eq!(m.n, 80);
        close(m.base_rate, 0.525);
        close(m.brier, 0.24777015073427502); // brier_score_loss
        close(m.skill_score.unwrap(), 0.006435485777343097); // d2_brier_score
        close(m.auroc.unwrap(), 0.6541353383458647); // roc_auc_score
        close(m.log_loss, 0.7158183184018194); // log_loss
        close(m.spearman.unwrap(), 0.36333798511871895); // scipy spearmanr
        close(m.ece, 0.14976805000000004); // calibration_curve(strategy="uniform")
        close(m.mce, 0.4051365);
    }

    #[test]
    fn equal_mass_bins_match_quantile_calibration_curve() {
        let f = fixture();
        let spec = BinSpec {
            count: 10,
            binning: Binning::EqualMass,
        };
        let m = Sample::new(&f.confidence, &f.correct, None, spec).metrics(None);
        close(m.ece, 0.15727817500000002); // calibration_curve(strategy="quantile")
        close(m.mce, 0.29020775);
    }

    #[test]
    fn weights_equal_repeated_items() {
        let f = fixture();
        let weights: Vec<u32> = (0..f.confidence.len() as u32).map(|i| i % 3).collect();
        let mut conf = vec![];
        let mut correct = vec![];
        let mut sim = vec![];
        for (i, &w) in weights.iter().enumerate() {
            for _ in 0..w {
                conf.push(f.confidence[i]);
                correct.push(f.correct[i]);
                sim.push(f.similarity[i]);
            }
        }
        for binning in [Binning::EqualWidth, Binning::EqualMass] {
            let spec = BinSpec { count: 7, binning };
            let weighted = Sample::new(&f.confidence, &f.correct, Some(&f.similarity), spec)
                .metrics(Some(&weights));
            let repeated = Sample::new(&conf, &correct, Some(&sim), spec).metrics(None);
            for (a, b) in weighted.values().iter().zip(repeated.values()) {
                close(a.unwrap(), b.unwrap());
            }
        }
    }

    // Seed 000 ("Quality and Trust in LLM-generated Code"), Table 5, "Unskilled" rows:
    // predicting the base rate everywhere scores Brier p(1-p) and skill 0.
    #[test]
    fn unskilled_predictor_has_zero_skill() {
        let correct: Vec<bool> = (0..200).map(|i| i % 5 < 2).collect();
        let confidence = vec![0.4; 200];
        let m = Sample::new(&confidence, &correct, None, WIDTH10).metrics(None);
        close(m.brier, 0.4 * 0.6);
        close(m.brier_ref, 0.24);
        close(m.skill_score.unwrap(), 0.0);
        close(m.ece, 0.0);
        close(m.auroc.unwrap(), 0.5);
    }

    #[test]
    fn bin_edges_are_left_open() {
        assert_eq!(equal_width_bin(0.0, 10), 0);
        assert_eq!(equal_width_bin(0.1, 10), 0);
        assert_eq!(equal_width_bin(0.3, 10), 2);
        assert_eq!(equal_width_bin(0.30000000000000004, 10), 3);
        assert_eq!(equal_width_bin(1.0, 10), 9);
        assert_eq!(equal_width_bin(0.7, 10), 6);
    }

    #[test]
    fn single_class_leaves_auroc_and_skill_undefined() {
        let m = Sample::new(&[0.2, 0.9], &[true, true], None, WIDTH10).metrics(None);
        assert_eq!(m.auroc, None);
        assert_eq!(m.skill_score, None);
        close(m.brier, (0.64 + 0.01) / 2.0);
    }

    #[test]
    fn oyster_metrics_follow_their_definitions() {
        let m = Sample::new(
            &[0.9, 0.8, 0.7, 0.6],
            &[true, false, true, false],
            None,
            WIDTH10,
        )
        .metrics(None);
        // "Open the Oyster", Eq. 5: (1/n) sum |correct - confidence|, by hand
        // (0.1 + 0.8 + 0.3 + 0.6) / 4; not |mean confidence - success rate| (0.25).
        close(m.oyster_ece, 0.45);
        let brier = (0.01 + 0.64 + 0.09 + 0.36) / 4.0;
        close(m.performance_score.unwrap(), 1.0 - brier / (0.75 * 0.25));
    }

    #[test]
    fn oyster_ece_is_about_twice_brier_near_the_base_rate() {
        // "Open the Oyster", Table 3: after Platt scaling ECE / Brier lies
        // between about 1.9 and 2.4 in every row. Eq. 5 gives exactly
        // 2 p (1 - p) / (p (1 - p)) = 2 when every confidence is the base rate.
        let correct: Vec<bool> = (0..100).map(|i| i % 10 < 3).collect();
        let m = Sample::new(&[0.3; 100], &correct, None, WIDTH10).metrics(None);
        close(m.oyster_ece / m.brier, 2.0);
        close(m.oyster_ece, 2.0 * 0.3 * 0.7);
    }
}
