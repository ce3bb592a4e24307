//! Turbulence (Honarvar, van der Wilk and Donaldson; seed
//! `002_c9cbfe9d1661ed8e.txt`): 60 question templates, each instantiated
//! with 100 parameter valuations (a *neighbourhood*), each instance asked
//! `rounds` times.
//!
//! This module reads the published instances (`neighbourhoods_seed1.jsonl`
//! in `../shared/data/turbulence/`), builds one [`Problem`] per (instance,
//! round) with the prompt from `templates/turbulence/prompt.txt`, and the
//! judging program: `judge.py` (ours, carried in the binary), which checks
//! the answer's shape, a static check, the fixed tests of an upstream
//! checkout when there is one, then differential fuzzing against the model
//! solution, and names the first failing stage among the paper's ten
//! outcomes (its Table II). The oracles are codecal's own
//! (`turbulence/oracles/qNN.py`, written from each question's text and
//! README), or an upstream checkout's `Source_Code/` (`--oracles DIR`). It
//! runs nothing itself: the sandbox does.

mod upstream;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Oracle, Problem, Reason};
use crate::corpus::{CorpusError, read_text};

pub use upstream::{Upstream, UpstreamError};

/// The worker the sandbox runs for every answer: the canonical text of a
/// value, which its fingerprint digests, then the judge.
pub const JUDGE_PY: &str = concat!(include_str!("../canonical.py"), include_str!("judge.py"));

/// The prompt around an instantiated question: the wording recorded with
/// the upstream's published runs (SOURCE.md, "The prompt").
pub const PROMPT_TEMPLATE: &str = include_str!("../../../templates/turbulence/prompt.txt");

/// The published instances' file inside the data directory.
pub const INSTANCES_FILE: &str = "neighbourhoods_seed1.jsonl";

/// Questions that need numpy in the sandbox's Python.
pub const NEEDS_NUMPY: [u32; 2] = [57, 58];

/// Q34 takes as many sets as its first parameter says.
const VARIADIC: u32 = 34;

include!("oracles_list.rs");

/// codecal's own oracle module for question `question` (1..=60).
pub fn own_oracle(question: u32) -> Option<&'static str> {
    let index = usize::try_from(question).ok()?.checked_sub(1)?;
    OWN_ORACLES.get(index).copied()
}

/// A digest of codecal's own oracles, the prompt template and the judge.
pub fn oracles_fingerprint() -> String {
    let mut text = String::from(JUDGE_PY);
    text.push_str(PROMPT_TEMPLATE);
    OWN_ORACLES.iter().for_each(|oracle| text.push_str(oracle));
    crate::digest::sha256_hex(text.as_bytes())
}

/// One instance of a question: a row of the instances file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Instance {
    pub question: u32,
    pub instance: u32,
    pub function_name: String,
    pub params: Vec<serde_json::Value>,
    pub prompt: String,
}

/// Which instances to ask, how often, and how to judge them.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Independent answers per instance.
    pub rounds: u32,
    /// Questions to keep (all when empty).
    pub questions: Vec<u32>,
    /// The first N instances of each question (all when `None`).
    pub instances: Option<u32>,
    /// Fuzz inputs per answer (the paper's v1: 100).
    pub fuzz: u32,
    /// Seconds the answer may run in all: defining it, the fixed tests and
    /// every fuzz call (the harness's per-answer limit, 7 s).
    pub answer_seconds: f64,
    /// Seconds the model solution may run in all, never charged to the
    /// answer; inputs it leaves unanswered are skipped.
    pub solution_seconds: f64,
    /// Which static check classifies static type errors.
    pub static_check: StaticCheck,
    /// Seconds Pylint may take on one answer.
    pub static_seconds: f64,
    /// An upstream checkout's oracles instead of codecal's own.
    pub upstream: Option<PathBuf>,
    /// Upstream test files that do not compile pass, as the harness lets them.
    pub collection_errors_pass: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            rounds: 5,
            questions: Vec::new(),
            instances: None,
            fuzz: 100,
            answer_seconds: 7.0,
            solution_seconds: 30.0,
            static_check: StaticCheck::Pylint,
            static_seconds: 20.0,
            upstream: None,
            collection_errors_pass: true,
        }
    }
}

impl Options {
    /// Fuzz inputs an answer must be compared on to pass: half of them.
    /// Fewer (the model solution failed or ran out of time on the rest)
    /// make the answer unavailable, not passed.
    pub fn min_compared(&self) -> u32 {
        self.fuzz.div_ceil(2)
    }

    /// A wall-clock limit for the whole judging program that the limits
    /// inside it (Pylint's, the answer's, the solution's) reach first, with
    /// room for the interpreter's start.
    pub fn wall_seconds(&self) -> f64 {
        let static_seconds = match self.static_check {
            StaticCheck::Pylint => self.static_seconds + 5.0,
            StaticCheck::Symtable => 0.0,
        };
        self.answer_seconds + self.solution_seconds + static_seconds + 5.0
    }
}

/// How the judge finds static type errors (Table II's fifth row).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StaticCheck {
    /// Pylint's error-category messages, as the paper (installed on first
    /// use; falls back to `symtable`, saying so, where it cannot be).
    #[default]
    Pylint,
    /// Python's `symtable`: undefined names only.
    Symtable,
}

crate::choices!(StaticCheck { Pylint => "pylint", Symtable => "symtable" });

impl StaticCheck {
    pub fn name(self) -> &'static str {
        crate::choice::Choice::choice_name(self)
    }
}

/// Makes the static check asked for the one that runs: the pinned Pylint
/// is installed on first use, as `codecal setup` does (as root, with
/// apt-get). Where it cannot be, what to say before judging: the judge falls
/// back to `symtable`, or runs another Pylint version.
pub fn prepare_static_check(check: StaticCheck) -> Option<String> {
    if check != StaticCheck::Pylint {
        return None;
    }
    match crate::sandbox::ensure_pylint() {
        Ok(_) => None,
        Err(other @ crate::sandbox::InstallError::OtherPylint { .. }) => Some(other.to_string()),
        Err(why) => Some(format!(
            "Turbulence's static check falls back to symtable (undefined names only): {why}"
        )),
    }
}

/// The instances file: `path` itself, or the file of that name inside it.
pub fn instances_path(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(INSTANCES_FILE)
    } else {
        path.to_owned()
    }
}

/// Reads the instances, each line checked; a bad line is an error naming it.
pub fn read_instances(path: &Path) -> Result<Vec<Instance>, CorpusError> {
    let path = instances_path(path);
    let text = read_text(&path)?;
    let mut instances = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let instance: Instance =
            serde_json::from_str(line).map_err(|e| CorpusError::Malformed {
                path: path.clone(),
                line: number + 1,
                reason: e.to_string(),
            })?;
        if own_oracle(instance.question).is_none() {
            return Err(CorpusError::Malformed {
                path: path.clone(),
                line: number + 1,
                reason: format!("question {} is not one of 1..=60", instance.question),
            });
        }
        instances.push(instance);
    }
    Ok(instances)
}

/// The prompt for an instantiated question.
pub fn prompt(question_text: &str) -> String {
    PROMPT_TEMPLATE
        .trim_end()
        .replace("{question}", question_text)
}

/// The problem id of an instance's round: `Q<q>/<instance>/<round>`.
pub fn problem_id(question: u32, instance: u32, round: u32) -> String {
    format!("Q{question}/{instance}/{round}")
}

/// One problem per (kept instance, round), in file order; each problem's
/// group is its question, so that cross-validation never splits a
/// neighbourhood.
pub fn problems(instances: &[Instance], options: &Options) -> Result<Vec<Problem>, UpstreamError> {
    let upstream = options
        .upstream
        .as_deref()
        .map(Upstream::open)
        .transpose()?;
    let mut problems = Vec::new();
    for instance in instances {
        let kept_question =
            options.questions.is_empty() || options.questions.contains(&instance.question);
        let kept_instance = options.instances.is_none_or(|n| instance.instance <= n);
        if !(kept_question && kept_instance) {
            continue;
        }
        let job = job(instance, options, upstream.as_ref())?;
        for round in 1..=options.rounds {
            problems.push(Problem {
                id: problem_id(instance.question, instance.instance, round),
                prompt: prompt(&instance.prompt),
                reference_answer: String::new(),
                oracle: Oracle::Turbulence {
                    question: instance.question,
                    instance: instance.instance,
                    round,
                    job: job.clone(),
                },
                group: Some(format!("Q{}", instance.question)),
            });
        }
    }
    Ok(problems)
}

/// The instance's parameters as JSON text, read from a problem's job:
/// what names a neighbourhood in Turbulence's tables.
pub fn job_params(job: &str) -> String {
    let job: serde_json::Value = serde_json::from_str(job).unwrap_or_default();
    job["params"].to_string()
}

/// The judge's job for an instance, without the answer.
fn job(
    instance: &Instance,
    options: &Options,
    upstream: Option<&Upstream>,
) -> Result<String, UpstreamError> {
    let mut job = serde_json::json!({
        "question": instance.question,
        "function": instance.function_name,
        "params": instance.params,
        "fuzz": options.fuzz,
        "min_compared": options.min_compared(),
        "answer_seconds": options.answer_seconds,
        "solution_seconds": options.solution_seconds,
        "static_check": options.static_check.name(),
        "static_seconds": options.static_seconds,
        "variadic": instance.question == VARIADIC,
        "collection_error_passes": options.collection_errors_pass,
    });
    match upstream {
        Some(upstream) => {
            let files = upstream.instantiate(instance)?;
            job["solution"] = files.solution.into();
            job["generator"] = files.generator.into();
            job["tests"] = files.tests.map_or(serde_json::Value::Null, Into::into);
        }
        None => job["oracle"] = own_oracle(instance.question).unwrap_or_default().into(),
    }
    Ok(job.to_string())
}

/// The program the sandbox runs to judge `answer` for the job `job`.
pub fn judging_program(job: &str, answer: &str) -> String {
    let mut value: serde_json::Value = serde_json::from_str(job).unwrap_or_default();
    value["answer"] = serde_json::Value::String(answer.to_owned());
    super::run_job_program(JUDGE_PY, &value)
}

/// One judged answer as the worker reported it.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub reason: Reason,
    pub detail: String,
    /// A digest of the answer's results on the fuzz inputs (or its failing
    /// stage), equal for answers that behave alike: self-consistency
    /// compares rounds by it.
    pub fingerprint: String,
}

/// Reads the worker's last line: `TurbulenceVerdict: <outcome>\t<detail>\t<fingerprint>`
/// on a failure, `passed\t<notes>\t<fingerprint>` on a pass.
pub fn read_outcome(message: &str, finished: bool) -> Option<Outcome> {
    let line = message
        .strip_prefix("TurbulenceVerdict: ")
        .unwrap_or(message);
    let mut fields = line.splitn(3, '\t');
    let name = fields.next()?;
    let detail = fields.next()?.to_owned();
    let fingerprint = fields.next().unwrap_or(name).to_owned();
    let reason = reason_of(name)?;
    if finished != (reason == Reason::Passed) {
        return None;
    }
    Some(Outcome {
        reason,
        detail,
        fingerprint,
    })
}

/// The worker's outcome names, the paper's Table II rows.
pub fn reason_of(name: &str) -> Option<Reason> {
    Some(match name {
        "no-function" => Reason::NoFunctionFound,
        "wrong-function-name" => Reason::WrongFunctionName,
        "wrong-argument-count" => Reason::WrongArgumentCount,
        "syntax-error" => Reason::SyntaxError,
        "static-type-error" => Reason::StaticTypeError,
        "resource-exhaustion" => Reason::ResourceExhaustion,
        "runtime-error" => Reason::RuntimeError,
        "assertion-error" => Reason::FailedTest,
        "fuzzing-failure" => Reason::FuzzingFailure,
        "passed" => Reason::Passed,
        "unavailable" => Reason::Unavailable,
        _ => return None,
    })
}

/// Table II's rows in the paper's order, with the paper's names.
pub const TABLE_II: [(Reason, &str); 10] = [
    (Reason::NoFunctionFound, "No function"),
    (Reason::WrongFunctionName, "Wrong function name"),
    (Reason::WrongArgumentCount, "Wrong count of arguments"),
    (Reason::SyntaxError, "Syntax error"),
    (Reason::StaticTypeError, "Static type error"),
    (Reason::ResourceExhaustion, "Resource exhaustion"),
    (Reason::RuntimeError, "Runtime error"),
    (Reason::FailedTest, "Assertion error"),
    (Reason::FuzzingFailure, "Fuzzing failure"),
    (Reason::Passed, "Passed"),
];
