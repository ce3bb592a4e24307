//! Bounded fuzzing of codecal's readers (proptest, fixed seed, a few
//! seconds in all): random bytes and mutations of real files must give a
//! value or an error, never a panic. Covered: CSV and JSONL tables, run
//! configs (TOML), calibrator files (JSON), CodeXGLUE records, rating files
//! (seeded with the Haque et al. ratings in `../shared/data`), thresholds
//! TOML, OpenAI-compatible responses, answer extraction for every task, the
//! miner on mutated real Python and Java source, calibrator semantics
//! (extreme values anywhere in a calibrator with per-group cutoffs, and in
//! a multicalibrated one), model names in replies, run
//! report files (report.json rebuilt into report.md and report.html) and
//! `Retry-After` values.
//!
//! `CODECAL_FUZZ_CASES` (default 150 per target) and `CODECAL_FUZZ_SEED`
//! (default 7) turn the same targets into a longer campaign:
//! `tests/fuzz_campaign.sh` runs them with many seeds for a set time and
//! counts inputs and crashes.

use std::path::{Path, PathBuf};

use codecal::calibrate::Calibrator;
use codecal::pipeline::RunConfig;
use codecal::table::{Format, Table};
use proptest::prelude::*;

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: env_number("CODECAL_FUZZ_CASES", 150) as u32,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(env_number("CODECAL_FUZZ_SEED", 7)),
        ..ProptestConfig::default()
    }
}

/// `seed` with up to 8 edits: a byte replaced, inserted or removed.
fn mutated(seed: impl AsRef<[u8]> + Clone + 'static) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((any::<u8>(), any::<u16>(), 0u8..3), 0..8).prop_map(move |edits| {
        let mut bytes = seed.as_ref().to_vec();
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
        if let Ok(calibrator) = Calibrator::parse(Path::new("fuzz.json"), &text)
            && let Ok(cutoff) = calibrator.accept_cutoff(None) {
                for p in [0.0, 0.3, 1.0] {
                    let _ = calibrator.apply(p, cutoff);
                }
            }
    }

    /// Calibrator semantics: a number anywhere in a calibrator with
    /// per-group cutoffs replaced by an extreme value must be refused or
    /// applied, never panic.
    #[test]
    fn calibrator_values_never_panic(picks in prop::collection::vec((any::<u16>(), 0..EXTREMES.len()), 1..6)) {
        let value = with_extremes(grouped_calibrator_seed(), &picks);
        if let Ok(calibrator) = Calibrator::parse(Path::new("fuzz.json"), &value.to_string()) {
            for group in [None, Some("java"), Some("python"), Some("cobol")] {
                if let Ok((accept, reject)) = calibrator.cutoffs_for(None, group) {
                    for p in [0.0, 0.3, 1.0] {
                        let _ = calibrator.apply_with(p, &accept, reject.as_ref());
                    }
                }
            }
        }
    }

    /// A multicalibrated calibrator (encoders, groups, patches) with extreme
    /// values anywhere, applied to items of every kind of feature value.
    #[test]
    fn multicalibrated_calibrators_never_panic(picks in prop::collection::vec((any::<u16>(), 0..EXTREMES.len()), 1..6)) {
        use codecal::calibrate::multical::FeatureValue;
        let value = with_extremes(multicalibrated_seed(), &picks);
        if let Ok(calibrator) = Calibrator::parse(Path::new("fuzz.json"), &value.to_string())
            && let Ok((accept, reject)) = calibrator.cutoffs_for(None, None) {
                for language in ["a", "b", "zz", ""] {
                    for length in [FeatureValue::Number(5.0), FeatureValue::Number(f64::NAN), FeatureValue::Text("abc")] {
                        let values = [FeatureValue::Text(language), length];
                        for p in [0.0, 0.3, 1.0] {
                            let _ = calibrator.apply_in_groups(p, &values, &accept, reject.as_ref());
                        }
                    }
                }
            }
    }

    /// A reply naming any model, checked against the one asked for.
    #[test]
    fn reply_model_names_never_panic(asked in "\\PC{0,12}", answered in "\\PC{0,20}") {
        let value = serde_json::json!({ "model": answered, "choices": [] });
        let checked = codecal::generate::openai::check_model_named("u", &asked, &value);
        prop_assert_eq!(checked.is_ok(), answered == asked || answered.strip_prefix(asked.as_str()).and_then(|r| r.strip_prefix('-')).is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit() || c == '-')));
    }

    /// A run's report.json, mutated, rebuilt into report.md and report.html.
    #[test]
    fn report_files_never_panic(text in mutated(report_seed().into_bytes())) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("report.json"), &text).unwrap();
        let _ = codecal::report::run::rebuild(dir.path());
    }

    #[test]
    fn retry_after_never_panics(text in "\\PC{0,40}", digits in "[0-9]{0,400}") {
        let now = std::time::SystemTime::now();
        for value in [text.as_str(), digits.as_str()] {
            let _ = codecal::generate::openai::parse_retry_after(value, now);
        }
    }

    #[test]
    fn rating_files_never_panic(ratings in mutated(ratings_seed())) {
        use codecal::thresholds::ratings::{GenericColumns, HAQUE_SCALE, is_haque, read_generic, read_haque};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ratings.csv");
        std::fs::write(&path, &ratings).unwrap();
        if let Ok(table) = Table::read(&path, Some(Format::Csv)) {
            if is_haque(&table) {
                let _ = read_haque(&table, &[]);
            }
            let columns = GenericColumns {
                id: "function_id".into(),
                reference: "text.1".into(),
                candidate: "text".into(),
                ratings: vec!["similarity".into()],
            };
            let _ = read_generic(&table, &columns, HAQUE_SCALE, &[]);
        }
    }

    #[test]
    fn thresholds_files_never_panic(text in mutated(THRESHOLDS_SEED)) {
        use codecal::thresholds::file::{OperatingPointName, read_threshold};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.toml");
        std::fs::write(&path, &text).unwrap();
        for point in [OperatingPointName::BestF1, OperatingPointName::HighPrecision, OperatingPointName::HighRecall] {
            if let Ok(threshold) = read_threshold(&path, point) {
                prop_assert!(threshold.threshold.is_finite(), "a threshold is a number: {}", threshold.threshold);
            }
        }
    }

    #[test]
    fn openai_responses_never_panic(completion in mutated(COMPLETION_SEED), chat in mutated(CHAT_SEED)) {
        use codecal::generate::openai::parse_response;
        use codecal::prompt::{Message, Prompt};
        let prompts = [
            Prompt::Completion("def f():".into()),
            Prompt::Chat(vec![Message { role: "user".into(), content: "hi".into() }]),
        ];
        for (body, prompt) in [(&completion, &prompts[0]), (&chat, &prompts[1])] {
            if let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) {
                for require in [true, false] {
                    if let Ok(generation) = parse_response("http://127.0.0.1:1/v1", prompt, &value, require) {
                        for token in &generation.tokens {
                            prop_assert!(token.logprob <= 0.0, "a log-probability above 0: {}", token.logprob);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn answer_extraction_never_panics(seed in 0..ANSWER_SEEDS.len(), edits in mutated(b"".as_slice()),
                                      raw in mutated(ANSWER_SEEDS[0].as_bytes())) {
        use codecal::task::{TaskKind, answer};
        let mut text = ANSWER_SEEDS[seed].as_bytes().to_vec();
        text.extend(&edits);
        for candidate in [String::from_utf8_lossy(&text).into_owned(), String::from_utf8_lossy(&raw).into_owned()] {
            for kind in [TaskKind::Synthesis, TaskKind::LineCompletion, TaskKind::CruxevalOutput, TaskKind::CruxevalInput] {
                let answer = answer::extract(kind, &candidate);
                let span = answer::span(kind, &candidate);
                prop_assert_eq!(&candidate[span.clone()], answer.as_str());
                let measured = answer::measured_span(kind, &candidate);
                prop_assert!(measured.end <= candidate.len() && candidate.is_char_boundary(measured.start));
            }
        }
    }

    #[test]
    fn the_miner_never_panics_on_mutated_source(python in mutated(python_seed()), java in mutated(JAVA_SEED)) {
        use codecal::corpus::mine::{Language, MineOptions, mine_tree};
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.py"), &python).unwrap();
        std::fs::write(dir.path().join("M.java"), &java).unwrap();
        for language in [Language::Python, Language::Java] {
            for undocumented in [false, true] {
                let options = MineOptions { language, repo_depth: 1, undocumented };
                if let Ok((records, _)) = mine_tree(dir.path(), options) {
                    for record in records {
                        prop_assert!(!record.code.is_empty());
                    }
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

const THRESHOLDS_SEED: &[u8] = include_bytes!("../thresholds/sbert-minilm.toml");
const COMPLETION_SEED: &[u8] = br#"{"id":"c","object":"text_completion","choices":[{"index":0,"text":" Return x .","finish_reason":"stop","logprobs":{"tokens":[" Return"," x"," ."],"token_logprobs":[-0.1,-0.5,-0.05],"top_logprobs":[{" Return":-0.1," Get":-2.5},{" x":-0.5},{" .":-0.05}],"text_offset":[0,7,9]}}],"usage":{"prompt_tokens":5,"completion_tokens":3}}"#;
const CHAT_SEED: &[u8] = br#"{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"[ANSWER]f(1) == 2[/ANSWER]"},"finish_reason":"stop","logprobs":{"content":[{"token":"[ANSWER]","logprob":-0.01,"top_logprobs":[{"token":"[ANSWER]","logprob":-0.01}]},{"token":"f(1) == 2","logprob":-0.7,"top_logprobs":[]},{"token":"[/ANSWER]","logprob":0.0,"top_logprobs":[]}]}}]}"#;
const JAVA_SEED: &[u8] = b"package a;\n\npublic class M {\n    /**\n     * Returns the sum of two numbers.\n     */\n    public int add(int a, int b) {\n        int c = a + b;\n        return c;\n    }\n}\n";
/// Raw generations as models write them: fenced code, [ANSWER] tags, chat
/// preambles, unicode and stray fences.
const ANSWER_SEEDS: [&str; 6] = [
    "[ANSWER]assert f([1, 2]) == [2, 1][/ANSWER]",
    "Here is the code:\n```python\ndef add(a, b):\n    return a + b\n```\nDone.",
    "    return sorted(x)\n\ndef other():\n    pass\n",
    "```\nf('é') == 'ü'\n```",
    "assert f(\"a\") == ",
    "\n\n  x = [i for i in range(3)]\n```",
];

/// The first 60 lines of the Haque et al. ratings (the thresholds' input),
/// or a few lines in its layout where the shared data is absent.
fn ratings_seed() -> Vec<u8> {
    shared_prefix("haque2022-similarity/final_megafile.csv", 60).unwrap_or_else(|| {
        b"function_id,source,similarity,text,text.1\n1,baseline,3,Returns x,Return x\n1,reference,4,Return x,Return x\n"
            .to_vec()
    })
}

/// A real Python module of the local standard library (the default corpus),
/// its first 120 lines.
fn python_seed() -> Vec<u8> {
    codecal::corpus::mine::python_stdlib()
        .ok()
        .map(|root| root.join("json/decoder.py"))
        .and_then(|path| prefix_lines(&path, 120))
        .unwrap_or_else(|| b"def f(x):\n    \"\"\"Return x.\"\"\"\n    return x\n".to_vec())
}

fn shared_prefix(relative: &str, lines: usize) -> Option<Vec<u8>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data")
        .join(relative);
    let found = prefix_lines(&path, lines);
    if found.is_none() {
        eprintln!(
            "note: {} is absent; fuzzing from a built-in seed",
            path.display()
        );
    }
    found
}

fn prefix_lines(path: &Path, lines: usize) -> Option<Vec<u8>> {
    let text = std::fs::read(path).ok()?;
    let end = text
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(lines)
        .map_or(text.len(), |(i, _)| i + 1);
    Some(text[..end].to_vec())
}

/// Values that break assumptions: out of range, huge, negative, the wrong type.
static EXTREMES: std::sync::LazyLock<Vec<serde_json::Value>> = std::sync::LazyLock::new(|| {
    serde_json::from_str("[-1, 0, 1, 1.5, 1e308, -1e308, 4294967296, -0.0, null, \"x\", [], {}]")
        .unwrap()
});

/// JSON pointers to every number in `value`.
fn number_pointers(value: &serde_json::Value, at: String, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Number(_) => out.push(at),
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                number_pointers(item, format!("{at}/{i}"), out);
            }
        }
        serde_json::Value::Object(map) => {
            for (key, item) in map {
                number_pointers(item, format!("{at}/{key}"), out);
            }
        }
        _ => {}
    }
}

/// The JSON `seed` with the numbers `picks` points at (by index among its
/// numbers, wrapping) replaced by the `EXTREMES` they name.
fn with_extremes(seed: &str, picks: &[(u16, usize)]) -> serde_json::Value {
    let mut value: serde_json::Value = serde_json::from_str(seed).unwrap();
    let mut leaves = Vec::new();
    number_pointers(&value, String::new(), &mut leaves);
    for &(at, extreme) in picks {
        let pointer = &leaves[usize::from(at) % leaves.len()];
        *value.pointer_mut(pointer).unwrap() = EXTREMES[extreme].clone();
    }
    value
}

/// A calibrator with per-group cutoffs (java, python), made once.
fn grouped_calibrator_seed() -> &'static str {
    static SEED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SEED.get_or_init(|| {
        let mut calibrator: Calibrator =
            serde_json::from_str(calibrator_seed()).expect("the seed calibrator");
        let confidence: Vec<f64> = (0..400).map(|i| f64::from(i % 100) / 100.0).collect();
        let correct: Vec<bool> = (0..400).map(|i| i % 100 > 30 + i % 7).collect();
        let groups: Vec<String> = (0..400)
            .map(|i| if i % 3 == 0 { "java" } else { "python" }.to_owned())
            .collect();
        calibrator.cutoffs = codecal::calibrate::CutoffParams {
            reject_precision: Some(0.8),
            ..Default::default()
        }
        .fit_by_group("language", &confidence, &correct, &groups)
        .unwrap();
        calibrator.to_json()
    })
}

/// A calibrator multicalibrated on a categorical and a numeric feature, made once.
fn multicalibrated_seed() -> &'static str {
    use codecal::calibrate::multical::{FeatureColumn, FeatureValues, MulticalibrationParams};
    use codecal::calibrate::{CalibrateOptions, CalibrationData};
    static SEED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SEED.get_or_init(|| {
        let n = 3000;
        let language: Vec<String> = (0..n).map(|i| ["a", "b", "c"][i % 3].to_owned()).collect();
        let length: Vec<f64> = (0..n).map(|i| (i * 37 % 400) as f64).collect();
        let confidence: Vec<f64> = (0..n).map(|i| (i * 13 % 100) as f64 / 100.0).collect();
        // Right far more often in "a" than in "c" at the same confidence.
        let correct: Vec<bool> = (0..n)
            .map(|i| (i * 13 % 100) > [10, 50, 90][i % 3])
            .collect();
        let data = CalibrationData {
            confidence,
            correct,
            groups: None,
            target: None,
            features: vec![
                FeatureColumn {
                    name: "language".into(),
                    values: FeatureValues::Categorical(language),
                },
                FeatureColumn {
                    name: "length".into(),
                    values: FeatureValues::Numeric(length),
                },
            ],
        };
        let options = CalibrateOptions {
            bootstrap: 0,
            multicalibration: Some(MulticalibrationParams {
                min_items: 20,
                ..Default::default()
            }),
            ..CalibrateOptions::default()
        };
        let calibrator = calibrator_of(&data, &options);
        let fit = calibrator
            .multicalibration
            .as_ref()
            .expect("a multicalibration fit");
        assert!(!fit.patches.is_empty(), "the seed has patches to fuzz");
        calibrator.to_json()
    })
}

/// A small run report as report.json, made once.
fn report_seed() -> String {
    use codecal::report::run::{
        BarView, CellItem, CellView, ItemText, ItemView, REPORT_FORMAT, ReportTable, RunHeader,
        RunReport, Section,
    };
    let items = (0..4)
        .map(|i| ItemView {
            id: format!("item-{i}"),
            model: "m".into(),
            group: "repo".into(),
            texts: vec![ItemText {
                label: "code".into(),
                text: format!("def f{i}():\n    return <b>{i}</b>\n"),
                code: true,
            }],
            numbers: vec![("similarity".into(), 0.5)],
            labels: vec![("verdict".into(), "<pass>".into())],
            headline: format!("summary {i} & more"),
        })
        .collect();
    let report = RunReport {
        format: REPORT_FORMAT,
        title: "codecal run: fuzz".into(),
        intro: "A [link](x.svg) and `code`.".into(),
        header: RunHeader::default(),
        tables: vec![ReportTable {
            file: "t".into(),
            title: "T".into(),
            header: vec!["a".into(), "b".into()],
            rows: vec![vec!["1".into(), "<i>2</i>".into()]],
        }],
        notes: vec!["note".into()],
        sections: vec![Section {
            heading: "S".into(),
            body: "- one\n- two".into(),
        }],
        items,
        cells: vec![CellView {
            key_names: vec!["model".into()],
            key: vec!["m".into()],
            figures: "calibration/m".into(),
            raw_bars: vec![BarView {
                lo: 0.0,
                hi: 0.5,
                count: 2.0,
                accuracy: 0.5,
            }],
            rescaled_bars: None,
            items: (0..4)
                .map(|i| CellItem {
                    item: i,
                    raw: 0.2 * i as f64,
                    rescaled: None,
                    correct: i % 2 == 0,
                    raw_bar: Some(0),
                    rescaled_bar: None,
                })
                .collect(),
        }],
    };
    serde_json::to_string(&report).unwrap()
}

/// A real calibrator file, from the small fixture (made once for every case).
fn calibrator_seed() -> &'static str {
    static SEED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SEED.get_or_init(make_calibrator_seed)
}

fn make_calibrator_seed() -> String {
    use codecal::calibrate::{CalibrateOptions, CalibrationData};
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
        features: Vec::new(),
    };
    let options = CalibrateOptions {
        bootstrap: 0,
        ..CalibrateOptions::default()
    };
    calibrator_of(&data, &options).to_json()
}

/// The calibrator `calibrate` saves for `data` under `options`.
fn calibrator_of(
    data: &codecal::calibrate::CalibrationData,
    options: &codecal::calibrate::CalibrateOptions,
) -> Calibrator {
    use codecal::calibrate::calibrator::LabelDefinition;
    use codecal::calibrate::{Provenance, calibrate};
    let report = calibrate(data, options).unwrap();
    let provenance = Provenance {
        measure: "confidence".into(),
        label: LabelDefinition::default(),
        generator: None,
    };
    Calibrator::from_report(&report, provenance)
}
