//! Issue "decisions with power": the acceptance procedures keep their
//! guarantee over seeded draws from three populations and accept at least
//! 40% of what the oracle does on calibrated Beta(3, 2) items, more than any
//! of MAPIE 1.6's procedures on the same sets (`tests/fixtures/mapie_power.json`,
//! kept by `cargo bench --bench decisions`); the deployed rule is the
//! validated rule; per-group cutoffs, `--min-coverage` and `codecal monitor`
//! end to end through the CLI, with their refusals.

use std::path::Path;
use std::process::{Command, Output};

use codecal::calibrate::cutoffs::Procedure;
use codecal::calibrate::cutoffs::simulation::{Population, draw_set, simulate};
use codecal::calibrate::{Calibrator, CutoffParams};

fn codecal(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args(args)
        .output()
        .expect("codecal runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `calibrate ITEMS --target-precision 0.9 --bootstrap 0 --save SAVED EXTRA...`,
/// which must succeed.
fn calibrate_at_90(items: &Path, saved: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "calibrate",
        items.to_str().unwrap(),
        "--target-precision",
        "0.9",
        "--bootstrap",
        "0",
        "--save",
        saved.to_str().unwrap(),
    ];
    args.extend(extra);
    let out = codecal(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

fn params(procedure: Procedure) -> CutoffParams {
    CutoffParams {
        target_precisions: vec![0.9],
        delta: 0.1,
        procedure,
        ..CutoffParams::default()
    }
}

/// Validity: over 400 seeded calibration sets of 2,000 items from each
/// population, the chosen cutoff's population precision falls below 0.9 in
/// at most δ + 3 standard errors of the draws, for every procedure.
#[test]
fn every_procedure_keeps_its_guarantee_over_400_draws_per_population() {
    for population in Population::ALL {
        for procedure in Procedure::ALL {
            let outcome = simulate(population, &params(procedure), 2_000, 400, 11);
            let allowed = outcome.allowed_failure_rate(0.1);
            println!(
                "{} / {}: {} of {} draws below 0.9 ({:.3}, allowed {allowed:.3}); mean coverage \
                 {:.4}, oracle {:.4}",
                population.name(),
                procedure.as_str(),
                outcome.failures,
                outcome.draws,
                outcome.failure_rate(),
                outcome.mean_coverage,
                outcome.oracle_coverage
            );
            assert!(outcome.failure_rate() <= allowed);
        }
    }
}

/// Power on the data: 5,000 calibrated Beta(3, 2) items, target 0.9,
/// δ = 0.1. The oracle accepts 11.5%; the default procedure must average at
/// least 40% of that over the first 100 of the bench's sets, and at least
/// each MAPIE procedure's mean coverage on the very same sets.
#[test]
fn the_default_procedure_accepts_40_percent_of_the_oracle_and_more_than_mapie() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mapie_power.json");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
    let (n, seed) = (
        doc["n"].as_u64().unwrap() as usize,
        doc["seed"].as_u64().unwrap(),
    );
    let population = Population::Calibrated;
    let kept = doc["populations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["population"] == population.name())
        .expect("the calibrated population in the fixture");
    let draws = 100;
    let ours = simulate(population, &params(Procedure::default()), n, draws, seed);
    let oracle = ours.oracle_coverage;
    println!(
        "codecal {}: mean coverage {:.4} = {:.0}% of the oracle's {oracle:.4}",
        Procedure::default().as_str(),
        ours.mean_coverage,
        100.0 * ours.mean_coverage / oracle
    );
    assert!(ours.mean_coverage >= 0.4 * oracle);
    for (method, cutoffs) in kept["cutoffs"].as_object().unwrap() {
        let cutoffs = cutoffs.as_array().unwrap();
        assert_eq!(cutoffs.len(), draws, "{method}");
        let coverage = cutoffs
            .iter()
            .filter_map(serde_json::Value::as_f64)
            .map(|t| population.coverage(t))
            .sum::<f64>()
            / draws as f64;
        println!("MAPIE 1.6 {method}: mean coverage {coverage:.4}");
        assert!(ours.mean_coverage >= coverage, "{method}");
    }
    // The fixture's sets are the simulation's: MAPIE saw these very items.
    let (c, _) = draw_set(population, n, seed, 0);
    assert_eq!(c.len(), 5_000);
}

/// Writes `n` calibrated Beta(3, 2) items with a language column (java for
/// every third item) as CSV.
fn write_items(path: &Path, n: usize, seed: u64) {
    let (confidence, correct) = draw_set(Population::Calibrated, n, seed, 0);
    let mut text = String::from("id,confidence,correct,language\n");
    for (i, (c, y)) in confidence.iter().zip(&correct).enumerate() {
        let language = if i % 3 == 0 { "java" } else { "python" };
        text += &format!("{i},{c},{},{language}\n", u8::from(*y));
    }
    std::fs::write(path, text).unwrap();
}

fn decisions(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().unwrap().to_owned())
        .collect()
}

/// The validated rule is the deployed rule: `apply` on the calibration items
/// accepts exactly the items `calibrate` counted, pooled and per group.
#[test]
fn apply_accepts_exactly_what_calibrate_counted() {
    let dir = tempfile::tempdir().unwrap();
    let items = dir.path().join("items.csv");
    write_items(&items, 6_000, 5);
    for by in [None, Some("language")] {
        let saved = dir.path().join("c.json");
        let extra: Vec<&str> = by.into_iter().flat_map(|c| ["--by", c]).collect();
        calibrate_at_90(&items, &saved, &extra);
        let items = items.to_str().unwrap();
        let calibrator = Calibrator::load(&saved).unwrap();
        assert_eq!(calibrator.cutoffs_on, "raw");
        let decided = dir.path().join("decided.csv");
        let out = codecal(&[
            "apply",
            "--calibrator",
            saved.to_str().unwrap(),
            items,
            "--out",
            decided.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let accepted = decisions(&decided)
            .iter()
            .filter(|d| *d == "accept")
            .count();
        let expected = match &calibrator.cutoffs.groups {
            None => calibrator.cutoffs.accept[0].decided,
            Some(by) => {
                assert_eq!(by.column, "language");
                assert_eq!(by.groups.len(), 2);
                by.groups.iter().map(|g| g.accept[0].decided).sum()
            }
        };
        println!("--by {by:?}: apply accepted {accepted}, calibrate counted {expected}");
        assert!(expected > 0, "{by:?}: nothing accepted");
        assert_eq!(accepted, expected, "{by:?}");
    }
}

/// A group too small to certify anything says so and sends its items to
/// review; `apply` without the group column is refused naming it; an
/// empty group cell is refused naming its line.
#[test]
fn per_group_cutoffs_say_when_a_group_is_too_small_and_need_their_column() {
    let dir = tempfile::tempdir().unwrap();
    let items = dir.path().join("items.csv");
    let (confidence, correct) = draw_set(Population::Calibrated, 3_000, 8, 0);
    let mut text = String::from("id,confidence,correct,repo\n");
    for (i, (c, y)) in confidence.iter().zip(&correct).enumerate() {
        let repo = if i < 30 { "tiny" } else { "big" };
        text += &format!("{i},{c},{},{repo}\n", u8::from(*y));
    }
    std::fs::write(&items, &text).unwrap();
    let saved = dir.path().join("c.json");
    let out = calibrate_at_90(&items, &saved, &["--by", "repo"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("| tiny (30 items) | 0.9 | none |"),
        "{report}"
    );
    let calibrator = Calibrator::load(&saved).unwrap();
    let tiny = calibrator
        .cutoffs
        .groups
        .as_ref()
        .unwrap()
        .group("tiny")
        .unwrap();
    assert_eq!(tiny.accept[0].cutoff, None);

    let without = dir.path().join("without.csv");
    std::fs::write(&without, "id,confidence\na,0.99\n").unwrap();
    let out = codecal(&[
        "apply",
        "--calibrator",
        saved.to_str().unwrap(),
        without.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no column repo"), "{}", stderr(&out));

    let holes = dir.path().join("holes.csv");
    std::fs::write(&holes, text.replacen(",tiny\n", ",\n", 1)).unwrap();
    let out = codecal(&[
        "calibrate",
        holes.to_str().unwrap(),
        "--target-precision",
        "0.9",
        "--by",
        "repo",
        "--bootstrap",
        "0",
    ]);
    assert!(!out.status.success());
    let message = stderr(&out);
    assert!(
        message.contains("holes.csv:2") && message.contains("repo"),
        "{message}"
    );
}

#[test]
fn min_coverage_refuses_a_valid_cutoff_that_accepts_too_little() {
    let dir = tempfile::tempdir().unwrap();
    let items = dir.path().join("items.csv");
    write_items(&items, 5_000, 3);
    let run = |least: &str| {
        codecal(&[
            "calibrate",
            items.to_str().unwrap(),
            "--target-precision",
            "0.9",
            "--bootstrap",
            "0",
            "--min-coverage",
            least,
            "--json",
        ])
    };
    let loose = run("0.01");
    assert!(loose.status.success(), "{}", stderr(&loose));
    let json: serde_json::Value = serde_json::from_slice(&loose.stdout).unwrap();
    assert!(json["cutoffs"]["accept"][0]["cutoff"].is_number(), "{json}");
    let strict = run("0.5");
    let json: serde_json::Value = serde_json::from_slice(&strict.stdout).unwrap();
    let accept = &json["cutoffs"]["accept"][0];
    assert!(accept["cutoff"].is_null(), "{accept}");
    assert!(
        accept["unmet"]
            .as_str()
            .unwrap()
            .contains("below --min-coverage 0.5"),
        "{accept}"
    );
    for (flag, value, named) in [
        ("--min-coverage", "1.5", "--min-coverage must be in (0, 1)"),
        (
            "--target-precision",
            "1",
            "--target-precision must be in (0, 1)",
        ),
        ("--delta", "0", "--delta must be in (0, 1)"),
    ] {
        let out = codecal(&["calibrate", items.to_str().unwrap(), flag, value]);
        assert!(!out.status.success());
        assert!(stderr(&out).contains(named), "{}", stderr(&out));
        assert_eq!(stderr(&out).trim().lines().count(), 1, "{}", stderr(&out));
    }
}

/// `codecal monitor` end to end: a stream that holds exits 0; one whose
/// precision drops halfway raises the alarm (exit 3) after the drop; a file
/// of another measure or model is refused before any test.
#[test]
fn monitor_raises_the_alarm_after_a_drop_and_refuses_other_measures_and_models() {
    let dir = tempfile::tempdir().unwrap();
    let items = dir.path().join("items.csv");
    write_items(&items, 6_000, 5);
    let saved = dir.path().join("c.json");
    calibrate_at_90(&items, &saved, &[]);
    let saved = saved.to_str().unwrap();
    let stream = |name: &str, drop_at: usize| {
        let path = dir.path().join(name);
        let mut text = String::from("id,confidence,correct,model\n");
        for i in 0..2_000 {
            // Every item above any cutoff; right 97% of the time, then 70%.
            let wrong_every = if i < drop_at { 33 } else { 3 };
            let right = i % wrong_every != 0;
            text += &format!("{i},0.999,{},m\n", u8::from(right));
        }
        std::fs::write(&path, text).unwrap();
        path
    };
    let holds = stream("holds.csv", 2_000);
    let out = codecal(&["monitor", "--calibrator", saved, holds.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("| holds |"));

    let drops = stream("drops.csv", 1_000);
    let out = codecal(&["monitor", "--calibrator", saved, drops.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let message = stderr(&out);
    let line: usize = message
        .split("(line ")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{message}"));
    assert!(
        (1_002..=1_502).contains(&line),
        "alarm at line {line}: {message}"
    );

    let out = codecal(&[
        "monitor",
        "--calibrator",
        saved,
        drops.to_str().unwrap(),
        "--confidence",
        "similarity",
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("measure confidence"),
        "{}",
        stderr(&out)
    );

    let text = std::fs::read_to_string(saved).unwrap();
    let mut calibrator: serde_json::Value = serde_json::from_str(&text).unwrap();
    calibrator["generator"] = serde_json::json!({
        "backend": "local", "model": "other", "prompt_template_sha256": "0", "decoding": {}
    });
    let other = dir.path().join("other.json");
    std::fs::write(&other, calibrator.to_string()).unwrap();
    let out = codecal(&[
        "monitor",
        "--calibrator",
        other.to_str().unwrap(),
        drops.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out)
            .contains("drops.csv:2: the item's model is m, but the calibrator was made for other"),
        "{}",
        stderr(&out)
    );
}
