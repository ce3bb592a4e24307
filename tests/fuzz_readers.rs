//! Bounded fuzzing of codecal's readers (proptest, fixed seed, a few
//! seconds in all): random bytes and mutations of real files must give a
//! value or an error, never a panic. Covered: CSV and JSONL tables, run
//! configs (TOML), calibrator files (JSON) and CodeXGLUE records.

use std::path::Path;

use codecal::calibrate::Calibrator;
use codecal::pipeline::RunConfig;
use codecal::table::{Format, Table};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 150,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(7),
        ..ProptestConfig::default()
    }
}

/// `seed` with up to 8 edits: a byte replaced, inserted or removed.
fn mutated(seed: &'static [u8]) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((any::<u8>(), any::<u16>(), 0u8..3), 0..8).prop_map(move |edits| {
        let mut bytes = seed.to_vec();
        for (byte, at, kind) in edits {
            let at = usize::from(at) % (bytes.len() + 1);
            match kind {
                0 if at < bytes.len() => bytes[at] = byte,
                1 => bytes.insert(at, byte),
                _ if at < bytes.len() => {
                    bytes.remove(at);
                }
                _ => {}
            }
        }
        bytes
    })
}

const CSV_SEED: &[u8] = include_bytes!("fixtures/calibration_small.csv");
const CONFIG_SEED: &[u8] = include_bytes!("../configs/default.toml");
const JSONL_SEED: &[u8] = b"{\"id\": \"a\", \"confidence\": 0.25, \"correct\": 1, \"code\": \"def f():\\n    return 1\\n\"}\n{\"id\": \"b\", \"confidence\": {\"average_token_probability\": 0.9}, \"correct\": false}\n";
const RECORD_SEED: &[u8] = b"{\"repo\": \"org/a\", \"path\": \"a/m.py\", \"func_name\": \"f\", \"language\": \"python\", \"original_string\": \"def f(x):\\n    return x\", \"code\": \"def f(x):\\n    return x\", \"code_tokens\": [\"def\", \"f\"], \"docstring\": \"Return x .\", \"docstring_tokens\": [\"Return\", \"x\", \".\"], \"url\": \"https://example.org/a/f\", \"partition\": \"test\"}\n";

fn read_table(bytes: &[u8], name: &str, format: Format) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    if let Ok(table) = Table::read(&path, Some(format)) {
        for column in table.column_names().to_vec() {
            let column = table.column(&column).unwrap();
            for row in 0..table.len() {
                let _ = column.number(row);
                let _ = column.raw(row);
            }
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn tables_never_panic(csv in mutated(CSV_SEED), jsonl in mutated(JSONL_SEED),
                          noise in prop::collection::vec(any::<u8>(), 0..400)) {
        read_table(&csv, "t.csv", Format::Csv);
        read_table(&jsonl, "t.jsonl", Format::Jsonl);
        read_table(&noise, "n.csv", Format::Csv);
        read_table(&noise, "n.jsonl", Format::Jsonl);
    }

    #[test]
    fn run_configs_never_panic(text in mutated(CONFIG_SEED)) {
        let text = String::from_utf8_lossy(&text);
        if let Ok(config) = RunConfig::parse(&text, Path::new("fuzz.toml"), Path::new("configs")) {
            let _ = config.check();
        }
    }

    #[test]
    fn calibrator_files_never_panic(edits in prop::collection::vec(any::<u8>(), 0..8)) {
        let text = calibrator_seed().to_owned();
        // Mutate the saved file's text at a few places.
        let mut bytes = text.into_bytes();
        for (i, b) in edits.iter().enumerate() {
            let at = (usize::from(*b) * 31 + i * 97) % bytes.len();
            bytes[at] = *b;
        }
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(calibrator) = Calibrator::parse(Path::new("fuzz.json"), &text) {
            if let Ok(cutoff) = calibrator.accept_cutoff(None) {
                for p in [0.0, 0.3, 1.0] {
                    let _ = calibrator.apply(p, cutoff);
                }
            }
        }
    }

    #[test]
    fn codexglue_records_never_panic(record in mutated(RECORD_SEED)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, &record).unwrap();
        let _ = codecal::corpus::read_codexglue(&path, true);
        let _ = codecal::corpus::read_codexglue(&path, false);
    }
}

/// A real calibrator file, from the small fixture (made once for every case).
fn calibrator_seed() -> &'static str {
    static SEED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SEED.get_or_init(make_calibrator_seed)
}

fn make_calibrator_seed() -> String {
    use codecal::calibrate::calibrator::LabelDefinition;
    use codecal::calibrate::{CalibrateOptions, CalibrationData, Provenance, calibrate};
    let text = String::from_utf8_lossy(CSV_SEED).into_owned();
    let (confidence, correct): (Vec<f64>, Vec<bool>) = text
        .lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            (c[2].parse::<f64>().unwrap(), c[3] == "1")
        })
        .unzip();
    let data = CalibrationData {
        confidence,
        correct,
        groups: None,
        target: None,
    };
    let options = CalibrateOptions {
        bootstrap: 0,
        ..CalibrateOptions::default()
    };
    let report = calibrate(&data, &options).unwrap();
    let provenance = Provenance {
        measure: "confidence".into(),
        label: LabelDefinition::default(),
        generator: None,
    };
    Calibrator::from_report(&report, provenance).to_json()
}
