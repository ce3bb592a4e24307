//! Issue "trust that is granted": the examples a synthesis prompt shows,
//! read from all 164 HumanEval prompts and MBPP's shown test, and run on
//! answers in the sandbox: the references pass the examples they should,
//! an answer can pass the examples and fail the hidden tests (and the
//! reverse), and a looping, raising or printing answer fails its example
//! without stopping the others.

mod common;

use std::time::Duration;

use codecal::sandbox::{IsolationChoice, Limits};
use codecal::task::datasets::{read_humaneval, read_mbpp_sanitized};
use codecal::task::examples::{Example, run_examples, shown_examples};
use codecal::task::{Oracle, Problem, judge_all};

fn humaneval() -> Option<Vec<Problem>> {
    let path = common::shared_data("humaneval/HumanEval.jsonl.gz")?;
    Some(read_humaneval(&path).expect("HumanEval reads"))
}

/// The HumanEval problems whose docstring example disagrees with the
/// problem's own reference solution: the docstring is wrong, or its prose
/// reads as an example what is not one. Each checked by hand (2026-12-07).
/// A right answer fails these examples too, so on these problems the
/// examples cost recall, never precision.
const REFERENCE_FAILS_ITS_EXAMPLE: [(&str, &str); 4] = [
    (
        "HumanEval/47",
        "the docstring's median([-10, 4, 6, 1000, 10, 20]) is 15.0; the median is 8.0",
    ),
    (
        "HumanEval/116",
        "sort_array([1, 5, 2, 3, 4]) == [1, 2, 3, 4, 5] contradicts the task (sort by the \
         count of ones: [1, 2, 4, 3, 5]), as the reference and hidden tests do",
    ),
    (
        "HumanEval/130",
        "`tri(1) = 3` and `tri(4) = 3` state terms of the sequence, not calls of the \
         function, which returns a list",
    ),
    (
        "HumanEval/148",
        "bf(\"Earth\", \"Mercury\") ==> (\"Venus\") writes a 1-tuple without its comma: \
         in Python the value is a string",
    ),
];

#[test]
fn every_humaneval_prompt_is_read_and_counted() {
    let Some(problems) = humaneval() else { return };
    assert_eq!(problems.len(), 164);
    let shown: Vec<_> = problems.iter().map(shown_examples).collect();
    let with = shown.iter().filter(|s| !s.examples.is_empty()).count();
    let calls: usize = shown.iter().map(|s| s.examples.len()).sum();
    let skipped: usize = shown.iter().map(|s| s.skipped.len()).sum();
    let without: Vec<&str> = problems
        .iter()
        .zip(&shown)
        .filter(|(_, s)| s.examples.is_empty())
        .map(|(p, _)| p.id.as_str())
        .collect();
    println!(
        "HumanEval: {with} of 164 prompts show examples, {calls} in all ({:.2} per problem that \
         has any); {skipped} example-like lines skipped; no example: {without:?}",
        calls as f64 / with as f64
    );
    for (problem, s) in problems.iter().zip(&shown) {
        for line in &s.skipped {
            println!("  skipped in {}: {line}", problem.id);
        }
    }
    // Counted on 2026-12-07; a change to the reader must say what it changes.
    assert_eq!((with, calls, skipped), (154, 444, 8));
}

/// Every reference solution passes every example parsed from its own
/// prompt, but for the listed docstring errors: a parse that invented an
/// example, or read one wrongly, fails here.
#[test]
fn humaneval_references_pass_their_parsed_examples() {
    let Some(problems) = humaneval() else { return };
    let limits = Limits::with_wall(Duration::from_secs(10));
    let Some(sandbox) = common::sandbox(limits, IsolationChoice::Auto) else {
        return;
    };
    let pairs: Vec<(&Problem, &str)> = problems
        .iter()
        .map(|p| (p, p.reference_answer.as_str()))
        .collect();
    let outcomes = run_examples(&pairs, Some(&sandbox), 2).unwrap();
    let failing: Vec<(&str, String)> = problems
        .iter()
        .zip(&outcomes)
        .filter(|(_, o)| o.passed < o.shown)
        .map(|(p, o)| (p.id.as_str(), o.first_failure.clone().unwrap_or_default()))
        .collect();
    for (id, why) in &failing {
        println!("{id}: reference fails an example: {why}");
    }
    let failing_ids: Vec<&str> = failing.iter().map(|f| f.0).collect();
    let known: Vec<&str> = REFERENCE_FAILS_ITS_EXAMPLE.iter().map(|k| k.0).collect();
    assert_eq!(failing_ids, known);
    let seconds: f64 = outcomes.iter().map(|o| o.seconds).sum();
    println!("sandbox seconds for the 164 references' examples: {seconds:.1}");
}

#[test]
fn an_mbpp_prompt_shows_its_first_test_and_only_that() {
    let Some(path) = common::shared_data("mbpp/sanitized-mbpp.json") else {
        return;
    };
    let problems = read_mbpp_sanitized(&path).unwrap();
    assert_eq!(problems.len(), 427);
    for problem in &problems {
        let shown = shown_examples(problem);
        let Oracle::Mbpp { tests, .. } = &problem.oracle else {
            panic!("not MBPP")
        };
        assert_eq!(
            shown.examples,
            vec![Example::Assert {
                statement: tests[0].trim().to_owned()
            }],
            "{}",
            problem.id
        );
    }
}

/// A HumanEval-shaped problem: `double` with a docstring example and a
/// hidden test of its own.
fn double_problem(doc_example: &str, hidden: &str) -> Problem {
    let prompt = format!(
        "def double(x):\n    \"\"\"Twice x.\n    >>> double(2)\n    {doc_example}\n    \"\"\"\n"
    );
    Problem {
        id: "double".into(),
        prompt: prompt.clone(),
        reference_answer: "    return 2 * x\n".into(),
        oracle: Oracle::HumanEval {
            prompt,
            test: format!("def check(candidate):\n    {hidden}\n"),
            entry_point: "double".into(),
        },
        group: None,
    }
}

#[test]
fn examples_and_hidden_tests_can_disagree_both_ways() {
    let limits = Limits::with_wall(Duration::from_secs(5));
    let Some(sandbox) = common::sandbox(limits, IsolationChoice::Auto) else {
        return;
    };
    // Passes the shown example, fails the hidden test.
    let problem = double_problem("4", "assert candidate(3) == 6");
    let hard_coded = "    return 4\n";
    // A docstring whose example is wrong: the right answer fails it and
    // passes the hidden test.
    let wrong_doc = double_problem("5", "assert candidate(3) == 6");
    let right = "    return 2 * x\n";
    let pairs = [(&problem, hard_coded), (&wrong_doc, right)];
    let outcomes = run_examples(&pairs, Some(&sandbox), 2).unwrap();
    let verdicts = judge_all(&pairs, Some(&sandbox), 2).unwrap();
    assert_eq!((outcomes[0].passed, outcomes[0].shown), (1, 1));
    assert!(!verdicts[0].correct);
    assert_eq!((outcomes[1].passed, outcomes[1].shown), (0, 1));
    assert!(verdicts[1].correct);
    assert!(
        outcomes[1]
            .first_failure
            .as_deref()
            .is_some_and(|f| f.contains("expected 5, got 4")),
        "{:?}",
        outcomes[1].first_failure
    );
}

#[test]
fn a_looping_raising_or_printing_answer_fails_alone() {
    let limits = Limits::with_wall(Duration::from_secs(2));
    let Some(sandbox) = common::sandbox(limits, IsolationChoice::Auto) else {
        return;
    };
    let problem = double_problem("4", "assert candidate(3) == 6");
    let answers = [
        "    while True:\n        pass\n",
        "    raise ValueError('no')\n",
        "    print(2 * x)\n",
        "    import os\n    os._exit(0)\n",
        "    return 2 * x\n",
    ];
    let pairs: Vec<(&Problem, &str)> = answers.iter().map(|a| (&problem, *a)).collect();
    let outcomes = run_examples(&pairs, Some(&sandbox), 2).unwrap();
    let passed: Vec<usize> = outcomes.iter().map(|o| o.passed).collect();
    assert_eq!(passed, vec![0, 0, 0, 0, 1], "{outcomes:?}");
    let looped = outcomes[0].first_failure.as_deref().unwrap_or_default();
    assert!(looped.starts_with("TimedOut"), "{looped}");
    assert!(outcomes[0].seconds >= 1.5, "{}", outcomes[0].seconds);
}

/// `codecal run` on 60 HumanEval problems against a loopback server that
/// answers two in three with the reference and the rest with `return
/// None`: the examples stage measures each answer, the fixed rule "accept
/// iff every shown example passes" is tested once per target, and `codecal
/// apply` with the rule's calibrator accepts exactly the items the rule
/// accepted; without the measure's column it is refused naming it.
#[test]
fn a_run_certifies_the_examples_rule_and_apply_deploys_it() {
    use common::server::{Server, completion, json};
    let (Some(data), Some(_)) = (
        common::humaneval_file(),
        common::sandbox(Default::default(), Default::default()),
    ) else {
        return;
    };
    let problems = read_humaneval(&data).unwrap();
    let solutions: std::collections::HashMap<String, String> = problems
        .iter()
        .map(|p| (p.prompt.clone(), p.reference_answer.clone()))
        .collect();
    let server = Server::start(move |seen, _| {
        let prompt = seen.body["prompt"].as_str().unwrap_or("");
        let answer = if common::cruxeval_answers_right(prompt) {
            solutions.get(prompt).cloned().unwrap_or_default()
        } else {
            "    return None\n".to_owned()
        };
        json(200, &completion(&[(&answer, 0.7)]))
    });
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("spec.toml");
    std::fs::write(
        &config,
        format!(
            r#"name = "spec"
runs_dir = "{runs}"
task = "synthesis"

[dataset]
name = "humaneval"
problems = 60
seed = 3

[[backends]]
kind = "openai"
base_url = "{url}"
model = "test-model"
retry_base_ms = 10

[calibration]
confidence = ["average_token_probability", "spec_examples", "spec_examples_all"]
folds = 3
bootstrap = 50

[[calibration.rules]]
name = "examples-pass"
measure = "spec_examples_all"
at_least = 1.0
"#,
            runs = dir.path().join("runs").display(),
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
    let run = dir.path().join("runs/spec");
    let lines = |path: &std::path::Path| -> Vec<serde_json::Value> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let examples = run.join("examples/openai-test-model.jsonl");
    let rows = lines(&examples);
    let verdicts = lines(&run.join("verdicts/openai-test-model.jsonl"));
    assert_eq!(rows.len(), 60);
    let known: Vec<&str> = REFERENCE_FAILS_ITS_EXAMPLE.iter().map(|k| k.0).collect();
    let mut passing = 0;
    for (row, verdict) in rows.iter().zip(&verdicts) {
        let all = row["confidence"]["spec_examples_all"].as_f64();
        passing += usize::from(all == Some(1.0));
        let id = row["id"].as_str().unwrap();
        // A right answer passes its examples (where the docstring is right).
        if verdict["correct"] == true && row["main"]["shown"].as_u64() > Some(0) {
            assert_eq!(all == Some(1.0), !known.contains(&id), "{row}");
        }
    }
    let calibrator = run.join("calibrators/humaneval/openai-test-model/rule-examples-pass.json");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&calibrator).unwrap()).unwrap();
    let at_80 = &saved["cutoffs"]["accept"][0];
    assert_eq!(saved["cutoffs"]["rule"]["name"], "examples-pass");
    assert_eq!(at_80["cutoff"], 1.0, "{at_80}");
    assert_eq!(at_80["decided"].as_u64(), Some(passing as u64));
    let decided = dir.path().join("decided.jsonl");
    let out = common::codecal(&[
        "apply",
        "--calibrator",
        calibrator.to_str().unwrap(),
        examples.to_str().unwrap(),
        "--out",
        decided.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let accepted = lines(&decided)
        .iter()
        .filter(|r| r["decision"] == "accept")
        .count();
    assert_eq!(accepted, passing);
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("**Accepted with a guarantee"), "{report}");
    assert!(report.contains("| rule examples-pass | 0.8 | spec_examples_all ≥ 1 |"));
    // The generations hold no such measure: refused, naming the column.
    let out = common::codecal(&[
        "apply",
        "--calibrator",
        calibrator.to_str().unwrap(),
        run.join("generations/openai-test-model.jsonl")
            .to_str()
            .unwrap(),
        "--out",
        dir.path().join("no.jsonl").to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("no column spec_examples_all"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(!dir.path().join("no.jsonl").exists());
}

/// `codecal run` on 40 MBPP problems against a loopback server that answers
/// two in three with the reference and the rest with `return None`, and
/// writes as its tests the problem's hidden tests after the shown one (those
/// that call the function first): a right answer passes every written test
/// and a `return None` passes none; with two samples answered alike, the
/// dual agreement is the share passed; the tests' tokens are counted in the
/// sources table.
#[test]
fn model_written_tests_are_asked_for_read_run_and_costed() {
    use common::server::{Server, completion};
    let (Some(data), Some(_)) = (
        common::shared_data("mbpp/sanitized-mbpp.json"),
        common::sandbox(Default::default(), Default::default()),
    ) else {
        return;
    };
    let problems = read_mbpp_sanitized(&data).unwrap();
    let mut answers = std::collections::HashMap::new();
    let mut tests = std::collections::HashMap::new();
    for problem in &problems {
        let Oracle::Mbpp {
            tests: hidden,
            entry_point,
            ..
        } = &problem.oracle
        else {
            panic!("not MBPP")
        };
        let wrong = format!("def {entry_point}(*args):\n    return None\n");
        let right = problem.reference_answer.clone();
        answers.insert(problem.prompt.clone(), (right, wrong));
        let opening = format!("assert {entry_point}(");
        let written: Vec<&str> = hidden[1..]
            .iter()
            .filter_map(|t| t.trim().strip_prefix(&opening))
            .collect();
        tests.insert(
            entry_point.clone(),
            written.join(&format!("\n{opening}")) + "\n",
        );
    }
    let server = Server::start(move |seen, _| {
        let prompt = seen.body["prompt"].as_str().unwrap_or("");
        let reply = if let Some((_, rest)) = prompt.split_once("# check the correctness of ") {
            let entry = rest.lines().next().unwrap_or("");
            tests.get(entry).cloned().unwrap_or_default()
        } else {
            let (right, wrong) = answers.get(prompt).cloned().unwrap_or_default();
            if common::cruxeval_answers_right(prompt) {
                right
            } else {
                wrong
            }
        };
        let lines: Vec<(&str, f64)> = reply.split_inclusive('\n').map(|l| (l, 0.8)).collect();
        common::server::json(200, &completion(&lines))
    });
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("written.toml");
    std::fs::write(
        &config,
        format!(
            "name = \"written\"\nruns_dir = \"{runs}\"\ntask = \"synthesis\"\n\n\
             [dataset]\nname = \"mbpp-sanitized\"\npath = \"{data}\"\nproblems = 40\nseed = 5\n\n\
             [[backends]]\nkind = \"openai\"\nbase_url = \"{url}\"\nmodel = \"m\"\nretry_base_ms = 10\n\n\
             [generation]\nsamples = 2\ntests = 3\n\n\
             [calibration]\nconfidence = [\"average_token_probability\", \"spec_examples\", \
             \"model_tests\", \"dual_agreement\"]\nfolds = 3\nbootstrap = 20\n",
            runs = dir.path().join("runs").display(),
            data = data.display(),
            url = server.base_url,
        ),
    )
    .unwrap();
    let out = common::codecal(&["run", "--config", config.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("model-written tests: "), "{stderr}");
    let run = dir.path().join("runs/written");
    let read = |path: &str| -> Vec<serde_json::Value> {
        std::fs::read_to_string(run.join(path))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let (rows, verdicts) = (
        read("examples/openai-m.jsonl"),
        read("verdicts/openai-m.jsonl"),
    );
    let mut with_tests = 0;
    for (row, verdict) in rows.iter().zip(&verdicts) {
        let measure = |m: &str| row["confidence"][m].as_f64();
        let written = row["written"]["tests"].as_array().unwrap();
        assert!(written.len() <= 3, "{row}");
        if written.is_empty() {
            assert_eq!(measure("model_tests"), None, "{row}");
            continue;
        }
        with_tests += 1;
        let passed = measure("model_tests").unwrap();
        if verdict["correct"] == true {
            assert_eq!(passed, 1.0, "{row}");
        } else {
            // `return None` passes only a test that expects None.
            let nones = written.iter().filter(|t| t["expected"] == "None").count();
            assert_eq!(passed, nones as f64 / written.len() as f64, "{row}");
        }
        // Three answers alike: all in the main one's consensus set.
        assert_eq!(measure("dual_agreement"), measure("model_tests"), "{row}");
        assert_eq!(row["written"]["outcomes"].as_array().unwrap().len(), 3);
    }
    assert!(with_tests >= 20, "{with_tests} of 40 problems got tests");
    let sources = common::csv_rows(&run.join("tables/sources.csv"));
    let tokens = |measure: &str| -> f64 {
        let row = sources.iter().find(|r| r[1] == measure).unwrap();
        row[6].parse().unwrap()
    };
    assert!(
        tokens("model_tests") > tokens("average_token_probability"),
        "{sources:?}"
    );
    assert!(
        tokens("dual_agreement") > tokens("model_tests"),
        "{sources:?}"
    );
}

/// A rule on a measure the run does not calibrate, a rule named twice, a
/// rule with no finite value, and the examples' measures on a task whose
/// prompts show none: each refused before any stage, on one line naming
/// its key.
#[test]
fn bad_rules_and_misplaced_measures_are_refused_naming_the_key() {
    use common::server::{Server, json};
    let server = Server::start(|_, _| json(200, &serde_json::json!({"data": []})));
    let dir = tempfile::tempdir().unwrap();
    let rule = |name: &str, measure: &str, at_least: &str| {
        format!(
            "\n[[calibration.rules]]\nname = \"{name}\"\nmeasure = \"{measure}\"\nat_least = {at_least}\n"
        )
    };
    let cases = [
        (
            "synthesis",
            "name = \"humaneval\"",
            "[\"spec_examples_all\"]",
            rule("r", "spec_examples", "1.0"),
            "calibration.rules[0].measure: \"spec_examples\" is not a measure this run calibrates",
        ),
        (
            "synthesis",
            "name = \"humaneval\"",
            "[\"spec_examples_all\"]",
            rule("r", "spec_examples_all", "1.0") + &rule("r", "spec_examples_all", "0.5"),
            "calibration.rules[1].name: rule \"r\" is named twice",
        ),
        (
            "synthesis",
            "name = \"humaneval\"",
            "[\"spec_examples_all\"]",
            rule("r", "spec_examples_all", "nan"),
            "calibration.rules[0]: rule \"r\": at_least must be a finite number",
        ),
        (
            "line-completion",
            "",
            "[\"spec_examples\"]",
            String::new(),
            "calibration.confidence: \"spec_examples\" runs the answer on the prompt's examples",
        ),
        (
            "synthesis",
            "name = \"humaneval\"",
            "[\"spec_examples_samples\"]",
            String::new(),
            "needs sampled answers",
        ),
        (
            "synthesis",
            "name = \"humaneval\"",
            "[\"model_tests\"]",
            String::new(),
            "calibration.confidence: \"model_tests\" needs model-written tests: set [generation] tests",
        ),
        (
            "synthesis",
            "name = \"humaneval\"\n\n[generation]\ntests = 3",
            "[\"spec_examples\"]",
            String::new(),
            "generation.tests: asks the model for tests that no measure reads",
        ),
        (
            "synthesis",
            "name = \"humaneval\"\n\n[generation]\ntests = 3",
            "[\"dual_agreement\"]",
            String::new(),
            "\"dual_agreement\" needs sampled answers",
        ),
        (
            "synthesis",
            "name = \"humaneval\"\n\n[generation]\ntests = 21",
            "[\"model_tests\"]",
            String::new(),
            "generation.tests: must be from 0 to 20",
        ),
    ];
    for (task, dataset, confidence, rules, message) in cases {
        let config = dir.path().join("bad.toml");
        std::fs::write(
            &config,
            format!(
                "name = \"bad\"\nruns_dir = \"{}\"\ntask = \"{task}\"\n\n[dataset]\n{dataset}\n\n\
                 [[backends]]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\n\n\
                 [calibration]\nconfidence = {confidence}\n{rules}",
                dir.path().join("runs").display(),
                server.base_url
            ),
        )
        .unwrap();
        let out = common::codecal(&["run", "--config", config.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{message}: accepted");
        assert!(stderr.contains(message), "{stderr:?} lacks {message:?}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(
            !dir.path().join("runs/bad").exists(),
            "{message}: a stage ran"
        );
    }
}

/// Prints the examples read from every eighth HumanEval prompt (20 of
/// them), for checking by hand against the prompts.
#[test]
fn print_a_sample_of_parses_for_checking_by_hand() {
    let Some(problems) = humaneval() else { return };
    for problem in problems.iter().step_by(8) {
        let shown = shown_examples(problem);
        println!("{}: {} examples", problem.id, shown.examples.len());
        for example in &shown.examples {
            match example {
                Example::Call {
                    call,
                    expected,
                    form,
                } => {
                    println!("    {form:?}: {call} == {expected}")
                }
                Example::Assert { statement } => println!("    {statement}"),
            }
        }
    }
}

proptest::proptest! {
    /// The reader never panics, whatever the prompt holds (multi-byte
    /// characters, unclosed brackets and strings, the forms' keywords in any
    /// order), and every value it reads is a literal.
    #[test]
    fn the_reader_takes_any_prompt_without_panicking(
        pieces in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just(">>> ".to_owned()),
                proptest::strategy::Just("f(".to_owned()),
                proptest::strategy::Just(")".to_owned()),
                proptest::strategy::Just(" == ".to_owned()),
                proptest::strategy::Just(" ➞ ".to_owned()),
                proptest::strategy::Just("Input: ".to_owned()),
                proptest::strategy::Just("Output: ".to_owned()),
                proptest::strategy::Just("For x = ".to_owned()),
                proptest::strategy::Just(" the output should be ".to_owned()),
                proptest::strategy::Just("\n".to_owned()),
                proptest::strategy::Just("'".to_owned()),
                proptest::strategy::Just("[1, İ".to_owned()),
                proptest::strategy::Just("assert f (1) == 2".to_owned()),
                "\\PC{0,6}",
            ],
            0..40,
        )
    ) {
        let prompt: String = pieces.concat();
        let shown = codecal::task::examples::parse_examples(&prompt, "f");
        for example in shown.examples {
            if let Example::Call { expected, .. } = example {
                proptest::prop_assert!(codecal::task::examples::is_literal(&expected));
            }
        }
    }
}
