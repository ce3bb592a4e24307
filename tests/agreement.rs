//! Confidence from agreement on hand-made samples (issue "confidence from
//! agreement"): behaviour keys from the sandbox group answers that do the
//! same thing, and the cluster counts and entropies come out as counted by
//! hand, for each task kind. Answers that never end, or that read or write
//! files, are contained and keyed on their own without stopping the others.

mod common;

use std::time::Duration;

use codecal::confidence::agreement::{CodeAgreement, Sample, cluster_sizes, clusters_by_key};
use codecal::sandbox::{IsolationChoice, Limits, Sandbox};
use codecal::task::behaviour::{ProbeOptions, behaviour_keys, probe_inputs};
use codecal::task::{Oracle, Problem};

fn sandbox(options: &ProbeOptions) -> Option<Sandbox> {
    let wall = Duration::from_secs_f64(options.wall_seconds());
    common::sandbox(Limits::with_wall(wall), IsolationChoice::Auto)
}

fn humaneval(prompt: &str, entry_point: &str) -> Problem {
    Problem {
        id: format!("hand/{entry_point}"),
        prompt: prompt.into(),
        reference_answer: String::new(),
        oracle: Oracle::HumanEval {
            prompt: prompt.into(),
            test: String::new(),
            entry_point: entry_point.into(),
        },
        group: None,
    }
}

fn keys(
    problem: &Problem,
    answers: &[&str],
    options: &ProbeOptions,
    sandbox: &Sandbox,
) -> Vec<String> {
    let pairs: Vec<(&Problem, &str)> = answers.iter().map(|a| (problem, *a)).collect();
    behaviour_keys(&pairs, Some(sandbox), 4, options).expect("probing runs")
}

fn sizes(keys: &[String]) -> Vec<usize> {
    cluster_sizes(&clusters_by_key(keys))
}

const ADD_PROMPT: &str = "from typing import List\n\n\ndef add_all(xs: List[int], k: int) -> List[int]:\n    \"\"\" Add k to every item.\n    >>> add_all([1, 2], 3)\n    [4, 5]\n    >>> add_all([], 0)\n    []\n    \"\"\"\n";

#[test]
fn synthesis_samples_cluster_by_what_they_do() {
    let options = ProbeOptions::default();
    let Some(sandbox) = sandbox(&options) else {
        return;
    };
    let problem = humaneval(ADD_PROMPT, "add_all");
    // Two examples from the docstring, then the random ones, seeded.
    let inputs = probe_inputs(&problem, &options);
    assert_eq!(&inputs[..2], ["[1, 2], 3", "[], 0"]);
    assert_eq!(inputs.len(), 2 + options.random_inputs);
    assert_eq!(inputs, probe_inputs(&problem, &options), "seeded");
    let answers = [
        // The same behaviour three ways: whitespace, names, a loop.
        "    return [x + k for x in xs]\n",
        "    return [ item+k   for item in xs ]\n",
        "    out = []\n    for value in xs:\n        out.append(value + k)\n    return out\n",
        // Wrong only when k is negative: differs on some random input.
        "    return [x + abs(k) for x in xs]\n",
        // Wrong everywhere.
        "    return xs\n",
    ];
    let keys = keys(&problem, &answers, &options, &sandbox);
    assert_eq!(keys[0], keys[1]);
    assert_eq!(keys[0], keys[2]);
    assert_ne!(keys[0], keys[3]);
    assert_ne!(keys[3], keys[4]);
    assert_eq!(sizes(&keys), vec![3, 1, 1]);
    let samples: Vec<Sample> = keys
        .iter()
        .map(|key| Sample {
            key: key.clone(),
            mean_logprob: Some(-0.1),
        })
        .collect();
    let agreement = CodeAgreement::of(&keys[0], &samples).unwrap();
    assert_eq!((agreement.clusters, agreement.with_greedy), (3, 3));
    // H of 3/5, 1/5, 1/5 in nats.
    let h = -(0.6f64 * 0.6f64.ln() + 2.0 * 0.2 * 0.2f64.ln());
    assert!((agreement.entropy - h).abs() < 1e-12);
}

#[test]
fn answers_differing_on_one_input_fall_into_two_clusters() {
    let options = ProbeOptions {
        random_inputs: 0,
        ..ProbeOptions::default()
    };
    let Some(sandbox) = sandbox(&options) else {
        return;
    };
    let prompt = "def sign(n: int) -> int:\n    \"\"\"\n    >>> sign(5)\n    1\n    >>> sign(-2)\n    -1\n    >>> sign(0)\n    0\n    \"\"\"\n";
    let problem = humaneval(prompt, "sign");
    let keys = keys(
        &problem,
        &[
            "    return (n > 0) - (n < 0)\n",
            "    if n > 0:\n        return 1\n    return -1 if n < 0 else 0\n",
            // Differs only at 0.
            "    return 1 if n > 0 else -1\n",
        ],
        &options,
        &sandbox,
    );
    assert_eq!(sizes(&keys), vec![2, 1]);
    let a: Vec<String> = serde_json::from_str(&keys[0]).unwrap();
    let c: Vec<String> = serde_json::from_str(&keys[2]).unwrap();
    let differing = a.iter().zip(&c).filter(|(x, y)| x != y).count();
    assert_eq!((a.len(), differing), (3, 1));
}

#[test]
fn a_sample_that_never_ends_or_touches_files_is_contained_and_alone() {
    let options = ProbeOptions {
        random_inputs: 2,
        call_seconds: 0.5,
        ..ProbeOptions::default()
    };
    let Some(sandbox) = sandbox(&options) else {
        return;
    };
    let problem = humaneval(ADD_PROMPT, "add_all");
    // A file on this machine the sample tries to read.
    let secret = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(secret.path(), "secret").unwrap();
    let read = format!(
        "    return [len(open({:?}).read())]\n",
        secret.path().display()
    );
    let answers = [
        "    return [x + k for x in xs]\n",
        // Loops forever in every call: each call is stopped on its own.
        "    while True:\n        pass\n",
        // Swallows the per-call stop: the wall clock ends the program.
        "    while True:\n        try:\n            while True:\n                pass\n        except BaseException:\n            pass\n",
        // Never gets to define the function.
        "    pass\nwhile True:\n    pass\n",
        "    open('/codecal-probe-was-here', 'w').write('x')\n    return xs\n",
        read.as_str(),
        "    return [x + k for x in xs]\n",
    ];
    let started = std::time::Instant::now();
    let keys = keys(&problem, &answers, &options, &sandbox);
    assert!(
        started.elapsed() < Duration::from_secs_f64(4.0 * options.wall_seconds()),
        "the probes were bounded by their limits"
    );
    assert!(!std::path::Path::new("/codecal-probe-was-here").exists());
    // The good answers agree, and nothing else joins them; the two that
    // ran out of time are each a cluster of their own (issue "faithful,
    // fourth pass", item 3: failing alike is not agreeing).
    assert_eq!(keys[0], keys[6]);
    assert_eq!(sizes(&keys), vec![2, 1, 1, 1, 1, 1]);
    // Each stopped call is a `!timeout`; the program still reports.
    let looping: Vec<String> = serde_json::from_str(&keys[1]).expect("per-call timeouts reported");
    assert_eq!(looping.len(), 4);
    assert!(looping.windows(2).all(|w| w[0] == w[1]), "{looping:?}");
    assert!(keys[2].starts_with("timed-out #"), "{keys:?}");
    assert!(keys[3].starts_with("timed-out #"), "{keys:?}");
    assert_ne!(keys[2], keys[3]);
    // The file answers ran and reported an exception on every call.
    for file_answer in [&keys[4], &keys[5]] {
        let digests: Vec<String> = serde_json::from_str(file_answer).expect("it reported");
        assert_eq!(digests.len(), 4);
    }
}

#[test]
fn value_answers_group_as_the_judge_compares_them() {
    let options = ProbeOptions::default();
    let Some(sandbox) = sandbox(&options) else {
        return;
    };
    let output = Problem {
        id: "crux/0".into(),
        prompt: String::new(),
        reference_answer: String::new(),
        oracle: Oracle::CruxevalOutput {
            code: "def f(x):\n    return x".into(),
            input: "1".into(),
            output: "1".into(),
        },
        group: None,
    };
    // Equal values written differently; a set's order does not matter.
    let keys = keys(
        &output,
        &[
            "'ab'",
            "\"ab\"",
            "'a' + 'b'",
            "{'b', 'a'}",
            "{'a', 'b'}",
            "[1, 2.0]",
            "[1, 2]",
        ],
        &options,
        &sandbox,
    );
    assert_eq!(sizes(&keys), vec![3, 2, 2]);
    let input = Problem {
        oracle: Oracle::CruxevalInput {
            code: "def f(x):\n    return x".into(),
            output: "1".into(),
        },
        ..output.clone()
    };
    let keys = self::keys(
        &input,
        &["f(1, 'a')", "1, \"a\"", "f(2, 'a')"],
        &options,
        &sandbox,
    );
    assert_eq!(sizes(&keys), vec![2, 1]);
    // Line completion needs no sandbox: the trimmed first line.
    let line = Problem {
        oracle: Oracle::ExactLine {
            target: "x = 1".into(),
        },
        ..output
    };
    let pairs: Vec<(&Problem, &str)> = ["  x = 1\nmore", "x = 1  ", "x=1"]
        .iter()
        .map(|a| (&line, *a))
        .collect();
    let keys = behaviour_keys(&pairs, None, 1, &options).unwrap();
    assert_eq!(sizes(&keys), vec![2, 1]);
}

/// Turbulence answers are keyed by the judge's fingerprint on its fuzz
/// inputs; REval replies by their text with the whitespace collapsed.
#[test]
fn turbulence_answers_cluster_by_their_fuzz_behaviour_and_reval_by_text() {
    use codecal::task::turbulence::{Options, problems, read_instances};
    let options = ProbeOptions::default();
    let reval = Problem {
        id: "reval/0".into(),
        prompt: String::new(),
        reference_answer: String::new(),
        oracle: Oracle::Reval {
            question: "coverage".into(),
            job: String::new(),
        },
        group: None,
    };
    let pairs: Vec<(&Problem, &str)> = ["Yes", " Yes\n", "No"]
        .iter()
        .map(|a| (&reval, *a))
        .collect();
    let reval_keys = behaviour_keys(&pairs, None, 1, &options).unwrap();
    assert_eq!(sizes(&reval_keys), vec![2, 1]);
    let (Some(data), Some(sandbox)) = (
        common::shared_data("turbulence/neighbourhoods_seed1.jsonl"),
        sandbox(&options),
    ) else {
        return;
    };
    let instances = read_instances(&data).unwrap();
    let turbulence = Options {
        rounds: 1,
        questions: vec![1],
        instances: Some(1),
        fuzz: 20,
        ..Options::default()
    };
    let problem = problems(&instances, &turbulence).unwrap().remove(0);
    let first = instances
        .iter()
        .find(|i| i.question == 1 && i.instance == 1)
        .unwrap();
    let (i, j) = (
        first.params[0].as_i64().unwrap(),
        first.params[1].as_i64().unwrap(),
    );
    let right = format!(
        "def all_ints_inclusive(lst):\n    return lst[{i}:{}]\n",
        j + 1
    );
    let renamed = format!(
        "def all_ints_inclusive(values):\n    picked = values[{i}:{}]\n    return picked\n",
        j + 1
    );
    let short = format!("def all_ints_inclusive(lst):\n    return lst[{i}:{j}]\n");
    let keys = keys(&problem, &[&right, &renamed, &short], &options, &sandbox);
    assert_eq!(sizes(&keys), vec![2, 1], "{keys:?}");
}
