//! `codecal run` on tasks judged by running code: CRUXEval output
//! prediction and HumanEval synthesis, with a loopback HTTP backend whose
//! answers are right or wrong by design, so that the verdicts, the seed
//! tables and the confidence-correctness link can be checked.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::server::{Server, completion, json};

fn write_config(dir: &Path, server: &Server, task: &str, dataset: &str) -> PathBuf {
    let text = format!(
        r#"name = "{task}"
runs_dir = "{runs}"
task = "{task}"

[dataset]
{dataset}
problems = 60
seed = 3

[[backends]]
kind = "openai"
base_url = "{url}"
model = "test-model"
concurrency = 2
retry_base_ms = 10

[calibration]
confidence = ["average_token_probability", "total_probability", "length_baseline"]
cv = "group"
folds = 3
bootstrap = 50
"#,
        runs = dir.join("runs").display(),
        url = server.base_url,
    );
    let path = dir.join(format!("{task}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// Writes a CRUXEval-O config over `server` with `generation` appended, runs
/// it, and returns the run directory (inside `dir`).
fn run_cruxeval(dir: &Path, server: &Server, data: &Path, generation: &str) -> PathBuf {
    let dataset = format!("path = \"{}\"", data.display());
    let config = write_config(dir, server, "cruxeval-output", &dataset);
    let mut text = std::fs::read_to_string(&config).unwrap();
    text += generation;
    std::fs::write(&config, text).unwrap();
    let out = common::codecal(&["run", "--config", config.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join("runs/cruxeval-output")
}

fn jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Whether the designed answer to a prompt is the right one: two in three.
fn answers_right(prompt: &str) -> bool {
    common::cruxeval_answers_right(prompt)
}

#[test]
fn a_cruxeval_run_judges_answers_and_writes_the_seed_tables() {
    let (Some(data), Some(_)) = (
        common::shared_data("cruxeval/cruxeval.jsonl"),
        common::sandbox(Default::default(), Default::default()),
    ) else {
        return;
    };
    let server = common::cruxeval_server(&data);
    let dir = tempfile::tempdir().unwrap();
    let generation = "\n[generation]\nreflective = [\"ask-true\"]\n";
    let run = run_cruxeval(dir.path(), &server, &data, generation);
    let config = dir.path().join("cruxeval-output.toml");
    let problems = jsonl(&run.join("problems.jsonl"));
    assert_eq!(problems.len(), 60);
    let label = "openai-test-model";
    let generations = jsonl(&run.join(format!("generations/{label}.jsonl")));
    let verdicts = jsonl(&run.join(format!("verdicts/{label}.jsonl")));
    assert_eq!(verdicts.len(), 60);
    for (problem, verdict) in problems.iter().zip(&verdicts) {
        let prompt = problem["prompt"].as_str().unwrap();
        assert_eq!(verdict["id"], problem["id"]);
        assert_eq!(
            verdict["correct"].as_bool(),
            Some(answers_right(prompt)),
            "{verdict}"
        );
    }
    assert_eq!(generations.len(), 60);
    // Each verdict records the tokens its answer spans (seed 000 measures
    // the answer, not the `[ANSWER]` wrapper), and they spell the answer.
    for (generation, verdict) in generations.iter().zip(&verdicts) {
        let span = verdict["answer_tokens"].as_array().expect("a token span");
        let (start, end) = (
            span[0].as_u64().unwrap() as usize,
            span[1].as_u64().unwrap() as usize,
        );
        let spelled: String = generation["tokens"].as_array().unwrap()[start..end]
            .iter()
            .map(|t| t["token"].as_str().unwrap())
            .collect();
        assert!(
            spelled.contains(verdict["answer"].as_str().unwrap()),
            "{spelled:?} {verdict}"
        );
    }

    // Seed 000's layout: each model's measures, then its unskilled row.
    let five = common::csv_rows(&run.join("tables/table5.csv"));
    assert_eq!(
        five.len(),
        6,
        "three token measures, Ask T/F twice, and the unskilled row: {five:?}"
    );
    assert_eq!(five[5][1], "unskilled", "{five:?}");
    let eight = common::csv_rows(&run.join("tables/table8.csv"));
    let row = |measure: &str| eight.iter().find(|r| r[1] == measure).unwrap().clone();
    let auc =
        |measure: &str| -> f64 { row(measure)[6].split(' ').next().unwrap().parse().unwrap() };
    assert_eq!(
        auc("average_token_probability"),
        1.0,
        "confidence was designed to separate"
    );
    // Seed 000, Table 8: the unskilled predictor has AUC 0.5.
    assert_eq!(row("unskilled")[6], "0.5");
    // Every measure covers every item: n is the same in each row. The
    // server's replies never say True or False, so Ask T/F has no value
    // for any item: seed 000 counts that as P(True) = 0, and says so.
    assert!(eight.iter().all(|r| r[2] == "60"), "{eight:?}");
    assert_eq!(row("ask-true")[4], "0", "{eight:?}");
    assert_eq!(row("ask-true")[5], "60", "every item sits at 0: {eight:?}");
    assert_eq!(row("average_token_probability")[4], "0");
    let six = common::csv_rows(&run.join("tables/table6.csv"));
    assert_eq!(six.last().unwrap()[1], "unskilled", "{six:?}");
    let oyster = common::csv_rows(&run.join("tables/oyster.csv"));
    assert_eq!(oyster.len(), 10, "{oyster:?}");
    assert!(oyster.iter().any(|r| r[2] == "platt-p"), "{oyster:?}");
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("Table 5 (seed 000)") && report.contains("Open the Oyster"));
    assert!(run.join("calibration/cruxevaloutput").exists());

    // report.html's lists show, per answer, the problem, the extracted answer,
    // the verdict's reason and the sandbox's message, from the run's files.
    let data: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("report.json")).unwrap()).unwrap();
    let first = &data["items"][0];
    let text = |label: &str| -> String {
        first["texts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["label"] == label)
            .unwrap_or_else(|| panic!("no {label}: {first}"))["text"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(text("problem"), problems[0]["prompt"].as_str().unwrap());
    assert_eq!(
        text("extracted answer"),
        verdicts[0]["answer"].as_str().unwrap()
    );
    assert!(text("verdict").contains(verdicts[0]["reason"].as_str().unwrap()));
    assert_eq!(
        text("sandbox message"),
        verdicts[0]["detail"].as_str().unwrap_or("")
    );
    let page = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(
        page.contains("Most confident and wrong") && page.contains("Least confident and right")
    );
    // The surest wrong answer of the first cell heads its list.
    let (measure, first_wrong) = {
        let cell = &data["cells"][0];
        let mut wrong: Vec<(f64, String)> = cell["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["correct"] == false)
            .map(|i| {
                let item = &data["items"][i["item"].as_u64().unwrap() as usize];
                (
                    i["raw"].as_f64().unwrap(),
                    item["id"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        wrong.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        (cell["key"][1].clone(), wrong[0].1.clone())
    };
    assert_eq!(measure, "average_token_probability");
    let wrong_list = page
        .split("table class=\"items sortable wrong\"")
        .nth(1)
        .unwrap();
    let wrong_list = wrong_list.split("</table>").next().unwrap();
    let first_row = wrong_list.split("<tr data-id=").nth(1).unwrap();
    assert!(
        first_row.starts_with(&format!("\"{first_wrong}\"")),
        "{first_wrong} heads the first cell's list: {first_row}"
    );
    // Each row shows the verdict and its reason beside the answer.
    assert!(wrong_list.contains("<th>verdict</th>"), "{wrong_list}");
    assert!(first_row.contains("<td>failed: "), "{first_row}");

    // Unchanged inputs: a second run asks the server nothing and judges nothing again.
    let asked = server.generation_requests();
    let again = common::codecal(&["run", "--config", config.to_str().unwrap(), "--resume"]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(server.generation_requests(), asked);
    let stages = String::from_utf8_lossy(&again.stderr);
    assert!(
        stages.contains("judge openai-test-model: unchanged, reused"),
        "{stages}"
    );
    assert_eq!(
        std::fs::read_to_string(run.join("report.md")).unwrap(),
        report
    );
}

#[test]
fn a_humaneval_run_executes_answers_in_the_sandbox() {
    let (Some(data), Some(_)) = (
        common::humaneval_file(),
        common::sandbox(Default::default(), Default::default()),
    ) else {
        return;
    };
    let solutions = canonical_solutions(&data);
    let server = Server::start(move |seen, _| {
        let prompt = seen.body["prompt"].as_str().unwrap_or("");
        let (answer, p) = if answers_right(prompt) {
            (solutions.get(prompt).cloned().unwrap_or_default(), 0.8)
        } else {
            ("    return None\n".to_owned(), 0.5)
        };
        json(200, &completion(&[(&answer, p)]))
    });
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &server, "synthesis", "name = \"humaneval\"");
    let out = common::codecal(&["run", "--config", config.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = dir.path().join("runs/synthesis");
    let problems = jsonl(&run.join("problems.jsonl"));
    let verdicts = jsonl(&run.join("verdicts/openai-test-model.jsonl"));
    assert_eq!(verdicts.len(), 60);
    let mut wrong_reasons = Vec::new();
    for (problem, verdict) in problems.iter().zip(&verdicts) {
        let right = answers_right(problem["prompt"].as_str().unwrap());
        assert_eq!(verdict["correct"].as_bool(), Some(right), "{verdict}");
        if !right {
            wrong_reasons.push(verdict["reason"].as_str().unwrap().to_owned());
        }
    }
    assert!(
        wrong_reasons
            .iter()
            .all(|r| r == "failed-test" || r == "runtime-error"),
        "{wrong_reasons:?}"
    );
}

/// Seed 000's MBPP layout (§3.2.1): the problems stage judges every
/// reference and leaves out the one that fails its own tests; each prompt is
/// the reference's context, its own signature and the task as a docstring,
/// with no test; the answer is the body that continues it.
#[test]
fn an_mbpp_docstring_run_leaves_out_failing_references_and_judges_bodies() {
    if common::sandbox(Default::default(), Default::default()).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let line = |id: u32, text: &str, code: &str, tests: &[&str]| {
        serde_json::json!({"task_id": id, "text": text, "code": code,
            "test_setup_code": "", "test_list": tests, "challenge_test_list": []})
        .to_string()
    };
    let data = dir.path().join("mbpp.jsonl");
    let lines = [
        line(
            1,
            "Write a function to add two numbers.",
            "def add(a, b):\r\n    return a + b",
            &["assert add(1, 2) == 3", "assert add(2, 2) == 4"],
        ),
        line(
            2,
            "Write a function to double a number.",
            "import math\r\ndef double (x):\r\n    return 2 * x",
            &["assert double(2) == 4", "assert double(0) == 0"],
        ),
        line(
            3,
            "Write a function to subtract.",
            "def sub(a, b):\r\n    return a + b",
            &["assert sub(3, 1) == 2", "assert sub(1, 1) == 0"],
        ),
    ];
    std::fs::write(&data, lines.join("\n")).unwrap();
    let server = Server::start(|seen, _| {
        let prompt = seen.body["prompt"].as_str().unwrap_or("");
        let answer = if prompt.contains("def add(") {
            "    return a + b\n"
        } else {
            "    return x\n"
        };
        json(200, &completion(&[(answer, 0.7)]))
    });
    let dataset = format!("name = \"mbpp-docstring\"\npath = \"{}\"", data.display());
    let config = write_config(dir.path(), &server, "synthesis", &dataset);
    let out = common::codecal(&["run", "--config", config.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("1 of 3 MBPP references fail their own tests"),
        "{stderr}"
    );
    let run = dir.path().join("runs/synthesis");
    let problems = jsonl(&run.join("problems.jsonl"));
    let mut prompts: Vec<&str> = problems
        .iter()
        .map(|p| p["prompt"].as_str().unwrap())
        .collect();
    prompts.sort();
    assert_eq!(
        prompts,
        [
            "def add(a, b):\n    \"\"\"Write a function to add two numbers.\n    \"\"\"\n",
            "import math\ndef double (x):\n    \"\"\"Write a function to double a number.\n    \"\"\"\n",
        ]
    );
    let verdicts = jsonl(&run.join("verdicts/openai-test-model.jsonl"));
    let by_id: HashMap<&str, &str> = verdicts
        .iter()
        .map(|v| (v["id"].as_str().unwrap(), v["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        by_id,
        HashMap::from([("mbpp/1", "passed"), ("mbpp/2", "failed-test")])
    );
}

/// Issue "confidence from agreement": a HumanEval run with `samples = 3`
/// keys every sampled answer by what it does in the sandbox. The designed
/// server samples the right answer every time where its main answer is
/// right, and three different wrong ones elsewhere, so agreement separates
/// the two perfectly; the learned combination is saved in its calibrator
/// and `codecal apply` uses it.
#[test]
fn a_humaneval_run_with_samples_measures_agreement_by_behaviour() {
    let (Some(data), Some(_)) = (
        common::humaneval_file(),
        common::sandbox(Default::default(), Default::default()),
    ) else {
        return;
    };
    let solutions = canonical_solutions(&data);
    let server = Server::start(move |seen, _| {
        let prompt = seen.body["prompt"].as_str().unwrap_or("");
        let sampled = seen.body["temperature"].as_f64().unwrap_or(0.0) > 0.0;
        let seed = seen.body["seed"].as_u64().unwrap_or(0) >> 32;
        let wrong = ["    return None\n", "    return 0\n", "    return []\n"];
        let answer = match (answers_right(prompt), sampled) {
            (true, _) => solutions.get(prompt).cloned().unwrap_or_default(),
            (false, false) => wrong[0].to_owned(),
            (false, true) => wrong[seed as usize % 3].to_owned(),
        };
        json(200, &completion(&[(&answer, 0.7)]))
    });
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &server, "synthesis", "name = \"humaneval\"");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text = text.replace(
        "[calibration]\n",
        "[generation]\nsamples = 3\n\n[calibration]\ncombine = [\"average_token_probability\", \"agreement\"]\n",
    );
    std::fs::write(&config, text).unwrap();
    let out = common::codecal(&["run", "--config", config.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = dir.path().join("runs/synthesis");
    let generations = jsonl(&run.join("generations/openai-test-model.jsonl"));
    assert!(
        generations
            .iter()
            .all(|g| g["samples"].as_array().unwrap().len() == 3)
    );
    let agreement = jsonl(&run.join("agreement/openai-test-model.jsonl"));
    let verdicts = jsonl(&run.join("verdicts/openai-test-model.jsonl"));
    assert_eq!(agreement.len(), 60);
    for (row, verdict) in agreement.iter().zip(&verdicts) {
        let confidence = &row["confidence"];
        if verdict["correct"] == true {
            assert_eq!(confidence["agreement"], 1.0, "{row}");
            assert_eq!(confidence["functional_entropy"], 1.0, "{row}");
            assert_eq!(row["clusters"], 1);
        } else {
            // Samples 1, 2, 3 answer None, [] and 0: one agrees with the
            // main answer (None), three clusters.
            assert_eq!(row["clusters"], 3, "{row}");
            assert!((confidence["agreement"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-12);
            assert_eq!(confidence["functional_entropy"], 0.0, "{row}");
        }
    }
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    let sources: Vec<&str> = report
        .lines()
        .skip_while(|l| !l.starts_with("## Confidence sources"))
        .filter(|l| l.starts_with("| openai-test-model |"))
        .collect();
    let agreement_row = sources
        .iter()
        .find(|l| l.contains("| agreement |"))
        .expect("agreement in the sources table");
    assert!(agreement_row.contains("| 1.000 "), "AUC 1: {agreement_row}");
    assert!(
        sources.iter().any(|l| l.contains("| combination |")),
        "{sources:?}"
    );
    let calibrator = run.join("calibrators/humaneval/openai-test-model/combination.json");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&calibrator).unwrap()).unwrap();
    assert_eq!(
        saved["combination"]["measures"],
        serde_json::json!(["average_token_probability", "agreement"])
    );
    let items = dir.path().join("items.jsonl");
    std::fs::write(
        &items,
        "{\"id\": \"a\", \"average_token_probability\": 0.7, \"agreement\": 1.0}\n\
         {\"id\": \"b\", \"average_token_probability\": 0.7, \"agreement\": 0.3}\n",
    )
    .unwrap();
    let applied = dir.path().join("applied.jsonl");
    let out = common::codecal(&[
        "apply",
        "--calibrator",
        calibrator.to_str().unwrap(),
        items.to_str().unwrap(),
        "--out",
        applied.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decided = jsonl(&applied);
    let (a, b) = (
        decided[0]["calibrated"].as_f64().unwrap(),
        decided[1]["calibrated"].as_f64().unwrap(),
    );
    assert!(
        a > b,
        "agreeing samples raise the combined confidence: {a} vs {b}"
    );
}

/// HumanEval's canonical solution for each prompt.
fn canonical_solutions(data: &Path) -> HashMap<String, String> {
    jsonl_gz(data)
        .iter()
        .map(|row| {
            (
                row["prompt"].as_str().unwrap().to_owned(),
                row["canonical_solution"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn jsonl_gz(path: &Path) -> Vec<serde_json::Value> {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn task_configs_with_bad_keys_are_refused_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(|_, _| json(200, &serde_json::json!({"data": []})));
    for (task, dataset, message) in [
        ("cruxeval-output", "", "dataset.path"),
        ("translation", "", "task"),
        ("synthesis", "name = \"cruxeval-input\"", "dataset.name"),
        (
            "cruxeval-input",
            "path = \"/nonexistent/cruxeval.jsonl\"",
            "dataset.path",
        ),
    ] {
        let config = write_config(dir.path(), &server, task, dataset);
        let out = common::codecal(&["run", "--config", config.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{task} {dataset} was accepted");
        assert!(stderr.contains(message), "{stderr:?} lacks {message:?}");
        assert!(!stderr.contains("panicked"));
    }
}

#[test]
fn every_shipped_config_passes_its_checks() {
    let configs = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut checked = 0;
    for entry in std::fs::read_dir(&configs).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let config = codecal::pipeline::RunConfig::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let needs_shared = config
            .corpus
            .paths
            .iter()
            .chain(&config.dataset.path)
            .any(|p| !p.exists());
        if needs_shared && common::shared_data("").is_none() {
            continue;
        }
        config
            .check()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        checked += 1;
    }
    assert!(checked >= 4, "only {checked} configs checked");
}

/// "Open the Oyster" (§3, step 1): the intrinsic reply gives the one answer
/// per question, which the oracle judges and all three strategies are
/// calibrated against: the reassess turn continues that conversation and
/// the reflective question judges that answer, not the main one (issue
/// "fidelity, third pass", item 1); the token measures keep the main answer
/// in a table of their own.
#[test]
fn oyster_intrinsic_confidence_is_judged_on_its_own_answer() {
    let (Some(data), Some(_)) = (
        common::shared_data("cruxeval/cruxeval.jsonl"),
        common::sandbox(Default::default(), Default::default()),
    ) else {
        return;
    };
    // Several functions share a call such as `f("")`: a problem is its code
    // and its call together.
    let problems: Vec<(String, String, String)> = jsonl(&data)
        .iter()
        .map(|row| {
            let call = format!("assert f({}) == ??", row["input"].as_str().unwrap());
            let field = |k: &str| row[k].as_str().unwrap().to_owned();
            (field("code"), call, field("output"))
        })
        .collect();
    let reassessed_intrinsic = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen_follow_ups = reassessed_intrinsic.clone();
    let reflected_intrinsic = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen_reflections = reflected_intrinsic.clone();
    let server = Server::start(move |seen, _| {
        let prompt = seen.body["prompt"].as_str().unwrap_or("");
        let right = problems
            .iter()
            .find(|(code, call, _)| {
                prompt.contains(code.as_str()) && prompt.contains(call.as_str())
            })
            .map(|(_, _, output)| output.clone())
            .unwrap_or_default();
        let text = if prompt.contains("Your answer may be wrong") {
            // The follow-up must continue the intrinsic turn, not the main one.
            if prompt.contains("Give your answer on one line") && prompt.contains("Confidence: 80%")
            {
                seen_follow_ups.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            " 40%".to_owned()
        } else if prompt.contains("How confident are you, from 0% to 100%, that the answer is") {
            // The reflective question must show the intrinsic answer.
            if prompt.contains(&format!("Answer: {right}\n")) {
                seen_reflections.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            " 70%".to_owned()
        } else if prompt.contains("Give your answer on one line") {
            // The intrinsic answer is always right.
            format!("{right}\nConfidence: 80%")
        } else {
            // The main answer is never right.
            "[ANSWER]'not the output'".to_owned()
        };
        json(200, &completion(&[(&text, 0.5)]))
    });
    let dir = tempfile::tempdir().unwrap();
    // Listed reassess first: the run still asks the intrinsic question first.
    let generation = "\n[generation]\nreflective = [\"oyster-reflective\", \"oyster-reassess\", \
                      \"oyster-intrinsic\"]\n";
    let run = run_cruxeval(dir.path(), &server, &data, generation);
    let verdicts = jsonl(&run.join("verdicts/openai-test-model.jsonl"));
    assert_eq!(verdicts.len(), 60);
    for verdict in &verdicts {
        assert_eq!(verdict["correct"], false, "{verdict}");
        assert_eq!(verdict["intrinsic"]["correct"], true, "{verdict}");
    }
    assert_eq!(
        reassessed_intrinsic.load(std::sync::atomic::Ordering::SeqCst),
        60,
        "every reassess question follows up the intrinsic turn"
    );
    assert_eq!(
        reflected_intrinsic.load(std::sync::atomic::Ordering::SeqCst),
        60,
        "every reflective question judges the intrinsic answer"
    );
    let eight = common::csv_rows(&run.join("tables/table8.csv"));
    let success = |measure: &str| {
        let row = eight.iter().find(|r| r[1] == measure).unwrap();
        row[3].split(' ').next().unwrap().to_owned()
    };
    assert_eq!(success("average_token_probability"), "0.000");
    assert_eq!(success("oyster-intrinsic"), "1.000");
    assert_eq!(success("oyster-reassess"), "1.000");
    assert_eq!(success("oyster-reflective"), "1.000");
    let measures = |file: &str| -> Vec<String> {
        common::csv_rows(&run.join(format!("tables/{file}.csv")))
            .into_iter()
            .map(|row| row[1].clone())
            .collect()
    };
    assert!(measures("oyster").iter().all(|m| m.starts_with("oyster-")));
    assert!(measures("oyster_main").contains(&"average_token_probability".to_owned()));
    // No main answer is right: the report says why its skill scores are
    // undefined instead of dividing by zero.
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        report.contains("all 60 items are incorrect: AUROC and skill score are undefined"),
        "{report}"
    );
}

/// Values that used to pass the config check and fail (or give an empty
/// report) only after the model had run are refused before any stage,
/// naming the key.
#[test]
fn out_of_range_numbers_are_refused_before_any_stage() {
    let Some(data) = common::shared_data("cruxeval/cruxeval.jsonl") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(|_, _| json(200, &serde_json::json!({"data": []})));
    let dataset = format!("path = \"{}\"", data.display());
    for (from, to, key) in [
        ("folds = 3", "folds = 1", "calibration.folds"),
        ("folds = 3", "folds = 1000", "calibration.folds"),
        (
            "bootstrap = 50",
            "bootstrap = 100000000",
            "calibration.bootstrap",
        ),
        ("folds = 3", "folds = 3\nbins = 0", "calibration.bins"),
        (
            "folds = 3",
            "folds = 3\nbins = 10000000000",
            "calibration.bins",
        ),
        (
            "confidence = [\"average_token_probability\", \"total_probability\", \"length_baseline\"]",
            "confidence = []",
            "calibration.confidence",
        ),
        (
            "problems = 60",
            "problems = 60\ntimeout_s = -5",
            "dataset.timeout_s",
        ),
        ("problems = 60", "problems = 0", "dataset.problems"),
        (
            "[calibration]",
            "[generation]\ntemperature = nan\n[calibration]",
            "generation.temperature",
        ),
        (
            "[calibration]",
            "[generation]\nmax_tokens = 0\n[calibration]",
            "generation.max_tokens",
        ),
        (
            "folds = 3",
            "folds = 3\ngroup_features = [\"complexity\"]",
            "calibration.group_features",
        ),
        (
            "folds = 3",
            "folds = 3\nmethod = \"multicalibration\"\ngroup_features = [\"colour\"]",
            "calibration.group_features",
        ),
        (
            "folds = 3",
            "folds = 3\nmethod = \"multicalibration\"",
            "calibration.group_features",
        ),
        (
            "folds = 3",
            "folds = 3\nmethod = \"multicalibration\"\nbase = \"none\"\ngroup_features = [\"complexity\"]",
            "calibration.base",
        ),
        (
            "bootstrap = 50",
            "bootstrap = 50\nmethod = \"multicalibration\"\ngroup_features = [\"complexity\"]\n[calibration.multicalibration]\nalpha = 2.0",
            "calibration.multicalibration",
        ),
    ] {
        let config = write_config(dir.path(), &server, "cruxeval-output", &dataset);
        let text = std::fs::read_to_string(&config).unwrap();
        assert!(text.contains(from), "{from}");
        std::fs::write(&config, text.replacen(from, to, 1)).unwrap();
        let out = common::codecal(&["run", "--config", config.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{to} was accepted");
        assert!(stderr.contains(key), "{to}: {stderr:?} lacks {key:?}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            !dir.path().join("runs/cruxeval-output").exists(),
            "{to} started a run"
        );
    }
}

/// A local backend naming a model codecal does not know is refused by the
/// config check, before any stage runs or anything is installed, with the
/// known names in the message.
#[test]
fn a_local_backend_with_an_unknown_model_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let config = dir.path().join("unknown-model.toml");
    std::fs::write(
        &config,
        format!(
            "name = \"unknown-model\"\nruns_dir = \"{}\"\ntask = \"synthesis\"\n\n\
             [dataset]\nname = \"humaneval\"\n\n[[backends]]\nkind = \"local\"\n\
             model = \"qwen2.5-coder-7b\"\n",
            runs.display()
        ),
    )
    .unwrap();
    let home = dir.path().join("home");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args(["run", "--config", config.to_str().unwrap()])
        .env("CODECAL_HOME", &home)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("backends[0].model"), "{stderr}");
    assert!(stderr.contains("\"qwen2.5-coder-7b\""), "{stderr}");
    assert!(
        stderr.contains("smollm2-135m, qwen2.5-coder-0.5b, qwen2.5-coder-1.5b"),
        "{stderr}"
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(!runs.exists(), "no run directory before the check passes");
    assert!(!home.exists(), "nothing installed before the check passes");
}
