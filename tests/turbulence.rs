//! Turbulence judged in the sandbox through `codecal judge`: codecal's own
//! oracles pass their correct answers and catch their wrong ones on every
//! question, each of the paper's ten outcomes (its Table II) has an answer
//! that produces it, the paper's resource-exhaustion example is stopped,
//! and an upstream checkout is read, its collection errors included.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use codecal::sandbox::{IsolationChoice, Limits};

fn judge(extra: &[&str], data: &Path, answers: &Path, out: &Path) -> Vec<serde_json::Value> {
    let result = Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args(["judge", "--dataset", "turbulence", "--timeout-s", "30"])
        .args(extra)
        .arg("--data")
        .arg(data)
        .arg("--answers")
        .arg(answers)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    std::fs::read_to_string(out)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn ready() -> Option<PathBuf> {
    let data = common::shared_data("turbulence/neighbourhoods_seed1.jsonl")?;
    common::sandbox(Limits::default(), IsolationChoice::Auto)?;
    Some(data)
}

fn answers_file(dir: &Path, rows: &[(String, String)]) -> PathBuf {
    let path = dir.join("answers.jsonl");
    let lines: String = rows
        .iter()
        .map(|(id, answer)| serde_json::json!({"id": id, "answer": answer}).to_string() + "\n")
        .collect();
    std::fs::write(&path, lines).unwrap();
    path
}

/// Each oracle's correct and wrong answers to the first `per_question`
/// instances of every question (`turbulence/answers.py`).
fn oracle_answers(data: &Path, per_question: usize) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    let pairs = dir.path().join("pairs.jsonl");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("turbulence/answers.py");
    let made = Command::new(python())
        .arg(&script)
        .arg(data)
        .arg(&pairs)
        .args(["--per-question", &per_question.to_string()])
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    std::fs::read_to_string(&pairs)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn own_oracles_pass_their_correct_answers_and_catch_their_wrong_ones() {
    let Some(data) = ready() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut rows = Vec::new();
    let mut unavailable = Vec::new();
    for row in oracle_answers(&data, 2) {
        if let Some(why) = row["unavailable"].as_str() {
            unavailable.push(format!("Q{}: {why}", row["question"]));
            continue;
        }
        let id = format!("Q{}/{}/1", row["question"], row["instance"]);
        rows.push((id.clone(), row["correct"].as_str().unwrap().to_owned()));
        rows.push((id, row["wrong"].as_str().unwrap().to_owned()));
    }
    if !unavailable.is_empty() {
        assert!(
            std::env::var_os("CODECAL_REQUIRE_SANDBOX").is_none(),
            "oracles that cannot load, where the set-up should have installed numpy: {unavailable:?}"
        );
        eprintln!("SKIPPED (until `codecal setup` installs numpy): {unavailable:?}");
    }
    assert_eq!(rows.len() + 2 * unavailable.len(), 60 * 2 * 2);
    let answers = answers_file(dir.path(), &rows);
    let verdicts = judge(&[], &data, &answers, &dir.path().join("out.jsonl"));
    for (pair, (id, _)) in verdicts.chunks(2).zip(rows.chunks(2).map(|c| &c[0])) {
        let (right, wrong) = (&pair[0], &pair[1]);
        assert_eq!(
            right["reason"], "passed",
            "{id}: the correct answer: {right}"
        );
        // A wrong answer may also raise on an input it mishandles (an index
        // past the end): the first failing input decides.
        assert!(
            wrong["reason"] == "fuzzing-failure" || wrong["reason"] == "runtime-error",
            "{id}: the wrong answer: {wrong}"
        );
        assert!(
            wrong["detail"].as_str().unwrap().starts_with("input "),
            "{id}: the first counterexample is kept: {wrong}"
        );
    }
}

/// Q1 instance 1 asks for elements 14 to 64 of a list.
const Q1_RIGHT: &str = "def all_ints_inclusive(lst):\n    return lst[14:65]\n";

#[test]
fn each_of_the_ten_outcomes_has_an_answer_that_produces_it() {
    let Some(data) = ready() else { return };
    let answers = [
        ("passed", Q1_RIGHT.to_owned()),
        (
            "no-function-found",
            "print('all_ints_inclusive')\n".to_owned(),
        ),
        (
            "wrong-function-name",
            "def slice_it(lst):\n    return lst[14:65]\n".to_owned(),
        ),
        (
            "wrong-argument-count",
            "def all_ints_inclusive(lst, i, j):\n    return lst[i:j + 1]\n".to_owned(),
        ),
        (
            "syntax-error",
            "def all_ints_inclusive(lst):\n    return lst[14:65\n".to_owned(),
        ),
        (
            "static-type-error",
            "def all_ints_inclusive(lst):\n    return list(islice(lst, 14, 65))\n".to_owned(),
        ),
        // The paper's example: every 27-element combination of 54 items.
        (
            "resource-exhaustion",
            "import itertools\ndef all_ints_inclusive(lst):\n    return [c for c in \
             itertools.combinations(range(54), 27)]\n"
                .to_owned(),
        ),
        (
            "runtime-error",
            "def all_ints_inclusive(lst):\n    return lst[14:65] + None\n".to_owned(),
        ),
        (
            "fuzzing-failure",
            "def all_ints_inclusive(lst):\n    return lst[14:64]\n".to_owned(),
        ),
        // Past the sandbox's 2 GiB of address space: a MemoryError.
        (
            "resource-exhaustion",
            "def all_ints_inclusive(lst):\n    return [0] * (10 ** 10)\n".to_owned(),
        ),
        // The harness's order: parsing comes before the function's name
        // (issue "fidelity, third pass", item 7).
        (
            "syntax-error",
            "def slice_it(lst):\n    return lst[14:65\n".to_owned(),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<(String, String)> = answers
        .iter()
        .map(|(_, answer)| ("Q1/1/1".to_owned(), answer.clone()))
        .collect();
    let file = answers_file(dir.path(), &rows);
    let verdicts = judge(&[], &data, &file, &dir.path().join("out.jsonl"));
    for ((expected, _), verdict) in answers.iter().zip(&verdicts) {
        assert_eq!(verdict["reason"], *expected, "{verdict}");
    }
    assert_eq!(verdicts.len(), answers.len());
    assert!(
        verdicts[7]["detail"]
            .as_str()
            .unwrap()
            .contains("TypeError")
    );
    assert!(
        verdicts[9]["detail"]
            .as_str()
            .unwrap()
            .contains("MemoryError")
    );
    // The assertion-error outcome comes from fixed tests: the upstream fixture.
    let upstream = fixture();
    let verdicts = judge(
        &["--oracles", upstream.to_str().unwrap()],
        &data,
        &answers_file(dir.path(), &rows[8..9]),
        &dir.path().join("out2.jsonl"),
    );
    assert_eq!(verdicts[0]["reason"], "failed-test", "{}", verdicts[0]);
}

/// The verdict's reason is `reason` and its detail holds `detail`.
fn expect(verdict: &serde_json::Value, reason: &str, detail: &str) {
    assert_eq!(verdict["reason"], reason, "{verdict}");
    let text = verdict["detail"].as_str().unwrap();
    assert!(text.contains(detail), "{detail:?} not in {verdict}");
}

/// Whether the sandbox's Python has Pylint, installed on first use as the
/// judge does; where it cannot be, the tests of the Pylint check say why
/// they skip, and fail under CODECAL_REQUIRE_SANDBOX.
fn pylint_installed() -> bool {
    let why = match codecal::sandbox::ensure_pylint() {
        Ok(_) => return true,
        Err(codecal::sandbox::InstallError::OtherPylint { .. }) => return true,
        Err(why) => why,
    };
    assert!(
        std::env::var_os("CODECAL_REQUIRE_SANDBOX").is_none(),
        "no Pylint in /usr/bin/python3 and it cannot be installed: {why}"
    );
    eprintln!("SKIPPED: no Pylint in /usr/bin/python3: {why}");
    false
}

/// Seed 002 §V names four kinds of static type error that Pylint found:
/// an undefined name, `sum = sum(multiples)`, an unexpected keyword to a
/// numpy function (`numpy.arange(..., axis=0)`), and calling a non-callable
/// (`s.size()` on an array).
#[test]
fn pylint_finds_the_papers_static_type_errors_and_symtable_only_one() {
    let Some(data) = ready() else { return };
    if !pylint_installed() {
        return;
    }
    let numpy = imports_numpy();
    let answers = [
        "def all_ints_inclusive(lst):\n    return list(islice(lst, 14, 65))\n",
        "def all_ints_inclusive(lst):\n    sum = sum(lst)\n    return lst[14:65]\n",
        "import numpy as np\ndef all_ints_inclusive(lst):\n    return np.array(lst[14:65], axis=0).tolist()\n",
        "import numpy as np\ndef all_ints_inclusive(lst):\n    s = np.array(lst)\n    if not s.size():\n        return []\n    return lst[14:65]\n",
        // The paper's own example: astroid has no model of numpy.arange,
        // so it is judge.py's checker of numpy's documented signatures
        // (E9501) that catches it, inside Pylint's run.
        "import numpy as np\ndef all_ints_inclusive(lst):\n    return list(np.arange(0, 3, axis=0))\n",
    ];
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<(String, String)> = answers
        .iter()
        .map(|answer| ("Q1/1/1".to_owned(), (*answer).to_owned()))
        .collect();
    let file = answers_file(dir.path(), &rows);
    let verdicts = judge(&[], &data, &file, &dir.path().join("pylint.jsonl"));
    let codes = ["E0602", "E0601", "E1123", "E1102", "E9501"];
    assert_eq!(verdicts.len(), codes.len());
    for ((verdict, code), answer) in verdicts.iter().zip(codes).zip(answers) {
        assert_eq!(verdict["reason"], "static-type-error", "{verdict}");
        let detail = verdict["detail"].as_str().unwrap();
        assert!(detail.starts_with("Pylint "), "{verdict}");
        // Without numpy, Pylint reports the import (E0401) instead.
        if numpy || !answer.contains("numpy") {
            assert!(detail.contains(code), "{code}: {verdict}");
        }
    }
    // The fallback finds the undefined name only, and says it is the fallback.
    let verdicts = judge(
        &["--static-check", "symtable"],
        &data,
        &file,
        &dir.path().join("symtable.jsonl"),
    );
    expect(&verdicts[0], "static-type-error", "symtable fallback");
    assert_eq!(verdicts[1]["reason"], "runtime-error", "{}", verdicts[1]);
    assert!(
        verdicts[1..]
            .iter()
            .all(|verdict| verdict["reason"] != "static-type-error"),
        "{verdicts:?}"
    );
}

/// The harness's limit is 7 s per answer, not per call: an answer that
/// takes 80 ms per call passes each call but not the 100 fuzz inputs.
#[test]
fn the_answer_has_seven_seconds_in_all() {
    let Some(data) = ready() else { return };
    let dir = tempfile::tempdir().unwrap();
    let slow =
        "import time\ndef all_ints_inclusive(lst):\n    time.sleep(0.08)\n    return lst[14:65]\n";
    let file = answers_file(dir.path(), &[("Q1/1/1".into(), slow.into())]);
    let symtable = ["--static-check", "symtable"];
    let verdicts = judge(&symtable, &data, &file, &dir.path().join("a.jsonl"));
    expect(&verdicts[0], "resource-exhaustion", "ran past its 7 s");
    let mut longer = symtable.to_vec();
    longer.extend(["--answer-seconds", "30"]);
    let verdicts = judge(&longer, &data, &file, &dir.path().join("b.jsonl"));
    assert_eq!(verdicts[0]["reason"], "passed", "{}", verdicts[0]);
}

/// Inputs on which the model solution fails are left out; an answer
/// compared on fewer than half of the fuzz inputs is unavailable.
#[test]
fn an_answer_compared_on_too_few_inputs_is_unavailable() {
    let Some(data) = ready() else { return };
    let dir = tempfile::tempdir().unwrap();
    let checkout = dir.path().join("Source_Code");
    for question in ["Q1", "Q2"] {
        std::fs::create_dir_all(checkout.join(question)).unwrap();
        for file in std::fs::read_dir(fixture().join(question)).unwrap() {
            let file = file.unwrap().path();
            let to = checkout.join(question).join(file.file_name().unwrap());
            std::fs::copy(&file, to).unwrap();
        }
    }
    let answers = answers_file(dir.path(), &[("Q1/1/1".into(), Q1_RIGHT.into())]);
    let oracles = checkout.to_str().unwrap();
    let args = ["--oracles", oracles, "--static-check", "symtable"];
    let solution = checkout.join("Q1/solution.py.template");
    // The solution fails on about 1 input in 50 (skipped, the answer passes),
    // then on about 3 in 4 (too few left).
    for (refuses, expected) in [("lst[0] == 50", "passed"), ("lst[0] % 4", "unavailable")] {
        std::fs::write(
            &solution,
            format!(
                "def all_ints_inclusive(lst):\n    if {refuses}:\n        raise ValueError\n    \
                 return lst[$0:$1 + 1]\n"
            ),
        )
        .unwrap();
        let verdicts = judge(&args, &data, &answers, &dir.path().join("out.jsonl"));
        assert_eq!(verdicts[0]["reason"], expected, "{}", verdicts[0]);
        let detail = verdicts[0]["detail"].as_str().unwrap();
        assert!(
            detail.contains("skipped") || detail.contains("fewer than the 50 needed"),
            "{detail}"
        );
    }
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/turbulence-upstream")
}

#[test]
fn an_upstream_checkout_is_judged_and_a_test_file_that_does_not_compile_passes() {
    let Some(data) = ready() else { return };
    let dir = tempfile::tempdir().unwrap();
    // Q2 instance 1: elements strictly between indices 11 and 41 (params [11, 41]).
    let q2_params = std::fs::read_to_string(&data)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|row| row["question"] == 2 && row["instance"] == 1)
        .unwrap()["params"]
        .clone();
    let (i, j) = (
        q2_params[0].as_i64().unwrap(),
        q2_params[1].as_i64().unwrap(),
    );
    let q2_right = format!(
        "def all_ints_exclusive(lst):\n    return lst[{}:{j}]\n",
        i + 1
    );
    let q2_wrong = format!("def all_ints_exclusive(lst):\n    return lst[{i}:{j}]\n");
    let rows = vec![
        ("Q1/1/1".to_owned(), Q1_RIGHT.to_owned()),
        ("Q2/1/1".to_owned(), q2_right),
        ("Q2/1/1".to_owned(), q2_wrong),
    ];
    let answers = answers_file(dir.path(), &rows);
    let oracles = ["--oracles", fixture().to_str().unwrap()].map(String::from);
    let args: Vec<&str> = oracles.iter().map(String::as_str).collect();
    let verdicts = judge(&args, &data, &answers, &dir.path().join("a.jsonl"));
    assert_eq!(verdicts[0]["reason"], "passed", "{}", verdicts[0]);
    assert_eq!(verdicts[1]["reason"], "passed", "{}", verdicts[1]);
    assert!(
        verdicts[1]["detail"]
            .as_str()
            .unwrap()
            .contains("judged by fuzzing alone"),
        "{}",
        verdicts[1]
    );
    assert_eq!(verdicts[2]["reason"], "fuzzing-failure", "{}", verdicts[2]);
    let mut strict = args.clone();
    strict.push("--collection-errors-fail");
    let verdicts = judge(&strict, &data, &answers, &dir.path().join("b.jsonl"));
    assert_eq!(verdicts[0]["reason"], "passed");
    assert_eq!(verdicts[1]["reason"], "failed-test", "{}", verdicts[1]);
}

#[test]
fn a_checkout_that_is_not_there_is_refused_naming_it() {
    let Some(data) = common::shared_data("turbulence/neighbourhoods_seed1.jsonl") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let answers = answers_file(dir.path(), &[("Q1/1/1".into(), Q1_RIGHT.into())]);
    let out = Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args([
            "judge",
            "--dataset",
            "turbulence",
            "--oracles",
            "/no/such/Source_Code",
        ])
        .arg("--data")
        .arg(&data)
        .arg("--answers")
        .arg(&answers)
        .arg("--out")
        .arg(dir.path().join("out.jsonl"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("/no/such/Source_Code"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

/// Whether the canned answer to (question, instance, round) is right: Q1
/// always (perfect success), Q2 never (perfect failure), Q3 all but
/// instance 1, which fails every round (consistent failure), Q4 all but one
/// round per instance (random failure).
fn designed_right(question: u64, instance: u64, round: u64) -> bool {
    match question {
        1 => true,
        2 => false,
        3 => instance != 1,
        _ => round != instance % 3 + 1,
    }
}

fn csv(run: &Path, table: &str) -> Vec<Vec<String>> {
    common::csv_rows(&run.join(format!("tables/{table}.csv")))
}

#[test]
fn a_turbulence_run_on_loopback_writes_every_table_and_the_classes() {
    use common::server::{Server, completion, json};
    use std::collections::HashMap;
    let Some(data) = ready() else { return };
    let dir = tempfile::tempdir().unwrap();
    // The prompt codecal sends for each instance, to the instance and its answers.
    let prompts: HashMap<String, (u64, u64)> = std::fs::read_to_string(&data)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|row| {
            row["question"].as_u64().unwrap() <= 4 && row["instance"].as_u64().unwrap() <= 3
        })
        .map(|row| {
            let prompt = codecal::task::turbulence::prompt(row["prompt"].as_str().unwrap());
            (
                prompt,
                (
                    row["question"].as_u64().unwrap(),
                    row["instance"].as_u64().unwrap(),
                ),
            )
        })
        .collect();
    let answers: HashMap<(u64, u64), (String, String)> = oracle_answers(&data, 3)
        .into_iter()
        .filter(|row| row["correct"].is_string())
        .map(|row| {
            let key = (
                row["question"].as_u64().unwrap(),
                row["instance"].as_u64().unwrap(),
            );
            let code = |kind: &str| row[kind].as_str().unwrap().to_owned();
            (key, (code("correct"), code("wrong")))
        })
        .collect();
    let server = Server::start(move |seen, _| {
        let prompt = seen.body["prompt"].as_str().unwrap_or("");
        let Some(&(question, instance)) = prompts.get(prompt) else {
            // The reflective questions: "True" with a middling probability.
            return json(200, &completion(&[("True", 0.6)]));
        };
        let round = seen.body["seed"].as_u64().unwrap() + 1;
        let (right, wrong) = &answers[&(question, instance)];
        let correct = designed_right(question, instance, round);
        let code = if correct { right } else { wrong };
        // Q3's blocked instance is answered with high confidence: a blind spot.
        let p = if correct || question == 3 { 0.9 } else { 0.3 };
        let text = format!("Here it is:\n```python\n{code}```\nDone.");
        json(200, &completion(&[(&text, p)]))
    });
    let config = dir.path().join("turbulence.toml");
    std::fs::write(
        &config,
        format!(
            r#"name = "turbulence"
runs_dir = "{runs}"
task = "turbulence"

[dataset]
path = "{data}"
questions = [1, 2, 3, 4]
instances = 3
rounds = 3
fuzz = 50
timeout_s = 30

[[backends]]
kind = "openai"
base_url = "{url}"
model = "test-model"
concurrency = 2
retry_base_ms = 10

[generation]
reflective = ["ask-true"]

[calibration]
confidence = ["average_token_probability", "total_probability"]
cv = "group"
folds = 4
bootstrap = 20
"#,
            runs = dir.path().join("runs").display(),
            data = data.display(),
            url = server.base_url,
        ),
    )
    .unwrap();
    let out = common::codecal(&["run", "--config", config.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = dir.path().join("runs/turbulence");
    let verdicts: Vec<serde_json::Value> =
        std::fs::read_to_string(run.join("verdicts/openai-test-model.jsonl"))
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
    assert_eq!(verdicts.len(), 4 * 3 * 3);
    for verdict in &verdicts {
        let id = verdict["id"].as_str().unwrap();
        let parts: Vec<u64> = id[1..].split('/').map(|p| p.parse().unwrap()).collect();
        let expected = designed_right(parts[0], parts[1], parts[2]);
        assert_eq!(verdict["correct"].as_bool(), Some(expected), "{verdict}");
    }
    let classes = csv(&run, "turbulence_classes");
    assert_eq!(classes, [["openai-test-model", "1", "1", "1", "1"]]);
    let corrsc = csv(&run, "turbulence_corrsc");
    let score = |q: &str| corrsc.iter().find(|r| r[1] == q).unwrap()[4].clone();
    assert_eq!(
        (score("Q1"), score("Q2"), score("Q3"), score("Q4")),
        (
            "1.000".into(),
            "0.000".into(),
            "0.667".into(),
            "0.667".into()
        )
    );
    let histogram = csv(&run, "turbulence_histogram");
    assert_eq!(histogram[0][1], "1", "one question at 0: {histogram:?}");
    assert_eq!(histogram[0][12], "1", "one question at 1: {histogram:?}");
    assert_eq!(
        histogram[0][8], "2",
        "two questions in [0.6, 0.7): {histogram:?}"
    );
    let correct = verdicts.iter().filter(|v| v["correct"] == true).count();
    let table1 = csv(&run, "turbulence_table1");
    let mean = correct as f64 / verdicts.len() as f64;
    assert!(
        table1[0][3].starts_with(&format!("{mean:.3} ± ")),
        "{table1:?}"
    );
    let table2 = csv(&run, "turbulence_table2");
    assert_eq!(table2[0][10], correct.to_string(), "passed: {table2:?}");
    let failed: usize = table2[0][1..10]
        .iter()
        .map(|n| n.parse::<usize>().unwrap())
        .sum();
    assert_eq!(failed, verdicts.len() - correct, "{table2:?}");
    let discontinuity = csv(&run, "turbulence_discontinuity");
    assert_eq!(discontinuity.len(), 1, "{discontinuity:?}");
    assert_eq!(
        (discontinuity[0][1].as_str(), discontinuity[0][2].as_str()),
        ("Q3", "1")
    );
    assert!(
        discontinuity[0][6].starts_with("Q3/1/"),
        "{discontinuity:?}"
    );
    // Every answer of Q3's blocked instance came with p = 0.9, which the
    // other questions' answers (one question per fold) teach is right.
    let blind = csv(&run, "turbulence_blind_spots");
    let spots = blind
        .iter()
        .find(|r| r[1] == "average_token_probability")
        .unwrap();
    assert_eq!(spots[2], "out-of-fold", "{blind:?}");
    assert_eq!(spots[4], "3", "{blind:?}");
    assert_eq!(spots[5], "Q3/1/1 Q3/1/2 Q3/1/3", "{blind:?}");
    let neighbourhoods = csv(&run, "turbulence_neighbourhoods");
    assert!(neighbourhoods.iter().any(|r| r[1] == "self-consistency"));
    assert_eq!(
        neighbourhoods
            .iter()
            .filter(|r| r[1] == "average_token_probability")
            .count(),
        4
    );
    assert_eq!(
        csv(&run, "turbulence_worst").len(),
        neighbourhoods.len() / 4
    );
    // Self-consistency is calibrated like the other measures.
    let table5 = csv(&run, "table5");
    assert!(
        table5.iter().any(|r| r[1] == "self-consistency"),
        "{table5:?}"
    );
}

/// The interpreter the sandbox uses where it exists (its numpy serves Q57, Q58).
fn python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

fn imports_numpy() -> bool {
    Command::new(python())
        .args(["-c", "import numpy"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn another_parameter_seed_gives_valid_neighbourhoods_that_judge() {
    let Some(data) = ready() else { return };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("turbulence/instances.py");
    let data_dir = data.parent().unwrap();
    // The question templates instantiate to the published prompts exactly.
    let check = Command::new(python())
        .arg(&script)
        .args(["--check-published", "--data"])
        .arg(data_dir)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    // Drawing new instances runs every question's oracle, and Q57's and
    // Q58's import numpy, which `codecal setup` installs for this python.
    if !imports_numpy() {
        assert!(
            std::env::var_os("CODECAL_REQUIRE_SANDBOX").is_none(),
            "{} cannot import numpy, which the set-up should have installed",
            python()
        );
        eprintln!(
            "SKIPPED new neighbourhoods (until `codecal setup` installs numpy for {})",
            python()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let make = |out: &Path| {
        let made = Command::new(python())
            .arg(&script)
            .args(["--seed", "7", "--data"])
            .arg(data_dir)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap();
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
        std::fs::read_to_string(out).unwrap()
    };
    let (first, second) = (
        make(&dir.path().join("a.jsonl")),
        make(&dir.path().join("b.jsonl")),
    );
    assert_eq!(first, second, "the same seed gives the same instances");
    let instances = codecal::task::turbulence::read_instances(&dir.path().join("a.jsonl")).unwrap();
    assert_eq!(instances.len(), 6000);
    let published = codecal::task::turbulence::read_instances(&data).unwrap();
    assert_ne!(
        instances[..100],
        published[..100],
        "another seed, other valuations"
    );
    // Q1's hand-picked rows (`0 1`, `200 200`) are in its neighbourhood.
    let q1: Vec<&serde_json::Value> = instances
        .iter()
        .filter(|i| i.question == 1)
        .flat_map(|i| &i.params)
        .collect();
    assert_eq!(q1.len(), 200);
    let rows: Vec<String> = instances
        .iter()
        .filter(|i| i.question == 1)
        .map(|i| serde_json::to_string(&i.params).unwrap())
        .collect();
    assert!(rows.contains(&"[0,1]".to_owned()) && rows.contains(&"[200,200]".to_owned()));
    // Its first instance judges like any other: the exact slice passes.
    let first_q1 = instances
        .iter()
        .find(|i| i.question == 1 && i.instance == 1)
        .unwrap();
    let (i, j) = (
        first_q1.params[0].as_i64().unwrap(),
        first_q1.params[1].as_i64().unwrap(),
    );
    let answer = format!(
        "def all_ints_inclusive(lst):\n    return lst[{i}:{}]\n",
        j + 1
    );
    let answers = answers_file(dir.path(), &[("Q1/1/1".into(), answer)]);
    let verdicts = judge(
        &[],
        &dir.path().join("a.jsonl"),
        &answers,
        &dir.path().join("v.jsonl"),
    );
    assert_eq!(verdicts[0]["reason"], "passed", "{}", verdicts[0]);
}
