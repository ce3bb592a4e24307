//! What an answer does, as a key: two answers with equal keys behaved alike,
//! so sampled answers can be grouped without a test oracle (issue
//! "confidence from agreement").
//!
//! - Function synthesis (HumanEval, MBPP): every answer is called on the same
//!   inputs in the sandbox: the problem's own example calls (the docstring's,
//!   MBPP's assertions') and seeded, type-directed random arguments built
//!   from the signature. The key lists a digest of each call's value or
//!   exception type, so answers differing only in whitespace or names share
//!   a key and answers differing on one input do not. An answer that never
//!   ends is stopped per call after its CPU seconds (`!timeout`, the same on
//!   a busy machine as on an idle one); one that reads or writes files meets
//!   the sandbox's walls and is keyed by the exception it got. A program that
//!   gives no behaviour at all (it does not load, or runs past the wall
//!   clock) is keyed by how it ended and its own digest: a cluster of its
//!   own, so that answers that merely fail alike do not agree.
//! - CRUXEval: the answer's value, evaluated in the sandbox and written
//!   canonically (the judge compares values with `==`).
//! - Turbulence: the judge's fingerprint of the answer's own values on the
//!   fuzz inputs (never whether they match the reference's), or, where it
//!   stopped before them, how it ended and the answer's digest.
//! - Line completion: the first line, trimmed (the judge's exact match);
//!   REval: the reply with its whitespace collapsed (not the judge's own
//!   parse of a reply).
//!
//! Counting clusters is `confidence::agreement`'s job, not this module's.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::python_text::split_top_level;
use super::{JudgeError, Oracle, Problem, judge_all, run_each_once};
use crate::sandbox::{Ending, Execution, Sandbox};

const PROBE: &str = concat!(include_str!("canonical.py"), include_str!("behaviour.py"));

/// The marker the probe writes before its digests.
const MARKER: &str = "codecal-behaviour ";

/// How answers are probed.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeOptions {
    /// Seeds the random arguments (with the problem's id).
    pub seed: u64,
    /// Random argument lists per problem, besides its own examples.
    pub random_inputs: usize,
    /// At most this many of the problem's own examples.
    pub max_examples: usize,
    /// Seconds one call may take before it counts as `!timeout`.
    pub call_seconds: f64,
}

impl Default for ProbeOptions {
    fn default() -> ProbeOptions {
        ProbeOptions {
            seed: 0,
            random_inputs: 8,
            max_examples: 8,
            call_seconds: 1.0,
        }
    }
}

impl ProbeOptions {
    /// The wall clock a probe program needs at most: every call at its limit,
    /// plus Python's start-up and the answer's own definitions.
    pub fn wall_seconds(&self) -> f64 {
        self.call_seconds * (self.random_inputs + self.max_examples) as f64 + 3.0
    }
}

/// What finding a key takes.
enum Probing {
    Decided(String),
    Run(String),
    /// The oracle's own fingerprint (Turbulence), for the answer with this
    /// digest.
    Judge(String),
}

/// The key of each answer, in order. Identical programs run once.
pub fn behaviour_keys(
    pairs: &[(&Problem, &str)],
    sandbox: Option<&Sandbox>,
    jobs: usize,
    options: &ProbeOptions,
) -> Result<Vec<String>, JudgeError> {
    let probings: Vec<Probing> = pairs
        .iter()
        .map(|(problem, answer)| probing(problem, answer, options))
        .collect();
    let programs: Vec<&str> = probings
        .iter()
        .filter_map(|p| match p {
            Probing::Run(program) => Some(program.as_str()),
            _ => None,
        })
        .collect();
    let mut executions = run_each_once(&programs, sandbox, jobs)?.into_iter();
    let judged: Vec<(&Problem, &str)> = pairs
        .iter()
        .zip(&probings)
        .filter(|(_, p)| matches!(p, Probing::Judge(_)))
        .map(|(pair, _)| *pair)
        .collect();
    let mut fingerprints = if judged.is_empty() {
        Vec::new()
    } else {
        judge_all(&judged, sandbox, jobs)?
    }
    .into_iter();
    Ok(probings
        .into_iter()
        .map(|p| match p {
            Probing::Decided(key) => key,
            // One execution per program to run, in the same order.
            Probing::Run(program) => executions
                .next()
                .map(|e| key_of(&e, &program))
                .unwrap_or_default(),
            Probing::Judge(answer) => fingerprints
                .next()
                .map(|v| {
                    let fingerprint = v.fingerprint.unwrap_or_else(|| format!("{:?}", v.reason));
                    own_failure(fingerprint, &answer)
                })
                .unwrap_or_default(),
        })
        .collect())
}

fn probing(problem: &Problem, answer: &str, options: &ProbeOptions) -> Probing {
    let seconds = options.call_seconds;
    match &problem.oracle {
        Oracle::HumanEval {
            prompt,
            entry_point,
            ..
        } => {
            let inputs = probe_inputs(problem, options);
            Probing::Run(call_program(
                &format!("{prompt}{answer}"),
                entry_point,
                &inputs,
                seconds,
            ))
        }
        Oracle::Mbpp {
            prompt,
            setup,
            entry_point,
            ..
        } => {
            let inputs = probe_inputs(problem, options);
            Probing::Run(call_program(
                &format!("{prompt}{answer}\n{setup}"),
                entry_point,
                &inputs,
                seconds,
            ))
        }
        Oracle::CruxevalOutput { .. } => Probing::Run(value_program(answer, false, seconds)),
        Oracle::CruxevalInput { .. } => {
            let arguments = answer
                .trim()
                .strip_prefix("f(")
                .and_then(|rest| rest.strip_suffix(')'))
                .unwrap_or(answer);
            Probing::Run(value_program(arguments, true, seconds))
        }
        Oracle::ExactLine { .. } => {
            Probing::Decided(answer.lines().next().unwrap_or("").trim().to_owned())
        }
        Oracle::Reval { .. } => {
            Probing::Decided(answer.split_whitespace().collect::<Vec<_>>().join(" "))
        }
        Oracle::Turbulence { .. } => Probing::Judge(answer.to_owned()),
    }
}

/// A JSON string literal is a Python string literal too.
fn python_string(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

fn call_program(definitions: &str, entry_point: &str, inputs: &[String], seconds: f64) -> String {
    let inputs: Vec<String> = inputs.iter().map(|i| python_string(i)).collect();
    format!(
        "{definitions}\n{PROBE}\n_codecal_call_each({entry_point}, [{}], {seconds})\n",
        inputs.join(", ")
    )
}

fn value_program(source: &str, arguments: bool, seconds: f64) -> String {
    let arguments = if arguments { "True" } else { "False" };
    format!(
        "{PROBE}\n_codecal_value({}, {arguments}, {seconds})\n",
        python_string(source)
    )
}

/// A key for a program that gave no behaviour to compare (it did not load,
/// or ran past the wall clock, or the judge stopped before the fuzz step):
/// how it ended, and the program's own digest, so that it is a cluster of
/// its own, shared only with the same program, and failures that merely end
/// alike do not count as agreement.
fn own_failure(ending: String, program: &str) -> String {
    if ending.starts_with("fuzz:") {
        return ending;
    }
    let digest = crate::digest::sha256_hex(program.as_bytes());
    format!("{ending} #{}", &digest[..12])
}

/// The key of a probe's run: its digests when it finished, else how it
/// ended, the exception's type and the program's digest.
fn key_of(execution: &Execution, program: &str) -> String {
    if execution.ending == Ending::Finished
        && let Some(digests) = execution.message.strip_prefix(MARKER)
    {
        return digests.to_owned();
    }
    let exception = execution
        .message
        .split(':')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .next()
        .unwrap_or("");
    let ending = serde_json::to_value(execution.ending)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let ended = match execution.ending {
        Ending::Exception | Ending::SyntaxError | Ending::AssertionFailed => {
            format!("{ending}: {exception}")
        }
        _ => ending,
    };
    own_failure(ended, program)
}

/// The argument lists (Python source, without the parentheses) every answer
/// to a synthesis problem is called on: the problem's own example calls,
/// then seeded random ones from the signature. Empty for other tasks.
pub fn probe_inputs(problem: &Problem, options: &ProbeOptions) -> Vec<String> {
    let (examples, signature) = match &problem.oracle {
        Oracle::HumanEval {
            prompt,
            entry_point,
            ..
        } => {
            let body = prompt
                .find(&format!("def {entry_point}("))
                .map_or(prompt.as_str(), |at| &prompt[at..]);
            let after_def = body.find(')').map_or("", |at| &body[at..]);
            (
                calls_of(after_def, entry_point),
                signature_of(prompt, entry_point),
            )
        }
        Oracle::Mbpp {
            tests, entry_point, ..
        } => (
            tests
                .iter()
                .flat_map(|t| calls_of(t, entry_point))
                .collect(),
            signature_of(&problem.reference_answer, entry_point),
        ),
        _ => return Vec::new(),
    };
    let mut inputs: Vec<String> = Vec::new();
    for example in examples {
        if inputs.len() >= options.max_examples {
            break;
        }
        if !inputs.contains(&example) {
            inputs.push(example);
        }
    }
    if let Some(types) = signature {
        let seed = options.seed ^ id_seed(&problem.id);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..options.random_inputs {
            let values: Vec<String> = types.iter().map(|t| t.random(&mut rng, 0)).collect();
            inputs.push(values.join(", "));
        }
    }
    inputs
}

fn id_seed(id: &str) -> u64 {
    let digest = crate::digest::sha256_hex(id.as_bytes());
    u64::from_str_radix(&digest[..16], 16).unwrap_or_default()
}

/// The text between the parentheses of each call `name(...)` in `text`
/// (not `.name(` nor `other_name(`).
pub fn calls_of(text: &str, name: &str) -> Vec<String> {
    let needle = format!("{name}(");
    let mut calls = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find(&needle) {
        let at = from + found;
        from = at + needle.len();
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.') {
            continue;
        }
        if let Some(inside) = balanced(&text[from..]) {
            calls.push(inside.trim().to_owned());
        }
    }
    calls
}

/// The text up to the parenthesis that closes one already open, skipping
/// brackets and quoted strings; `None` when it never closes on this line
/// run.
fn balanced(text: &str) -> Option<&str> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if let Some(q) = quote {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                _ if c == q => quote = None,
                '\n' => return None,
                _ => {}
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth > 0 => depth -= 1,
            ')' => return Some(&text[..i]),
            ']' | '}' => return None,
            _ => {}
        }
    }
    None
}

/// The parameter types of `def name(...)`, `Any` where unannotated;
/// `None` when there is no such definition.
fn signature_of(code: &str, name: &str) -> Option<Vec<PyType>> {
    let needle = format!("def {name}(");
    let at = code.find(&needle)? + needle.len();
    let inside = balanced(&code[at..].replace('\n', " "))?.to_owned();
    Some(
        split_top_level(&inside, ',')
            .into_iter()
            .map(str::trim)
            .filter(|p| !p.is_empty() && *p != "self" && !p.starts_with('*') && *p != "/")
            .map(|param| {
                let param = param.split('=').next().unwrap_or(param);
                match param.split_once(':') {
                    Some((_, annotation)) => PyType::parse(annotation.trim()),
                    None => PyType::Any,
                }
            })
            .collect(),
    )
}

/// A parameter's type, as far as random arguments need it.
#[derive(Clone, Debug, PartialEq)]
pub enum PyType {
    Int,
    Float,
    Str,
    Bool,
    List(Box<PyType>),
    Tuple(Vec<PyType>),
    Dict(Box<PyType>, Box<PyType>),
    /// Unannotated or unknown: small integers, the commonest argument.
    Any,
}

impl PyType {
    /// Reads an annotation such as `List[Tuple[int, str]]` or `Optional[float]`.
    pub fn parse(annotation: &str) -> PyType {
        let annotation = annotation.trim().trim_matches(|c| c == '\'' || c == '"');
        let (head, args) = match annotation.split_once('[') {
            Some((head, rest)) => (head.trim(), rest.strip_suffix(']').unwrap_or(rest)),
            None => (annotation, ""),
        };
        let head = head.rsplit('.').next().unwrap_or(head).to_ascii_lowercase();
        let args: Vec<PyType> = if args.is_empty() {
            Vec::new()
        } else {
            split_top_level(args, ',')
                .into_iter()
                .map(PyType::parse)
                .collect()
        };
        let first = || args.first().cloned().unwrap_or(PyType::Any);
        match head.as_str() {
            "int" => PyType::Int,
            "float" => PyType::Float,
            "str" => PyType::Str,
            "bool" => PyType::Bool,
            "list" | "sequence" | "iterable" | "set" => PyType::List(Box::new(first())),
            "tuple" => PyType::Tuple(args.into_iter().filter(|t| *t != PyType::Any).collect()),
            "dict" | "mapping" => PyType::Dict(
                Box::new(first()),
                Box::new(args.get(1).cloned().unwrap_or(PyType::Any)),
            ),
            "optional" | "union" => first(),
            _ => PyType::Any,
        }
    }

    /// A random value of this type as a Python literal.
    pub fn random(&self, rng: &mut ChaCha8Rng, depth: usize) -> String {
        let length = |rng: &mut ChaCha8Rng| {
            if depth > 1 {
                0
            } else {
                rng.random_range(0..=5)
            }
        };
        match self {
            PyType::Int | PyType::Any => {
                let wide = rng.random_bool(0.2);
                let value: i64 = if wide {
                    rng.random_range(-100..=100)
                } else {
                    rng.random_range(-5..=10)
                };
                value.to_string()
            }
            PyType::Float => format!("{:.2}", rng.random_range(-10.0..10.0f64)),
            PyType::Bool => if rng.random_bool(0.5) {
                "True"
            } else {
                "False"
            }
            .into(),
            PyType::Str => {
                const LETTERS: &[u8] = b"abcdeABCDE xyz019";
                let n = rng.random_range(0..=8);
                let text: String = (0..n)
                    .map(|_| char::from(LETTERS[rng.random_range(0..LETTERS.len())]))
                    .collect();
                python_string(&text)
            }
            PyType::List(item) => {
                let n = length(rng);
                let items: Vec<String> = (0..n).map(|_| item.random(rng, depth + 1)).collect();
                format!("[{}]", items.join(", "))
            }
            PyType::Tuple(items) => {
                let items: Vec<String> = items.iter().map(|t| t.random(rng, depth + 1)).collect();
                match items.len() {
                    1 => format!("({},)", items[0]),
                    _ => format!("({})", items.join(", ")),
                }
            }
            PyType::Dict(key, value) => {
                let n = length(rng).min(3);
                let items: Vec<String> = (0..n)
                    .map(|_| {
                        format!(
                            "{}: {}",
                            key.random(rng, depth + 1),
                            value.random(rng, depth + 1)
                        )
                    })
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
        }
    }
}

/// The probe's Python source, for the judging fingerprint of a run.
pub fn probe_source() -> &'static str {
    PROBE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_calls_are_read_with_nested_brackets_and_strings() {
        let doc = ">>> f([1, (2, 3)], 'a)b')\n3\n>>> g.f(1)\n>>> xf(2)\nf(\"x\", k=2) == 1";
        assert_eq!(calls_of(doc, "f"), vec!["[1, (2, 3)], 'a)b'", "\"x\", k=2"]);
    }

    #[test]
    fn signatures_give_types_and_random_literals_follow_them() {
        let code = "def f(xs: List[Tuple[int, str]], d: Dict[str, float], n, *args, flag: bool = True) -> int:";
        let types = signature_of(code, "f").unwrap();
        assert_eq!(
            types,
            vec![
                PyType::List(Box::new(PyType::Tuple(vec![PyType::Int, PyType::Str]))),
                PyType::Dict(Box::new(PyType::Str), Box::new(PyType::Float)),
                PyType::Any,
                PyType::Bool,
            ]
        );
        assert_eq!(PyType::parse("Optional[str]"), PyType::Str);
        let mut a = ChaCha8Rng::seed_from_u64(7);
        let mut b = ChaCha8Rng::seed_from_u64(7);
        let first: Vec<String> = types.iter().map(|t| t.random(&mut a, 0)).collect();
        let again: Vec<String> = types.iter().map(|t| t.random(&mut b, 0)).collect();
        assert_eq!(first, again, "seeded");
        assert!(first[0].starts_with('[') && first[1].starts_with('{'));
        assert!(first[3] == "True" || first[3] == "False");
    }
}
