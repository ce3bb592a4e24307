//! Properties every calibration metric must have, on generated inputs
//! (proptest): bounded where it should be, CORP's identity exact, no
//! dependence on item order, no panic on any finite input; and smooth ECE
//! of a perfectly calibrated sample shrinking towards 0 as n grows.

use codecal::calibrate::metrics::METRIC_NAMES;
use codecal::calibrate::{BinSpec, Binning, Metrics, Sample};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn metrics(confidence: &[f64], correct: &[bool], binning: Binning) -> Metrics {
    let bins = BinSpec { count: 10, binning };
    Sample::new(confidence, correct, None, bins).metrics(None)
}

/// Items: confidences in [0, 1] (often exactly 0, 1 or tied) with labels.
fn items() -> impl Strategy<Value = Vec<(f64, bool)>> {
    let confidence = prop_oneof![
        0.0..=1.0f64,
        Just(0.0),
        Just(1.0),
        (0u32..=20).prop_map(|k| f64::from(k) / 20.0),
    ];
    prop::collection::vec((confidence, any::<bool>()), 1..300)
}

proptest! {
    // A fixed seed, so that CI and a user's machine try the same inputs.
    #![proptest_config(ProptestConfig {
        cases: 200,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(20261123),
        ..ProptestConfig::default()
    })]

    #[test]
    fn bounded_metrics_stay_in_the_unit_interval(items in items()) {
        let (confidence, correct): (Vec<f64>, Vec<bool>) = items.into_iter().unzip();
        for binning in [Binning::EqualWidth, Binning::EqualMass] {
            let m = metrics(&confidence, &correct, binning);
            for (name, value) in [
                ("ece", m.ece),
                ("ece_equal_mass", m.ece_equal_mass),
                ("smooth_ece", m.smooth_ece),
                ("mce", m.mce),
                ("debiased_l2_ce", m.debiased_l2_ce),
                ("brier", m.brier),
                ("oyster_ece", m.oyster_ece),
                ("aurc", m.aurc),
                ("augrc", m.augrc),
            ] {
                prop_assert!((0.0..=1.0).contains(&value), "{} = {}", name, value);
            }
            prop_assert!(m.corp_mcb >= -1e-12 && m.corp_dsc >= -1e-12);
            if let Some(p) = m.spiegelhalter_p {
                prop_assert!((0.0..=1.0).contains(&p));
            }
        }
    }

    #[test]
    fn corp_decomposes_the_brier_score_exactly(items in items()) {
        let (confidence, correct): (Vec<f64>, Vec<bool>) = items.into_iter().unzip();
        let m = metrics(&confidence, &correct, Binning::EqualWidth);
        prop_assert!((m.corp_mcb - m.corp_dsc + m.corp_unc - m.brier).abs() < 1e-12);
    }

    #[test]
    fn metrics_do_not_depend_on_item_order(items in items(), seed in any::<u64>()) {
        let (confidence, correct): (Vec<f64>, Vec<bool>) = items.iter().copied().unzip();
        let mut shuffled = items.clone();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, rng.random_range(0..=i));
        }
        let (c2, y2): (Vec<f64>, Vec<bool>) = shuffled.into_iter().unzip();
        let (a, b) = (
            metrics(&confidence, &correct, Binning::EqualWidth),
            metrics(&c2, &y2, Binning::EqualWidth),
        );
        for ((x, y), name) in a.values().iter().zip(b.values()).zip(METRIC_NAMES) {
            match (x, y) {
                (Some(x), Some(y)) => prop_assert!(
                    (x - y).abs() <= 1e-9 * x.abs().max(1.0) || (x.is_nan() && y.is_nan()),
                    "{}: {} vs {}", name, x, y
                ),
                (x, y) => prop_assert_eq!(x.is_some(), y.is_some()),
            }
        }
    }
}

#[test]
fn smooth_ece_of_a_calibrated_sample_shrinks_as_n_grows() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut draw = |n: usize| {
        let confidence: Vec<f64> = (0..n).map(|_| rng.random::<f64>()).collect();
        let correct: Vec<bool> = confidence
            .iter()
            .map(|&p| rng.random::<f64>() < p)
            .collect();
        metrics(&confidence, &correct, Binning::EqualWidth).smooth_ece
    };
    let (small, medium, large) = (draw(200), draw(5_000), draw(100_000));
    println!(
        "smooth ECE of calibrated samples: n=200 {small:.4}, 5000 {medium:.4}, 100000 {large:.4}"
    );
    assert!(large < medium && medium < small);
    assert!(large < 0.01, "{large}");
}
