//! REval in codecal: the questions read from `../shared/data/reval/` (their
//! prompts' slots, ids and program groups), the judge's hand-worked cases
//! (`reval/test_judge.py`), and ground truth traced in the real sandbox fed
//! back as the answer (right) beside a deliberately wrong answer (wrong),
//! on a fixed sample of every kind of question.

mod common;

use std::process::Command;

use codecal::sandbox::{Ending, Sandbox};
use codecal::task::datasets::Dataset;
use codecal::task::{Oracle, Problem, judge_all, reval};

fn problems(dataset: Dataset) -> Option<Vec<Problem>> {
    let dir = common::shared_data("reval")?;
    Some(dataset.read(&dir, 0).unwrap())
}

#[test]
fn questions_come_with_the_papers_counts_and_filled_prompts() {
    let Some(coverage) = problems(Dataset::RevalCoverage) else {
        return;
    };
    // SOURCE.md: 3,152 (line, var) points over 690 (program, input) pairs.
    assert_eq!(coverage.len(), 3152);
    let output = problems(Dataset::RevalOutput).unwrap();
    assert_eq!(output.len(), 690);
    let path = problems(Dataset::RevalPath).unwrap();
    let state = problems(Dataset::RevalState).unwrap();
    for problem in coverage.iter().chain(&output).chain(&path).chain(&state) {
        assert!(!problem.prompt.contains("{code}") && !problem.prompt.contains("{invocation"));
        assert!(
            problem.prompt.trim_end().ends_with("[ANSWER]"),
            "{}",
            problem.id
        );
    }
    // DREval/0, input 0, its first point: line 17 (`return True`), distance.
    let first = &coverage[0];
    assert_eq!(first.id, "DREval/0/input-0/point-0:L17:distance");
    assert_eq!(first.group.as_deref(), Some("DREval/0"));
    assert!(first.prompt.contains(
        "Is Line 17 (                    return True) executed when \
         has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) is called?"
    ));
    // The path question numbers the code's lines.
    assert!(
        path[0]
            .prompt
            .contains("\n17\t                    return True\n")
    );
    assert!(
        state[0]
            .prompt
            .contains("the variable distance after Line 17")
    );
    // ClassEval questions speak of "the above test code" and show it.
    let class = coverage
        .iter()
        .find(|p| p.id.starts_with("DREval/90/"))
        .unwrap();
    assert!(class.prompt.contains("a = AvgPartition([1, 2, 3, 4], 2)"));
    assert!(class.prompt.contains("when the above test code is called"));
    // Output: HumanEval's answer is the assertion with the recorded output.
    assert_eq!(
        output[0].reference_answer,
        "assert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True"
    );
}

#[test]
fn the_judges_hand_worked_cases_pass() {
    let out = Command::new("python3")
        .args(["-m", "unittest", "reval/test_judge.py"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The reply parsers' bounded fuzz target (`reval/fuzz_parsers.py`): replies
/// mutated from the real answers of 40 DREval pairs, none may crash the
/// judge. `tests/fuzz_campaign.sh` runs it with many seeds.
#[test]
fn mutated_replies_never_crash_the_parsers() {
    if common::shared_data("reval").is_none() {
        return;
    }
    let out = Command::new("python3")
        .args(["reval/fuzz_parsers.py", "--cases", "20000", "--pairs", "40"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("20000 mutated replies") && stdout.contains(" 0 crashes"));
}

/// The truth and canonical answer of a question, traced in the sandbox.
fn truth(sandbox: &Sandbox, problem: &Problem) -> serde_json::Value {
    let Oracle::Reval { job, .. } = &problem.oracle else {
        panic!("{} is not an REval question", problem.id)
    };
    let run = sandbox.run(&reval::truth_program(job)).unwrap();
    assert_eq!(
        run.ending,
        Ending::Finished,
        "{}: {}",
        problem.id,
        run.message
    );
    let results: serde_json::Value = serde_json::from_str(&run.message).unwrap();
    results[0].clone()
}

/// An answer that cannot be right, given the truth's canonical one.
fn wrong(kind: Dataset, right: &str) -> String {
    match kind {
        Dataset::RevalCoverage if right == "YES" => "NO".into(),
        Dataset::RevalCoverage => "YES".into(),
        Dataset::RevalState if right == "Nil" => "123456789; int".into(),
        Dataset::RevalState => "Nil".into(),
        Dataset::RevalPath if right == "-1" => "this line is in no program".into(),
        _ => "-1".into(),
    }
}

#[test]
fn traced_ground_truth_fed_back_is_right_and_a_wrong_answer_is_wrong() {
    // The ground truth is one JSON line, longer than an exception's message.
    let limits = codecal::sandbox::Limits {
        message_chars: 64 << 10,
        ..Default::default()
    };
    let Some(sandbox) = common::sandbox(limits, Default::default()) else {
        return;
    };
    // ClassEval's programs import numpy, gensim, bs4 and lxml, which only
    // `codecal setup` installs.
    let classeval = codecal::sandbox::reval_packages_importable();
    if !classeval {
        let why = "numpy, gensim, bs4 or lxml does not import in /usr/bin/python3 \
                   (`codecal setup` installs them)";
        if std::env::var_os("CODECAL_REQUIRE_SANDBOX").is_some() {
            panic!("{why}, and CODECAL_REQUIRE_SANDBOX is set");
        }
        eprintln!("SKIPPED (the ClassEval programs): {why}");
    }
    // DREval/0-84 are HumanEval functions, 85-153 ClassEval classes.
    let runnable = |p: &&Problem| {
        classeval
            || p.group
                .as_deref()
                .and_then(|g| g.strip_prefix("DREval/")?.parse::<u32>().ok())
                < Some(85)
    };
    for kind in [
        Dataset::RevalCoverage,
        Dataset::RevalState,
        Dataset::RevalPath,
    ] {
        let Some(all) = problems(kind) else { return };
        // Every 40th question: HumanEval and ClassEval programs alike.
        let sample: Vec<&Problem> = all.iter().step_by(40).filter(runnable).collect();
        let mut pairs: Vec<(&Problem, String)> = Vec::new();
        for problem in &sample {
            let right = truth(&sandbox, problem)["answer"]
                .as_str()
                .unwrap()
                .to_owned();
            pairs.push((problem, right.clone()));
            pairs.push((problem, wrong(kind, &right)));
        }
        let borrowed: Vec<(&Problem, &str)> = pairs.iter().map(|(p, a)| (*p, a.as_str())).collect();
        let verdicts = judge_all(&borrowed, Some(&sandbox), 2).unwrap();
        for (k, verdict) in verdicts.iter().enumerate() {
            let (problem, answer) = &pairs[k];
            assert_eq!(
                verdict.correct,
                k % 2 == 0,
                "{kind:?} {}: {answer:?} -> {verdict:?}",
                problem.id
            );
        }
        eprintln!(
            "{kind:?}: {} questions traced and judged both ways",
            sample.len()
        );
    }
    // Output: the HumanEval part's recorded outputs pass; `assert False` never does.
    let output = problems(Dataset::RevalOutput).unwrap();
    let sample: Vec<&Problem> = output
        .iter()
        .filter(|p| !p.reference_answer.is_empty())
        .step_by(10)
        .collect();
    let mut pairs: Vec<(&Problem, &str)> = Vec::new();
    for problem in &sample {
        pairs.push((problem, problem.reference_answer.as_str()));
        pairs.push((problem, "assert False"));
    }
    let verdicts = judge_all(&pairs, Some(&sandbox), 2).unwrap();
    for (k, verdict) in verdicts.iter().enumerate() {
        assert_eq!(
            verdict.correct,
            k % 2 == 0,
            "{}: {verdict:?}",
            pairs[k].0.id
        );
    }
}
