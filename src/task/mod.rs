//! Tasks beyond summaries: a dataset of problems, a prompt for each, and an
//! oracle that turns a model's answer into correct or incorrect with a
//! reason.
//!
//! Function synthesis (HumanEval, MBPP) and code reasoning (CRUXEval) are
//! judged by running a program in the [`crate::sandbox`]; line completion
//! by exact match. Reading the datasets is `datasets`' job and cutting a
//! raw generation down to its answer is `answer`'s; this module holds the
//! plain data and the judging. It does not generate or calibrate: those are
//! the `generate` and `calibrate` stages.

pub mod answer;
pub mod behaviour;
pub mod datasets;
pub mod examples;
pub mod line_completion;
pub(crate) mod python_text;
pub mod reval;
pub mod turbulence;

use serde::{Deserialize, Serialize};

use crate::sandbox::{Ending, Execution, IsolationChoice, Limits, Sandbox, SandboxError};

/// The kinds of task `codecal` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskKind {
    Summarize,
    Synthesis,
    LineCompletion,
    CruxevalOutput,
    CruxevalInput,
    /// REval: is line L executed?
    RevalCoverage,
    /// REval: a variable's value and type after line L.
    RevalState,
    /// REval: the line that runs next after line L.
    RevalPath,
    /// REval: the output of the call or test code.
    RevalOutput,
    /// Turbulence: a function written to an instantiated question template.
    Turbulence,
}

crate::choices!(TaskKind { Summarize => "summarize", Synthesis => "synthesis", LineCompletion => "line-completion", CruxevalOutput => "cruxeval-output", CruxevalInput => "cruxeval-input", RevalCoverage => "reval-coverage", RevalState => "reval-state", RevalPath => "reval-path", RevalOutput => "reval-output", Turbulence => "turbulence" });

/// One problem: what the model is asked, a known-good answer, and how an
/// answer is judged.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Problem {
    pub id: String,
    pub prompt: String,
    /// The dataset's own answer (canonical solution, reference code, the
    /// true output or input, the target line), in the form an answer takes.
    pub reference_answer: String,
    pub oracle: Oracle,
    /// What cross-validation keeps together (REval: the program behind
    /// several questions); `None` is the problem itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// How an answer to a problem is judged.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Oracle {
    /// HumanEval: the answer continues the prompt; the program is
    /// `prompt + answer + "\n" + test + "\n" + "check(entry_point)"`.
    HumanEval {
        prompt: String,
        test: String,
        entry_point: String,
    },
    /// MBPP: the answer is a whole program defining `entry_point`, or in
    /// seed 000's layout the body that continues `prompt`; the setup code
    /// follows it (it may build objects of the answer's classes), then
    /// `value_checks.py` wraps `entry_point` so that its results must be
    /// plain values, then the assertions.
    Mbpp {
        /// Seed 000's layout (§3.2.1): the context, signature and docstring
        /// the answer continues; empty where the answer is a whole program.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        prompt: String,
        setup: String,
        tests: Vec<String>,
        entry_point: String,
    },
    /// CRUXEval output prediction: correct iff `output == answer`, the
    /// answer being a literal that must not simply call `f` on the input.
    CruxevalOutput {
        code: String,
        input: String,
        output: String,
    },
    /// CRUXEval input prediction: correct iff `f(answer) == output`; an
    /// answer may be the arguments or the whole call `f(...)`.
    CruxevalInput { code: String, output: String },
    /// Line completion: correct iff the answer's line equals the target
    /// once surrounding whitespace is trimmed.
    ExactLine { target: String },
    /// REval: the judge traces the program in the sandbox and compares the
    /// reply with what ran (`reval::judging_program`); `job` is its JSON.
    Reval { question: String, job: String },
    /// Turbulence: the judge checks the answer's shape, then fuzzes it
    /// against the model solution (`turbulence::judging_program`); `job`
    /// is its JSON without the answer.
    Turbulence {
        question: u32,
        instance: u32,
        round: u32,
        job: String,
    },
}

/// Why an answer was judged as it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    Passed,
    FailedTest,
    SyntaxError,
    Timeout,
    RuntimeError,
    WrongOutput,
    NoFunctionFound,
    /// Turbulence's outcomes (its Table II) beyond the ones above.
    WrongFunctionName,
    WrongArgumentCount,
    StaticTypeError,
    ResourceExhaustion,
    FuzzingFailure,
    /// The oracle cannot run on this machine (Turbulence's Q57 and Q58
    /// without numpy): the answer is not judged.
    Unavailable,
}

crate::choices!(Reason {
    Passed => "passed",
    FailedTest => "failed-test",
    SyntaxError => "syntax-error",
    Timeout => "timeout",
    RuntimeError => "runtime-error",
    WrongOutput => "wrong-output",
    NoFunctionFound => "no-function-found",
    WrongFunctionName => "wrong-function-name",
    WrongArgumentCount => "wrong-argument-count",
    StaticTypeError => "static-type-error",
    ResourceExhaustion => "resource-exhaustion",
    FuzzingFailure => "fuzzing-failure",
    Unavailable => "unavailable",
});

impl Reason {
    /// The reason as verdict files and reports spell it.
    pub fn name(self) -> &'static str {
        crate::choice::Choice::choice_name(self)
    }
}

/// An oracle's judgement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub correct: bool,
    pub reason: Reason,
    /// The exception or the mismatch, where there is one.
    pub detail: String,
    /// Turbulence: a digest of the answer's behaviour on the fuzz inputs,
    /// equal for rounds that behave alike.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

impl Verdict {
    fn new(reason: Reason, detail: impl Into<String>) -> Verdict {
        Verdict {
            correct: reason == Reason::Passed,
            reason,
            detail: detail.into(),
            fingerprint: None,
        }
    }
}

/// What judging an answer takes: either the verdict is clear without
/// running anything, or a program must run.
enum Judging {
    Decided(Verdict),
    Run(String),
}

impl Oracle {
    fn judging(&self, answer: &str) -> Judging {
        match self {
            Oracle::HumanEval {
                prompt,
                test,
                entry_point,
            } => Judging::Run(format!(
                "{prompt}{answer}\n{test}\n{VALUE_CHECKS}\ncheck(_codecal_returns_plain({entry_point}))\n"
            )),
            Oracle::Mbpp {
                prompt,
                setup,
                tests,
                entry_point,
            } => {
                if prompt.is_empty() && !answer::defines_function(answer) {
                    return Judging::Decided(Verdict::new(
                        Reason::NoFunctionFound,
                        format!("the answer defines no function (expected `{entry_point}`)"),
                    ));
                }
                Judging::Run(format!(
                    "{prompt}{answer}\n{setup}\n{VALUE_CHECKS}\n{entry_point} = _codecal_returns_plain({entry_point})\n{}\n",
                    tests.join("\n")
                ))
            }
            Oracle::CruxevalOutput {
                code,
                input,
                output,
            } => {
                // As the CRUXEval authors' scorer: an answer that just calls
                // `f` on the input has not predicted anything.
                if answer.contains(&format!("f({input})")) {
                    return Judging::Decided(Verdict::new(
                        Reason::WrongOutput,
                        "the answer calls f on the input instead of predicting its output",
                    ));
                }
                Judging::Run(cruxeval_program(code, output, answer, None))
            }
            Oracle::CruxevalInput { code, output } => {
                let call = if answer.contains("f(") {
                    answer.to_string()
                } else {
                    format!("f({answer})")
                };
                Judging::Run(cruxeval_program(code, output, &call, Some("f")))
            }
            Oracle::ExactLine { target } => {
                let line = answer.lines().next().unwrap_or("");
                let verdict = if line.trim() == target.trim() {
                    Verdict::new(Reason::Passed, "")
                } else {
                    Verdict::new(Reason::WrongOutput, format!("expected `{}`", target.trim()))
                };
                Judging::Decided(verdict)
            }
            Oracle::Reval { job, .. } => Judging::Run(reval::judging_program(job, answer)),
            Oracle::Turbulence { job, .. } => {
                Judging::Run(turbulence::judging_program(job, answer))
            }
        }
    }

    fn verdict(&self, execution: &Execution) -> Verdict {
        if let Oracle::Turbulence { .. } = self {
            return turbulence_verdict(execution);
        }
        let reason = match execution.ending {
            Ending::Finished => Reason::Passed,
            Ending::SyntaxError => Reason::SyntaxError,
            Ending::AssertionFailed => match self {
                Oracle::CruxevalOutput { .. }
                | Oracle::CruxevalInput { .. }
                | Oracle::Reval { .. } => Reason::WrongOutput,
                _ => Reason::FailedTest,
            },
            Ending::Exception | Ending::Killed => Reason::RuntimeError,
            Ending::TimedOut => Reason::Timeout,
            Ending::OutputLimit => Reason::ResourceExhaustion,
        };
        Verdict::new(reason, execution.message.clone())
    }

    /// Whether judging needs the sandbox at all.
    pub fn executes(&self) -> bool {
        !matches!(self, Oracle::ExactLine { .. })
    }
}

/// A Turbulence answer's outcome: the worker's own report, else how the
/// program ended (past the wall-clock or CPU limit: resource exhaustion;
/// ended without a report, e.g. by `os._exit`: a runtime error).
fn turbulence_verdict(execution: &Execution) -> Verdict {
    let finished = execution.ending == Ending::Finished;
    if let Some(outcome) = turbulence::read_outcome(&execution.message, finished) {
        return Verdict {
            fingerprint: Some(outcome.fingerprint),
            ..Verdict::new(outcome.reason, outcome.detail)
        };
    }
    let reason = match execution.ending {
        Ending::TimedOut | Ending::Killed | Ending::OutputLimit => Reason::ResourceExhaustion,
        _ => Reason::RuntimeError,
    };
    Verdict {
        fingerprint: Some(format!("{reason:?}")),
        ..Verdict::new(reason, execution.message.clone())
    }
}

/// The program that judges a CRUXEval answer: the function, a parse of the
/// answer inside parentheses (so that an answer that is not an expression
/// is a syntax error when the program compiles, as with the authors'
/// scorer), then `value_checks.py`'s reading of the authors' assertion
/// `assert OUTPUT == VALUE`, which refuses what only passes as text.
fn cruxeval_program(code: &str, output: &str, value: &str, call_name: Option<&str>) -> String {
    // A JSON string literal is a Python string literal too.
    let assertion = serde_json::Value::String(format!("assert {output} == {value}")).to_string();
    let call_name = call_name.map_or("None".to_owned(), |name| format!("{name:?}"));
    format!(
        "{code}\n_codecal_parses = lambda: (\n{value}\n,)\n{VALUE_CHECKS}\n_codecal_check({assertion}, {call_name})\n"
    )
}

const VALUE_CHECKS: &str = include_str!("value_checks.py");

/// A worker script followed by its call on `job`: what the REval and
/// Turbulence judges run in the sandbox.
fn run_job_program(worker: &str, job: &serde_json::Value) -> String {
    // A JSON string literal is a Python string literal too.
    let literal = serde_json::Value::String(job.to_string()).to_string();
    format!("{worker}\nrun_job({literal})\n")
}

/// Judges each answer against its problem, running programs `jobs` at a
/// time. Identical (problem, answer) pairs run once. `sandbox` may be
/// `None` only when no oracle needs to run anything.
pub fn judge_all(
    pairs: &[(&Problem, &str)],
    sandbox: Option<&Sandbox>,
    jobs: usize,
) -> Result<Vec<Verdict>, JudgeError> {
    let judgings: Vec<Judging> = pairs
        .iter()
        .map(|(problem, answer)| problem.oracle.judging(answer))
        .collect();
    let programs: Vec<&str> = judgings
        .iter()
        .filter_map(|judging| match judging {
            Judging::Run(program) => Some(program.as_str()),
            Judging::Decided(_) => None,
        })
        .collect();
    let mut executions = run_each_once(&programs, sandbox, jobs)?.into_iter();
    let verdicts = judgings
        .into_iter()
        .zip(pairs)
        .map(|(judging, (problem, _))| match judging {
            Judging::Decided(verdict) => verdict,
            Judging::Run(_) => problem.oracle.verdict(
                &executions
                    .next()
                    .expect("run_each_once gives one execution per program, in order"),
            ),
        })
        .collect();
    Ok(verdicts)
}

/// The execution of each of `programs`, in order, running each distinct
/// program once, `jobs` at a time. `sandbox` may be `None` only when there
/// is nothing to run.
pub(crate) fn run_each_once(
    programs: &[&str],
    sandbox: Option<&Sandbox>,
    jobs: usize,
) -> Result<Vec<Execution>, JudgeError> {
    if programs.is_empty() {
        return Ok(Vec::new());
    }
    let mut distinct: Vec<String> = programs.iter().map(|p| p.to_string()).collect();
    distinct.sort();
    distinct.dedup();
    let executions = sandbox
        .ok_or(JudgeError::NoSandbox)?
        .run_all(&distinct, jobs)?;
    Ok(programs
        .iter()
        .map(|program| {
            // `distinct` is sorted and holds every program.
            let at = distinct
                .binary_search_by(|d| d.as_str().cmp(program))
                .unwrap_or_default();
            executions[at].clone()
        })
        .collect())
}

/// A sandbox with these limits for judging `pairs`, or `None` when none of
/// their oracles runs code (exact match needs no sandbox, and a machine
/// without one can still judge it).
pub fn sandbox_for(
    pairs: &[(&Problem, String)],
    limits: Limits,
    isolation: IsolationChoice,
) -> Result<Option<Sandbox>, SandboxError> {
    if pairs.iter().any(|(problem, _)| problem.oracle.executes()) {
        Sandbox::detect(limits, isolation).map(Some)
    } else {
        Ok(None)
    }
}

/// One line of a verdicts file: the answer judged, then the verdict's
/// fields; what `codecal judge` and a task run write, and a run reads back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerdictRow {
    pub id: String,
    pub answer: String,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// The generated tokens [start, end) the confidence measures cover, where
    /// the answer came with tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_tokens: Option<[usize; 2]>,
    /// "Open the Oyster": the intrinsic reply's own answer and its verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intrinsic: Option<JudgedAnswer>,
}

/// An answer with its verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JudgedAnswer {
    pub answer: String,
    #[serde(flatten)]
    pub verdict: Verdict,
}

/// The verdict rows of judged answers, in the answers' order.
pub fn verdict_rows(
    pairs: &[(&Problem, String)],
    verdicts: &[Verdict],
    answer_tokens: &[Option<[usize; 2]>],
) -> Vec<VerdictRow> {
    pairs
        .iter()
        .zip(verdicts)
        .enumerate()
        .map(|(i, ((problem, answer), verdict))| VerdictRow {
            id: problem.id.clone(),
            answer: answer.clone(),
            verdict: verdict.clone(),
            answer_tokens: answer_tokens.get(i).copied().flatten(),
            intrinsic: None,
        })
        .collect()
}

/// Judged answers as JSON lines (`id`, `answer`, `correct`, `reason`,
/// `detail`), in the answers' order.
pub fn verdicts_jsonl(
    pairs: &[(&Problem, String)],
    verdicts: &[Verdict],
    answer_tokens: &[Option<[usize; 2]>],
) -> String {
    verdict_rows(pairs, verdicts, answer_tokens)
        .iter()
        .map(|row| serde_json::to_string(row).unwrap_or_default() + "\n")
        .collect()
}

/// A fingerprint of the code that turns a generation into a verdict: answer
/// extraction, the oracles' programs and the sandbox's harness. A task run
/// counts it among the judge stage's inputs, so generations judged by an
/// older codecal are judged again rather than reused.
pub fn judging_rules_fingerprint() -> String {
    let sources = concat!(
        include_str!("answer.rs"),
        include_str!("mod.rs"),
        include_str!("value_checks.py"),
        include_str!("reval.rs"),
        include_str!("../../reval/judge.py"),
        include_str!("turbulence/mod.rs"),
        include_str!("turbulence/judge.py"),
        include_str!("../sandbox/mod.rs"),
        // The split of an "Open the Oyster" intrinsic reply into its answer.
        include_str!("../confidence/reflective.rs"),
    );
    crate::digest::sha256_hex(sources.as_bytes())
}

#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    #[error("these answers must be run to be judged, and no sandbox was given")]
    NoSandbox,
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(target: &str) -> Problem {
        Problem {
            id: "p".into(),
            prompt: String::new(),
            reference_answer: target.into(),
            oracle: Oracle::ExactLine {
                target: target.into(),
            },
            group: None,
        }
    }

    #[test]
    fn exact_line_trims_and_reads_only_the_first_line() {
        let problem = exact("    return x + 1");
        let verdicts = judge_all(
            &[(&problem, "return x + 1  \nmore"), (&problem, "return x+1")],
            None,
            1,
        )
        .unwrap();
        assert!(verdicts[0].correct);
        assert_eq!(verdicts[1].reason, Reason::WrongOutput);
    }

    #[test]
    fn an_answer_without_a_function_is_decided_without_running() {
        let problem = Problem {
            id: "1".into(),
            prompt: String::new(),
            reference_answer: String::new(),
            oracle: Oracle::Mbpp {
                prompt: String::new(),
                setup: String::new(),
                tests: vec!["assert f(1) == 2".into()],
                entry_point: "f".into(),
            },
            group: None,
        };
        let verdicts = judge_all(&[(&problem, "f = lambda x: x + 1")], None, 1).unwrap();
        assert_eq!(verdicts[0].reason, Reason::NoFunctionFound);
        assert!(matches!(
            judge_all(&[(&problem, "def f(x): return x")], None, 1),
            Err(JudgeError::NoSandbox)
        ));
    }
}
