//! The modern calibration metrics against their reference packages, on the
//! fixtures `tests/metrics_expected.py` computes them for: smooth ECE
//! (relplot 1.0.3), the CORP decomposition (model-diagnostics 1.5.0),
//! Murphy's binned terms (its numpy definition), the debiased L2
//! calibration error (uncertainty-calibration 0.1.4) and Spiegelhalter's
//! test (MAPIE 1.6.0), each to 1e-9.

use std::path::Path;

use codecal::calibrate::{BinSpec, Binning, Metrics, Sample};

fn fixture_json(file: &str, key: Option<&str>) -> (Vec<f64>, Vec<bool>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(file);
    let all: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let f = key.map_or(&all, |k| &all["fixtures"][k]);
    let numbers = |k: &str| -> Vec<f64> {
        f[k].as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    let correct = numbers("correct").iter().map(|&y| y == 1.0).collect();
    (numbers("confidence"), correct)
}

fn calibration_small() -> (Vec<f64>, Vec<bool>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/calibration_small.csv");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            (cells[2].parse::<f64>().unwrap(), cells[3] == "1")
        })
        .unzip()
}

fn metrics(confidence: &[f64], correct: &[bool]) -> Metrics {
    let bins = BinSpec {
        count: 10,
        binning: Binning::EqualWidth,
    };
    Sample::new(confidence, correct, None, bins).metrics(None)
}

/// (smECE, σ*, MCB, DSC, UNC, REL, RES, debiased L2-CE, Spiegelhalter Z, one-sided p),
/// from tests/metrics_expected.out.
type Expected = [f64; 10];

/// A fixture's name, its (confidences, labels) and the expected numbers.
type Case = (&'static str, (Vec<f64>, Vec<bool>), Expected);

#[test]
fn new_metrics_match_their_reference_packages_to_1e_9() {
    let cases: [Case; 4] = [
        (
            "calibration_small",
            calibration_small(),
            [
                0.11452663233429981,
                0.115234375,
                0.03337530946443376,
                0.034980158730158695,
                0.24937499999999996,
                0.03116919422923216,
                0.03808836996336997,
                0.2123331887274936,
                2.9926483923770117,
                0.001382840886197334,
            ],
        ),
        (
            "calibrated_500",
            fixture_json("ltt_fixtures.json", Some("calibrated_500")),
            [
                0.026712777583674855,
                0.02734375,
                0.00625052680752386,
                0.01969703107161383,
                0.14759999999999998,
                0.002789613101179343,
                0.01547210784478226,
                0.0,
                0.07169697827640295,
                0.47142153048086954,
            ],
        ),
        (
            "weak_1000",
            fixture_json("ltt_fixtures.json", Some("weak_1000")),
            [
                0.16784087155854324,
                0.16796875,
                0.05822819305413876,
                0.01566329798466673,
                0.22109999999999996,
                0.05739694707075543,
                0.014165896433955782,
                0.23548282830589215,
                16.15788107652731,
                // MAPIE's 1 − Φ(Z) rounds to 0 here; ½·erfc(Z/√2) keeps ~5e-59.
                0.0,
            ],
        ),
        (
            "metrics_extremes",
            fixture_json("metrics_extremes.json", None),
            [
                0.07748784567934579,
                0.078125,
                0.01753602453102454,
                0.06930533008658016,
                0.2465972222222223,
                0.015185290978954906,
                0.0672460142927908,
                0.0956008263612134,
                7.49543548053098,
                3.3084646133829665e-14,
            ],
        ),
    ];
    for (name, (confidence, correct), expected) in cases {
        let m = metrics(&confidence, &correct);
        let ours = [
            m.smooth_ece,
            m.smooth_ece_sigma,
            m.corp_mcb,
            m.corp_dsc,
            m.corp_unc,
            m.murphy_rel,
            m.murphy_res,
            m.debiased_l2_ce,
            m.spiegelhalter_z.unwrap(),
            m.spiegelhalter_p.unwrap(),
        ];
        let labels = [
            "smECE", "sigma", "MCB", "DSC", "UNC", "REL", "RES", "debiased", "Z", "p",
        ];
        for ((o, e), label) in ours.iter().zip(expected).zip(labels) {
            assert!((o - e).abs() <= 1e-9, "{name} {label}: {o} vs {e}");
        }
        // CORP's identity, exactly up to rounding.
        assert!((m.corp_mcb - m.corp_dsc + m.corp_unc - m.brier).abs() < 1e-12);
    }
}
