//! Issue "faithful, fourth pass", item 3: the keys that group sampled
//! answers use no oracle. The Turbulence judge's fingerprint digests the
//! answer's own values, not whether they match the reference's; a program
//! that gives no behaviour is a cluster of its own, not one with every other
//! program that fails the same way.

mod common;

use codecal::task::behaviour::{ProbeOptions, behaviour_keys};
use codecal::task::{Oracle, Problem};

/// The fingerprint the Turbulence judge gives an answer that returns its
/// argument doubled, fuzzed against a reference `solution` (Python source
/// of a one-argument function), run in this process as `turbulence/
/// selftest.py` runs the judge.
fn turbulence_fingerprint(solution: &str) -> String {
    let root = env!("CARGO_MANIFEST_DIR");
    let script = format!(
        r#"
import types
source = "".join(open("{root}/src/task/" + p).read() for p in ("canonical.py", "turbulence/judge.py"))
judge = types.ModuleType("judge")
exec(compile(source, "<judge>", "exec"), judge.__dict__)
{solution}
oracle = {{"solution": solution, "inputs": lambda seed: (seed,), "same": None}}
allowance = judge.Allowance(5.0)
try:
    _, fingerprint = judge.fuzz(oracle, lambda x: 2 * x, {{"fuzz": 20}}, allowance)
except judge.TurbulenceVerdict as verdict:
    fingerprint = str(verdict).split("\t")[2]
print(fingerprint)
"#
    );
    let out = std::process::Command::new("python3")
        .args(["-c", &script])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[test]
fn the_turbulence_fingerprint_does_not_depend_on_the_reference() {
    let agrees = turbulence_fingerprint("def solution(x):\n    return 2 * x");
    let differs = turbulence_fingerprint("def solution(x):\n    return 3 * x");
    assert!(agrees.starts_with("fuzz:"), "{agrees}");
    // The same answer, the same values: one key, whichever reference judged it.
    assert_eq!(agrees, differs);
}

fn mbpp(id: &str) -> Problem {
    Problem {
        id: id.into(),
        prompt: String::new(),
        reference_answer: String::new(),
        oracle: Oracle::Mbpp {
            prompt: String::new(),
            setup: String::new(),
            tests: vec!["assert f(1) == 2".into()],
            entry_point: "f".into(),
        },
        group: None,
    }
}

#[test]
fn programs_that_fail_to_load_are_each_a_cluster_of_their_own() {
    let Some(sandbox) = common::sandbox(Default::default(), Default::default()) else {
        return;
    };
    let problem = mbpp("mbpp/1");
    let answers = [
        "def f(x)\n    return x",
        "def f(x) return 2 * x",
        "def f(x)\n    return x",
        "def f(x):\n    return 2 * x",
        "def f(x):\n    return x + x",
    ];
    let pairs: Vec<(&Problem, &str)> = answers.iter().map(|a| (&problem, *a)).collect();
    let keys = behaviour_keys(&pairs, Some(&sandbox), 2, &ProbeOptions::default()).unwrap();
    // Two different syntax errors: two keys, each naming how it ended.
    assert_ne!(keys[0], keys[1], "{keys:?}");
    assert!(keys[0].starts_with("syntax-error"), "{keys:?}");
    // The same program is the same key; two programs that compute the same
    // values share one.
    assert_eq!(keys[0], keys[2]);
    assert_eq!(keys[3], keys[4]);
}
