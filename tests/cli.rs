//! Runs the built `codecal` binary on small files in a fresh temp dir: the
//! happy paths of `calibrate` and every bad-input message.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn codecal(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the codecal binary runs")
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Writes `body` to `name` in a fresh directory, runs `args` there, and expects
/// a one-line error containing `message`, and no panic.
fn command_fails_with(name: &str, body: &str, args: &[&str], message: &str) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), name, body);
    let out = codecal(args, dir.path());
    assert!(!out.status.success(), "expected failure for {args:?}");
    let err = stderr(&out);
    assert!(err.contains(message), "stderr {err:?} lacks {message:?}");
    assert_eq!(err.lines().count(), 1, "one-line error expected: {err:?}");
    assert!(!err.contains("panicked"));
}

/// Runs `calibrate` on a CSV body and expects failure with `message` in stderr.
fn fails_with(csv: &str, extra: &[&str], message: &str) {
    let mut args = vec!["calibrate", "in.csv", "--bootstrap", "0"];
    args.extend_from_slice(extra);
    command_fails_with("in.csv", csv, &args, message);
}

fn fixture() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/calibration_small.csv");
    path.to_string_lossy().into_owned()
}

#[test]
fn confidence_above_one_names_file_line_and_column() {
    fails_with(
        "confidence,correct\n0.5,1\n1.5,0\n",
        &[],
        "in.csv:3: column 'confidence': confidence 1.5 is outside [0, 1]",
    );
}

#[test]
fn nan_confidence_is_named() {
    fails_with(
        "confidence,correct\n0.5,1\nNaN,0\n",
        &[],
        "in.csv:3: column 'confidence': confidence is NaN",
    );
}

#[test]
fn text_confidence_is_not_a_number() {
    fails_with(
        "confidence,correct\nhigh,1\n",
        &[],
        "in.csv:2: column 'confidence': 'high' is not a number",
    );
}

#[test]
fn label_other_than_zero_or_one_is_named() {
    fails_with(
        "confidence,correct\n0.5,1\n0.4,2\n",
        &[],
        "in.csv:3: column 'correct': '2' is not a label; use 0/1 or true/false",
    );
}

#[test]
fn missing_column_lists_the_columns() {
    fails_with(
        "conf,correct\n0.5,1\n",
        &[],
        "in.csv: no column 'confidence' (columns: conf, correct)",
    );
}

#[test]
fn empty_cell_is_a_missing_value() {
    fails_with(
        "confidence,correct\n0.5,1\n,0\n",
        &[],
        "in.csv:3: column 'confidence': value is missing",
    );
}

#[test]
fn empty_file_is_named() {
    fails_with("", &[], "in.csv: the file has no data rows");
    fails_with(
        "confidence,correct\n",
        &[],
        "in.csv: the file has no data rows",
    );
}

#[test]
fn fewer_groups_than_folds_is_named() {
    fails_with(
        "confidence,correct,repo\n0.5,1,a\n0.4,0,a\n0.6,1,b\n0.3,0,b\n0.2,0,c\n0.9,1,c\n",
        &["--group", "repo"],
        "3 distinct groups cannot fill 5 folds",
    );
}

#[test]
fn fewer_items_than_folds_is_named() {
    fails_with(
        "confidence,correct\n0.5,1\n0.4,0\n",
        &[],
        "2 items cannot fill 5 folds",
    );
}

#[test]
fn bad_score_is_named() {
    fails_with(
        "confidence,sim\n0.5,0.9\n0.4,inf\n",
        &["--score", "sim", "--threshold", "0.8"],
        "in.csv:3: column 'sim': score is not a finite number",
    );
}

#[test]
fn bad_jsonl_line_is_named() {
    command_fails_with(
        "in.jsonl",
        "{\"confidence\": 0.5, \"correct\": 1}\n{oops\n",
        &["calibrate", "in.jsonl"],
        "in.jsonl:2: not valid JSON",
    );
}

#[test]
fn unknown_extension_asks_for_format() {
    command_fails_with(
        "in.txt",
        "confidence,correct\n0.5,1\n",
        &["calibrate", "in.txt"],
        "pass --format csv|jsonl",
    );
}

#[test]
fn missing_input_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = codecal(&["calibrate", "no-such.csv"], dir.path());
    assert!(stderr(&out).contains("no-such.csv: cannot read"));
}

#[test]
fn single_class_warns_and_still_reports_raw_metrics() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "in.csv",
        "confidence,correct\n0.5,1\n0.4,1\n0.9,1\n",
    );
    let out = codecal(
        &["calibrate", "in.csv", "--json", "--bootstrap", "0"],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("warning: all 3 items are correct"));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["raw"]["base_rate"], 1.0);
    assert!(json["raw"]["auroc"].is_null());
    assert!(json["rescaled"].is_null());
}

#[test]
fn json_has_the_documented_keys() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "calibrate",
        &fixture(),
        "--group",
        "repo",
        "--target",
        "similarity",
        "--json",
        "--bootstrap",
        "50",
    ];
    let out = codecal(&args, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for side in ["raw", "rescaled"] {
        for key in [
            "n",
            "base_rate",
            "ece",
            "mce",
            "brier",
            "brier_ref",
            "skill_score",
            "oyster_ece",
            "performance_score",
            "auroc",
            "log_loss",
            "spearman",
        ] {
            assert!(json[side].get(key).is_some(), "{side}.{key} missing");
            if key != "n" {
                let ci = &json[side]["ci"][key];
                assert!(
                    ci[0].as_f64().unwrap() <= ci[1].as_f64().unwrap(),
                    "{side}.ci.{key}"
                );
            }
        }
    }
    for key in [
        "method",
        "cv",
        "folds",
        "untested_items",
        "bucket_collapse",
        "rescaler",
    ] {
        assert!(json.get(key).is_some(), "{key} missing");
    }
    assert_eq!(json["cv"], "group");
    assert_eq!(json["rescaler"].as_array().unwrap().len(), 5);
    assert!(json["rescaler"][0]["slope"].is_f64());
}

#[test]
fn same_seed_same_output_other_seed_other_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let run = |seed: &str| {
        let out = codecal(
            &["calibrate", &fixture(), "--json", "--seed", seed],
            dir.path(),
        );
        assert!(out.status.success());
        out.stdout
    };
    assert_eq!(run("1"), run("1"));
    assert_ne!(run("1"), run("2"));
}

#[test]
fn out_dir_gets_every_artifact() {
    let dir = tempfile::tempdir().unwrap();
    let out = codecal(
        &[
            "calibrate",
            &fixture(),
            "--group",
            "repo",
            "--bootstrap",
            "20",
            "--out",
            "report",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    for name in [
        "metrics.json",
        "metrics.csv",
        "table.md",
        "table.tex",
        "reliability.svg",
    ] {
        let text = std::fs::read_to_string(dir.path().join("report").join(name)).unwrap();
        assert!(!text.is_empty(), "{name} is empty");
    }
    let png = std::fs::read(dir.path().join("report/reliability.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let table = std::fs::read_to_string(dir.path().join("report/table.md")).unwrap();
    assert_eq!(table, String::from_utf8(out.stdout).unwrap());
}

#[test]
fn score_and_threshold_decide_correctness() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "calibrate",
        &fixture(),
        "--score",
        "similarity",
        "--threshold",
        "0.4",
        "--json",
        "--bootstrap",
        "0",
        "--method",
        "none",
    ];
    let out = codecal(&args, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = std::fs::read_to_string(fixture()).unwrap();
    let above = text
        .lines()
        .skip(1)
        .filter(|l| l.rsplit(',').next().unwrap().parse::<f64>().unwrap() >= 0.4)
        .count();
    let rate = json["raw"]["base_rate"].as_f64().unwrap();
    assert!((rate - above as f64 / 80.0).abs() < 1e-12);
}

#[test]
fn every_subcommand_flag_is_documented_in_help() {
    let dir = tempfile::tempdir().unwrap();
    let out = codecal(&["calibrate", "--help"], dir.path());
    let help = String::from_utf8(out.stdout).unwrap();
    for flag in [
        "--format",
        "--confidence",
        "--correct",
        "--score",
        "--threshold",
        "--group",
        "--target",
        "--method",
        "--no-penalty",
        "--cv",
        "--folds",
        "--bins",
        "--binning",
        "--bootstrap",
        "--bootstrap-by-group",
        "--seed",
        "--json",
        "--out",
    ] {
        // The flag's entry runs from its line to the next flag's line.
        let entry: String = help
            .lines()
            .skip_while(|l| !l.trim_start().starts_with(flag))
            .enumerate()
            .take_while(|(i, l)| *i == 0 || !l.trim_start().starts_with('-'))
            .map(|(_, l)| l.trim())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            entry.len() > flag.len() + 20,
            "{flag} has no description: {entry:?}"
        );
    }
}

#[test]
fn score_missing_column_is_named_before_any_model_loads() {
    command_fails_with(
        "pairs.csv",
        "id,reference,summary\n1,a,b\n",
        &["score", "pairs.csv"],
        "pairs.csv: no column 'candidate' (columns: id, reference, summary)",
    );
}

#[test]
fn score_invalid_utf8_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pairs.csv"),
        b"id,reference,candidate\n1,a,b\n2,\xc3\x28,c\n",
    )
    .unwrap();
    let out = codecal(&["score", "pairs.csv"], dir.path());
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("pairs.csv:3: the text is not valid UTF-8"),
        "{}",
        stderr(&out)
    );
}

fn thresholds_fails_with(csv: &str, extra: &[&str], message: &str) {
    let mut args = vec![
        "thresholds",
        "--ratings",
        "ratings.csv",
        "--no-model",
        "--bootstrap",
        "0",
    ];
    args.extend_from_slice(extra);
    command_fails_with("ratings.csv", csv, &args, message);
}

#[test]
fn thresholds_rating_outside_the_scale_names_its_line() {
    thresholds_fails_with(
        "id,reference,candidate,r1\na,x y,x y,4\nb,x y,z,7\n",
        &["--rating", "r1", "--scale-max", "5"],
        "ratings.csv:3: column 'r1': rating 7 is outside the scale [1, 5]",
    );
}

#[test]
fn thresholds_function_without_baseline_rows_is_named() {
    thresholds_fails_with(
        "function_id,source,similarity,text,text.1\n1,baseline,3,a b,a b\n2,reference,2,c,d\n",
        &[],
        "function 2 has no rows with source = baseline",
    );
}

#[test]
fn thresholds_non_numeric_metric_column_names_its_line() {
    thresholds_fails_with(
        "id,reference,candidate,r1,m\na,x y,x y,4,0.5\nb,x y,z,1,high\n",
        &["--rating", "r1", "--column", "m"],
        "ratings.csv:3: column 'm': 'high' is not a number",
    );
}

#[test]
fn thresholds_single_class_is_an_error() {
    thresholds_fails_with(
        "id,reference,candidate,r1\na,x y,x y,4\nb,x y,z,5\n",
        &["--rating", "r1", "--metric", "bleu1"],
        "metric 'bleu1': every item has the same label",
    );
}

#[test]
fn calibrate_reads_its_threshold_from_a_thresholds_file() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "in.csv",
        "confidence,sim\n0.9,0.95\n0.8,0.90\n0.3,0.70\n0.2,0.60\n0.6,0.85\n",
    );
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("thresholds/sbert-minilm.toml");
    let out = codecal(
        &[
            "calibrate",
            "in.csv",
            "--score",
            "sim",
            "--thresholds",
            file.to_str().unwrap(),
            "--operating-point",
            "high-recall",
            "--score-metric",
            "sbert_cosine01",
            "--method",
            "none",
            "--bootstrap",
            "0",
            "--json",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("high-recall of"), "{}", stderr(&out));
    // Without saying what "sim" holds, a file for sbert_cosine01 is refused,
    // and so is a threshold of NaN.
    let refused = codecal(
        &[
            "calibrate",
            "in.csv",
            "--score",
            "sim",
            "--thresholds",
            file.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("derived for metric \"sbert_cosine01\"")
            && stderr(&refused).contains("--score-metric"),
        "{}",
        stderr(&refused)
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let nan = dir.path().join("nan.toml");
    std::fs::write(
        &nan,
        text.replacen("threshold = 0.887591", "threshold = nan", 1),
    )
    .unwrap();
    let refused = codecal(
        &[
            "calibrate",
            "in.csv",
            "--score",
            "sim",
            "--score-metric",
            "sbert_cosine01",
            "--thresholds",
            nan.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("nan"), "{}", stderr(&refused));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The committed high-recall threshold (0.81..0.82) puts 3 of the 5 scores above it.
    assert_eq!(json["raw"]["base_rate"], 0.6);
}

#[test]
fn score_without_a_threshold_is_named() {
    fails_with(
        "confidence,sim\n0.5,0.9\n",
        &["--score", "sim"],
        "--score needs --threshold or --thresholds",
    );
}

fn codexglue_line(url: &str, repo: &str, code: &str, doc: &str) -> String {
    serde_json::json!({
        "repo": repo, "path": "A.java", "func_name": "A.f", "language": "java", "code": code,
        "docstring": doc, "docstring_tokens": doc.split(' ').collect::<Vec<_>>(), "url": url,
    })
    .to_string()
}

#[test]
fn retrieve_writes_exemplars_and_a_prompt_per_query() {
    let dir = tempfile::tempdir().unwrap();
    let pool = [
        codexglue_line(
            "u1",
            "r1",
            "int size ( ) { return size ; }",
            "Returns the size",
        ),
        codexglue_line(
            "u2",
            "r1",
            "int count ( ) { return size ; }",
            "Counts items",
        ),
        codexglue_line(
            "u3",
            "r2",
            "void clear ( ) { size = 0 ; }",
            "Clears the list",
        ),
        codexglue_line(
            "u4",
            "r2",
            "boolean isEmpty ( ) { return size == 0 ; }",
            "Tells if empty",
        ),
    ];
    write(dir.path(), "pool.jsonl", &(pool.join("\n") + "\n"));
    let run = |exclude: &str| {
        let out = codecal(
            &[
                "retrieve",
                "--pool",
                "pool.jsonl",
                "--queries",
                "pool.jsonl",
                "--k",
                "2",
                "--exclude",
                exclude,
                "--out",
                "r.jsonl",
            ],
            dir.path(),
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let text = std::fs::read_to_string(dir.path().join("r.jsonl")).unwrap();
        text.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .collect::<Vec<_>>()
    };
    let lines = run("self");
    assert_eq!(lines.len(), 4);
    for line in &lines {
        let ids: Vec<&str> = line["exemplars"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids.len(), 2);
        assert!(
            !ids.contains(&line["id"].as_str().unwrap()),
            "the query is never its own exemplar"
        );
    }
    assert_eq!(
        lines[0]["exemplars"][0]["id"], "u2",
        "count() shares the most with size()"
    );
    let prompt = lines[0]["prompt"].as_str().unwrap();
    assert!(prompt.ends_with("int size ( ) { return size ; }\nWrite down the original comment written by the developer.\nComment:"));
    assert!(prompt.contains("Comment: Counts items\n"));
    // same-repo: u1's only exemplars come from r2.
    let lines = run("same-repo");
    for exemplar in lines[0]["exemplars"].as_array().unwrap() {
        assert!(["u3", "u4"].contains(&exemplar["id"].as_str().unwrap()));
    }
}

#[test]
fn retrieve_strict_names_the_malformed_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = codexglue_line("u1", "r1", "int f ( ) { }", "Does f");
    write(dir.path(), "pool.jsonl", &format!("{good}\n{{broken\n"));
    let out = codecal(
        &[
            "retrieve",
            "--pool",
            "pool.jsonl",
            "--queries",
            "pool.jsonl",
            "--strict",
            "--out",
            "r.jsonl",
        ],
        dir.path(),
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("pool.jsonl:2: "), "{}", stderr(&out));
    assert!(!dir.path().join("r.jsonl").exists(), "no output on failure");
}

#[test]
fn retrieve_tantivy_mode_builds_and_reuses_its_index() {
    let dir = tempfile::tempdir().unwrap();
    let pool = [
        codexglue_line(
            "u1",
            "r1",
            "int getSize() { return size; }",
            "Returns the size",
        ),
        codexglue_line(
            "u2",
            "r1",
            "int size() { return size; }",
            "Returns the size too",
        ),
        codexglue_line(
            "u3",
            "r2",
            "int sizeOf(List list) { return list.size(); }",
            "Size of a list",
        ),
        codexglue_line("u4", "r2", "void clear() { items = null; }", "Clears"),
    ];
    write(dir.path(), "pool.jsonl", &(pool.join("\n") + "\n"));
    let args = [
        "retrieve",
        "--mode",
        "tantivy",
        "--index",
        "idx",
        "--pool",
        "pool.jsonl",
        "--queries",
        "pool.jsonl",
        "--k",
        "2",
        "--exclude",
        "same-repo",
        "--out",
        "r.jsonl",
    ];
    for _ in 0..2 {
        let out = codecal(&args, dir.path());
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert!(dir.path().join("idx/codecal-pool.txt").is_file());
    let text = std::fs::read_to_string(dir.path().join("r.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["id"], "u1");
    assert_eq!(
        first["exemplars"][0]["id"], "u3",
        "same repository excluded, sizeOf shares 'size'"
    );
}

/// Makes a FIFO at `path`.
fn fifo(path: &Path) {
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
}

/// A FIFO named like a source file is skipped with its reason, not read:
/// the read would block forever; and so is a source file over 8 MiB
/// (issue "hardening, third round").
#[test]
fn a_fifo_in_a_source_tree_is_skipped_not_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    write(
        &dir.path().join("src"),
        "mod.py",
        "def f(x):\n    \"\"\"Return x plus one, always.\"\"\"\n    return x + 1\n",
    );
    fifo(&dir.path().join("src/trap.py"));
    // A 9 MiB one-line file would hold the parser for minutes: skipped too.
    write(
        &dir.path().join("src"),
        "huge.py",
        &"x = 1; ".repeat((9 << 20) / 7),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args(["corpus", "mine", "src", "--out", "records.jsonl"])
        .current_dir(dir.path())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("corpus mine hung on a FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(dir.path().join("records.jsonl")).unwrap();
    assert_eq!(text.lines().count(), 1);
    assert!(stderr(&out).contains("FIFO"), "{}", stderr(&out));
    assert!(stderr(&out).contains("over 8 MiB"), "{}", stderr(&out));
}

#[test]
fn corpus_mine_and_sample_make_record_files_retrieve_reads() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/pkg")).unwrap();
    let mut source = String::new();
    for i in 0..6 {
        source += &format!(
            "def fn{i}(x):\n    \"\"\"Compute value number {i} from x.\"\"\"\n    y = x + {i}\n    return y\n\n"
        );
    }
    write(&dir.path().join("src/pkg"), "mod.py", &source);
    let out = codecal(
        &["corpus", "mine", "src", "--out", "records.jsonl"],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(dir.path().join("records.jsonl")).unwrap();
    assert_eq!(text.lines().count(), 6);
    assert!(text.contains("\"reference\":\"Compute value number 0 from x.\""));
    let out = codecal(
        &[
            "corpus",
            "sample",
            "records.jsonl",
            "--queries",
            "2",
            "--seed",
            "1",
            "--out-queries",
            "q.jsonl",
            "--out-pool",
            "p.jsonl",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = codecal(
        &[
            "retrieve",
            "--pool",
            "p.jsonl",
            "--queries",
            "q.jsonl",
            "--k",
            "2",
            "--out",
            "r.jsonl",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = std::fs::read_to_string(dir.path().join("r.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 2);
}

/// The directory's entries with their bytes, to show nothing was deleted or
/// changed.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut entries: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let bytes = std::fs::read(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    entries.sort();
    entries
}

/// An output that is an input (by path, symlink or hard link), or a device,
/// is refused before any work, and the directory is left as it was.
#[test]
fn outputs_never_overwrite_inputs_or_special_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "in.csv",
        "id,reference,candidate\n1,adds two numbers,adds numbers\n",
    );
    std::os::unix::fs::symlink(d.join("in.csv"), d.join("link.csv")).unwrap();
    write(d, "pool.jsonl", "{\"id\":\"a\"}\n");
    write(d, "prompts.jsonl", "{\"id\":\"a\",\"prompt\":\"x\"}\n");
    let before = snapshot(d);
    let cases: [&[&str]; 6] = [
        &["score", "in.csv", "--out", "in.csv"],
        &["score", "in.csv", "--out", "link.csv"],
        &[
            "corpus",
            "sample",
            "pool.jsonl",
            "--out-queries",
            "q.jsonl",
            "--out-pool",
            "pool.jsonl",
        ],
        &[
            "retrieve",
            "--pool",
            "pool.jsonl",
            "--queries",
            "in.csv",
            "--out",
            "pool.jsonl",
        ],
        &[
            "generate",
            "--prompts",
            "prompts.jsonl",
            "--out",
            "prompts.jsonl",
        ],
        &["score", "in.csv", "--out", "/dev/full"],
    ];
    for args in cases {
        let out = codecal(args, d);
        let err = stderr(&out);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(
            err.contains("refusing to overwrite an input") || err.contains("not a regular file"),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert_eq!(snapshot(d), before, "{args:?} changed the directory");
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::metadata("/dev/full")
            .unwrap()
            .file_type()
            .is_char_device()
    );
}

/// A run name is one path component, so `--fresh` can never delete runs_dir
/// itself or reach outside it.
#[test]
fn a_run_name_must_be_one_path_component() {
    for name in ["", ".", "..", "a/b", "/tmp"] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "keep.txt", "mine");
        let config = format!("name = {name:?}\nruns_dir = \".\"\n[[backends]]\nkind = \"local\"\n");
        write(dir.path(), "run.toml", &config);
        let before = snapshot(dir.path());
        let out = codecal(&["run", "--config", "run.toml", "--fresh"], dir.path());
        let err = stderr(&out);
        assert!(!out.status.success(), "{name:?} accepted");
        assert!(
            err.contains("name") && err.contains("one path component"),
            "{err}"
        );
        assert_eq!(snapshot(dir.path()), before, "{name:?}");
    }
}

/// `--fresh` deletes only what codecal's manifest proves is a run of this
/// name, and `--out` never writes into a foreign directory (issue
/// "hardening, third round": both deleted or wrote into user files).
#[test]
fn fresh_and_out_touch_only_codecal_runs() {
    let thresholds = std::fs::canonicalize("thresholds/sbert-minilm.toml").unwrap();
    let config = format!(
        "name = \"x\"\nruns_dir = \".\"\n[scoring]\nthresholds = {thresholds:?}\n\
         [[backends]]\nkind = \"local\"\n"
    );
    let cases: [(&str, &str, &[&str]); 3] = [
        (
            "a manifest.json of the user's own",
            "{\"mine\": true}",
            &["--fresh"],
        ),
        (
            "codecal's manifest of another run",
            r#"{"codecal_version":"0.1.0","config":{"name":"other"},"models":{},"stages":{}}"#,
            &["--fresh"],
        ),
        ("no manifest at all", "", &["--resume"]),
    ];
    for (case, manifest, flags) in cases {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "run.toml", &config);
        std::fs::create_dir(dir.path().join("x")).unwrap();
        write(&dir.path().join("x"), "thesis.tex", "mine");
        if !manifest.is_empty() {
            write(&dir.path().join("x"), "manifest.json", manifest);
        }
        let tree = |d: &Path| (snapshot(d), snapshot(&d.join("x")));
        let before = tree(dir.path());
        let mut args = vec!["run", "--config", "run.toml"];
        args.extend_from_slice(flags);
        let out = codecal(&args, dir.path());
        let err = stderr(&out);
        assert!(!out.status.success(), "{case}: accepted");
        assert!(
            err.contains("manifest.json") && err.trim().lines().count() == 1,
            "{case}: {err}"
        );
        assert_eq!(tree(dir.path()), before, "{case}");
    }
}

/// An extra request body goes to a server: on the local backend it is a
/// config error naming the key, before any stage.
#[test]
fn an_extra_body_on_the_local_backend_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let thresholds = std::fs::canonicalize("thresholds/sbert-minilm.toml").unwrap();
    let config = format!(
        "name = \"x\"\nruns_dir = \".\"\n[scoring]\nthresholds = {thresholds:?}\n\
         [[backends]]\nkind = \"local\"\nextra = {{ repeat_penalty = 1.0 }}\n"
    );
    write(dir.path(), "run.toml", &config);
    let before = snapshot(dir.path());
    let out = codecal(&["run", "--config", "run.toml"], dir.path());
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("backends[0].extra") && err.contains("openai"),
        "{err}"
    );
    assert_eq!(snapshot(dir.path()), before);
}

/// `--index DIR` never empties a directory codecal did not build.
#[test]
fn an_index_directory_that_is_not_codecals_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pool = [
        codexglue_line(
            "u1",
            "r1",
            "int getSize() { return size; }",
            "Returns the size",
        ),
        codexglue_line("u2", "r2", "void clear() { items = null; }", "Clears"),
    ];
    write(d, "pool.jsonl", &(pool.join("\n") + "\n"));
    write(d, "queries.jsonl", &(pool[..1].join("\n") + "\n"));
    std::fs::create_dir(d.join("mine")).unwrap();
    write(&d.join("mine"), "notes.txt", "precious");
    let out = codecal(
        &[
            "retrieve",
            "--mode",
            "tantivy",
            "--index",
            "mine",
            "--pool",
            "pool.jsonl",
            "--queries",
            "queries.jsonl",
            "--out",
            "out.jsonl",
        ],
        d,
    );
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("not a codecal index"), "{err}");
    assert_eq!(
        std::fs::read_to_string(d.join("mine/notes.txt")).unwrap(),
        "precious"
    );
    // The same command builds its index in a new directory.
    let out = codecal(
        &[
            "retrieve",
            "--mode",
            "tantivy",
            "--index",
            "fresh-index",
            "--pool",
            "pool.jsonl",
            "--queries",
            "queries.jsonl",
            "--out",
            "out.jsonl",
        ],
        d,
    );
    assert!(out.status.success(), "{}", stderr(&out));
}

/// `codecal ... | head -1`: a closed stdout ends the program quietly.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let rows: String = (0..20000)
        .map(|i| format!("{},{}\n", (i % 100) as f64 / 100.0, i % 2))
        .collect();
    write(dir.path(), "in.csv", &format!("confidence,correct\n{rows}"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args([
            "calibrate",
            "in.csv",
            "--bootstrap",
            "0",
            "--format",
            "csv",
            "--json",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "{err}"
    );
}

/// Numeric flags outside their documented range fail at parsing, naming the
/// flag, instead of "capacity overflow", a huge allocation, a silent switch
/// to no rescaling, or NaN labelling everything wrong.
#[test]
fn out_of_range_flags_are_refused_at_parsing() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "in.csv",
        "confidence,correct,score\n0.2,0,0.1\n0.8,1,0.9\n",
    );
    write(dir.path(), "ratings.csv", "id,rating,m\n1,1,0.1\n2,4,0.9\n");
    let generate = |flag: &'static str, value: &'static str| -> Vec<&'static str> {
        vec![
            "generate",
            "--prompts",
            "in.csv",
            "--out",
            "o.jsonl",
            "--backend",
            "openai",
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            flag,
            value,
        ]
    };
    let generate_cases = [
        generate("--concurrency", "0"),
        generate("--concurrency", "100000"),
        generate("--timeout", "0"),
        generate("--timeout", "NaN"),
        generate("--max-wait", "100000"),
        generate("--max-wait", "0"),
        generate("--max-retries", "1000"),
    ];
    let judge: &[&str] = &[
        "judge",
        "--dataset",
        "humaneval",
        "--answers",
        "in.csv",
        "--out",
        "v.jsonl",
        "--jobs",
        "100000",
    ];
    let mut extra: Vec<(&[&str], &str)> = generate_cases
        .iter()
        .map(|args| (args.as_slice(), args[args.len() - 2]))
        .collect();
    extra.push((judge, "--jobs"));
    let cases: [(&[&str], &str); 9] = [
        (&["calibrate", "in.csv", "--bins", "100000000000"], "--bins"),
        (&["calibrate", "in.csv", "--bins", "0"], "--bins"),
        (&["calibrate", "in.csv", "--folds", "1"], "--folds"),
        (&["calibrate", "in.csv", "--folds", "1000"], "--folds"),
        (
            &["calibrate", "in.csv", "--bootstrap", "1000000000"],
            "--bootstrap",
        ),
        (
            &[
                "calibrate",
                "in.csv",
                "--score",
                "score",
                "--threshold",
                "NaN",
            ],
            "--threshold",
        ),
        (
            &["thresholds", "--ratings", "ratings.csv", "--grid", "1e-12"],
            "--grid",
        ),
        (
            &[
                "thresholds",
                "--ratings",
                "ratings.csv",
                "--bootstrap",
                "1000000000",
            ],
            "--bootstrap",
        ),
        (&["score", "in.csv", "--threads", "10000"], "--threads"),
    ];
    for (args, flag) in cases.into_iter().chain(extra) {
        let out = codecal(args, dir.path());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let first = err.lines().next().unwrap_or("");
        assert!(
            first.starts_with("error: invalid value") && first.contains(flag),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"));
    }
}

/// Issue "hardening, second round": a full standard output ends the program
/// with one line naming the stream and exit status 1, not a panic.
#[test]
fn a_full_stdout_is_a_clear_error_not_a_panic() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
    let Ok(full) = full else {
        eprintln!("SKIPPED: this machine has no /dev/full");
        return;
    };
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/calibration_small.csv"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args([
            "calibrate",
            fixture,
            "--confidence",
            "confidence",
            "--correct",
            "correct",
        ])
        .stdout(full)
        .output()
        .unwrap();
    let stderr = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let last = stderr.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.starts_with("codecal: error: cannot write to standard output: "),
        "{stderr}"
    );
    // clap's own help goes through the same check.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args(["judge", "--help"])
        .stdout(full)
        .output()
        .unwrap();
    let message = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{message}");
    assert!(
        message.contains("cannot write to standard output"),
        "{message}"
    );
}

/// Issue "hardening, second round": tables, calibrators and run reports are
/// read only from regular files. A FIFO (which would block forever) and a
/// device (which never ends) are refused at once, naming the path.
#[test]
fn a_fifo_or_a_device_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("items.csv");
    let made = Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    for args in [
        vec!["calibrate", "items.csv"],
        vec!["apply", "--calibrator", "/dev/zero", "x.csv"],
        vec!["apply", "--calibrator", "items.csv", "x.csv"],
    ] {
        let started = std::time::Instant::now();
        let out = codecal(&args, dir.path());
        assert!(!out.status.success(), "{args:?}");
        let message = stderr(&out);
        assert_eq!(message.trim().lines().count(), 1, "{message}");
        assert!(
            message.contains("not a regular file")
                && (message.contains("items.csv") || message.contains("/dev/zero")),
            "{args:?}: {message}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }
}
