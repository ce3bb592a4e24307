//! Running an answer on the examples its prompt shows, in the sandbox, one
//! program per example: the judge's program with the example in place of
//! the hidden tests. Not the reading of examples (`examples`).

use super::{Example, shown_examples};
use crate::sandbox::{Ending, Sandbox};
use crate::task::{JudgeError, Oracle, Problem, run_each_once};

/// The Python that checks one `Call` example: `_codecal_example(call,
/// expected)`, after `value_checks.py`.
pub const EXAMPLE_CHECK: &str = include_str!("../examples.py");

/// The program that runs `answer` on `example` of `problem`: the judge's
/// program with the example in place of the hidden tests, so the same
/// limits, value checks and comparison apply. `None` for a task that is not
/// function synthesis.
pub fn example_program(problem: &Problem, answer: &str, example: &Example) -> Option<String> {
    let (prompt, setup, entry_point) = match &problem.oracle {
        Oracle::HumanEval {
            prompt,
            entry_point,
            ..
        } => (prompt.as_str(), "", entry_point),
        Oracle::Mbpp {
            prompt,
            setup,
            entry_point,
            ..
        } => (prompt.as_str(), setup.as_str(), entry_point),
        _ => return None,
    };
    let check = match example {
        Example::Assert { statement } => statement.clone(),
        Example::Call { call, expected, .. } => {
            // A JSON string literal is a Python string literal too.
            let quoted = |s: &str| serde_json::Value::String(s.to_owned()).to_string();
            format!("_codecal_example({}, {})", quoted(call), quoted(expected))
        }
    };
    Some(format!(
        "{prompt}{answer}\n{setup}\n{}\n{EXAMPLE_CHECK}\n{entry_point} = _codecal_returns_plain({entry_point})\n{check}\n",
        crate::task::VALUE_CHECKS
    ))
}

/// What running one answer on its problem's shown examples found.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ExampleOutcome {
    /// Examples the prompt shows.
    pub shown: usize,
    pub passed: usize,
    /// Whether each example passed, in the examples' order.
    #[serde(default)]
    pub passes: Vec<bool>,
    /// Wall-clock seconds the answer's example programs took in the sandbox.
    pub seconds: f64,
    /// The first failing example's message, where one failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_failure: Option<String>,
}

impl ExampleOutcome {
    /// The share passed; `None` where the prompt shows no example.
    pub fn share(&self) -> Option<f64> {
        (self.shown > 0).then(|| self.passed as f64 / self.shown as f64)
    }

    /// 1 if every example passed, else 0; `None` where there is none.
    pub fn all_passed(&self) -> Option<f64> {
        (self.shown > 0).then(|| f64::from(u8::from(self.passed == self.shown)))
    }
}

/// Runs each answer on the examples its problem's prompt shows, one program
/// per example (so a loop or a crash in one fails that example alone),
/// `jobs` at a time, under the sandbox's limits. A program that raises,
/// times out, is killed or prints instead of returning fails its example.
/// `sandbox` may be `None` only when no problem shows an example.
pub fn run_examples(
    pairs: &[(&Problem, &str)],
    sandbox: Option<&Sandbox>,
    jobs: usize,
) -> Result<Vec<ExampleOutcome>, JudgeError> {
    let shown: Vec<Vec<Example>> = pairs
        .iter()
        .map(|(problem, _)| shown_examples(problem).examples)
        .collect();
    let checks: Vec<(&Problem, &str, &[Example])> = pairs
        .iter()
        .zip(&shown)
        .map(|(&(problem, answer), examples)| (problem, answer, examples.as_slice()))
        .collect();
    run_checks(&checks, sandbox, jobs)
}

/// Runs each answer on the examples given with it (the prompt's, or tests
/// the model wrote), as [`run_examples`] does.
pub fn run_checks(
    checks: &[(&Problem, &str, &[Example])],
    sandbox: Option<&Sandbox>,
    jobs: usize,
) -> Result<Vec<ExampleOutcome>, JudgeError> {
    let programs: Vec<String> = checks
        .iter()
        .flat_map(|(problem, answer, examples)| {
            examples
                .iter()
                .filter_map(|example| example_program(problem, answer, example))
        })
        .collect();
    let borrowed: Vec<&str> = programs.iter().map(String::as_str).collect();
    let mut executions = run_each_once(&borrowed, sandbox, jobs)?.into_iter();
    let outcomes = checks
        .iter()
        .map(|(_, _, examples)| {
            let mut outcome = ExampleOutcome {
                shown: examples.len(),
                ..ExampleOutcome::default()
            };
            for execution in executions.by_ref().take(examples.len()) {
                outcome.seconds += execution.wall.as_secs_f64();
                let passed = execution.ending == Ending::Finished;
                outcome.passes.push(passed);
                if passed {
                    outcome.passed += 1;
                } else if outcome.first_failure.is_none() {
                    outcome.first_failure =
                        Some(format!("{:?}: {}", execution.ending, execution.message));
                }
            }
            outcome
        })
        .collect();
    Ok(outcomes)
}
