//! The examples a synthesis problem's *prompt* shows, and the programs that
//! run an answer on one of them in the sandbox: a confidence the model's
//! reader could compute too, since nothing hidden goes into it.
//!
//! HumanEval's docstrings show examples as doctests (`>>> f(x)` then the
//! value), or in prose: `f(x) == y`, `f(x) ➞ y`, `f(x) => y`, `f(x) -> y`,
//! `f(x) = y`, `f(x) should return y`, "For x = ... the output should be y",
//! and `Input:` / `Output:` blocks. MBPP's prompt in the MBPP paper's layout
//! (Austin et al. 2021, §2.1, which seed 000's Table 5 runs) shows the
//! problem's first test as an `assert` line; those are run as written. A
//! line that looks like an example but whose value is not a Python literal
//! (`tri(2) = 1 + (2 / 2) = 2`) is counted as skipped, never guessed at.
//!
//! Not here: which answers are run or how the results become confidences
//! (the task run's examples stage), nor the hidden tests (`task`'s oracles).

mod run;
pub mod written;

pub use super::python_text::is_literal;
use super::python_text::{
    Scanner, call_end, calls, depth, is_expression, split_top_level, without_comment,
};
use super::{Oracle, Problem};
pub use run::{EXAMPLE_CHECK, ExampleOutcome, example_program, run_checks, run_examples};

/// The share of a prompt's examples the answer passes.
pub const SPEC_EXAMPLES: &str = "spec_examples";
/// 1 where the answer passes every example the prompt shows, else 0.
pub const SPEC_EXAMPLES_ALL: &str = "spec_examples_all";
/// The share of the sampled answers that pass every example (with samples).
pub const SPEC_EXAMPLES_SAMPLES: &str = "spec_examples_samples";
/// Every measure read from the prompt's examples.
pub const SPEC_MEASURES: [&str; 3] = [SPEC_EXAMPLES, SPEC_EXAMPLES_ALL, SPEC_EXAMPLES_SAMPLES];

/// Whether `measure` comes from running answers in the sandbox on the
/// prompt's examples or on the tests the model wrote: missing where there
/// is nothing to run, which counts at 0 (review).
pub fn is_sandbox_measure(measure: &str) -> bool {
    SPEC_MEASURES.contains(&measure) || written::WRITTEN_MEASURES.contains(&measure)
}

/// One example a prompt shows.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Example {
    /// `call` (an expression that calls the entry point) should equal the
    /// literal `expected`.
    Call {
        call: String,
        expected: String,
        form: Form,
    },
    /// An assertion the prompt shows verbatim (MBPP's shown test).
    Assert { statement: String },
}

/// Where in the prompt an example was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Form {
    /// `>>> call` and the value on the next line(s).
    Doctest,
    /// `call OP value`, OP one of `==`, `==>`, `➞`, `=>`, `->`, `→`, `=`,
    /// "should return", "returns", "should be".
    Prose,
    /// "For x = v, ... the output should be y".
    OutputShouldBe,
    /// `Input: ...` then `Output: ...`.
    InputOutput,
    /// `assert call == value` in a test the model wrote (`written`).
    Written,
}

/// A prompt's examples, and the lines that looked like examples but did not
/// parse.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShownExamples {
    pub examples: Vec<Example>,
    pub skipped: Vec<String>,
}

/// The examples `problem`'s prompt shows; none for a task that is not
/// function synthesis.
pub fn shown_examples(problem: &Problem) -> ShownExamples {
    match &problem.oracle {
        Oracle::HumanEval { entry_point, .. } | Oracle::Mbpp { entry_point, .. } => {
            parse_examples(&problem.prompt, entry_point)
        }
        _ => ShownExamples::default(),
    }
}

/// The examples of calls to `entry_point` that `prompt` shows, in order,
/// without repeats.
pub fn parse_examples(prompt: &str, entry_point: &str) -> ShownExamples {
    let lines: Vec<&str> = prompt.lines().collect();
    let mut shown = ShownExamples::default();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        let (read, used) = if line.starts_with("assert ") && calls(line, entry_point) {
            (
                Some(Ok(Example::Assert {
                    statement: line.to_owned(),
                })),
                1,
            )
        } else if let Some(source) = line.strip_prefix(">>>") {
            doctest(source.trim(), &lines[i + 1..], entry_point)
        } else if let Some(input) = strip_prefix_ci(line, "input:") {
            input_output(input, &lines[i + 1..], entry_point)
        } else if let Some(read) =
            strip_prefix_ci(line, "for ").and_then(|rest| output_should_be(rest, entry_point))
        {
            (Some(read), 1)
        } else if let Some(call) = call_line(line, entry_point) {
            prose(call, &lines[i + 1..], entry_point)
        } else {
            (None, 1)
        };
        match read {
            Some(Ok(example)) if !shown.examples.contains(&example) => shown.examples.push(example),
            Some(Err(())) => shown.skipped.push(line.to_owned()),
            _ => {}
        }
        i += used.max(1);
    }
    shown
}

/// What one reader made of the line it was given: nothing (not an example),
/// an example, or an example it could not read; and the lines it used.
type Read = (Option<Result<Example, ()>>, usize);

fn call_example(call: String, expected: &str, form: Form) -> Result<Example, ()> {
    let expected = expected.trim();
    if !is_literal(expected) {
        return Err(());
    }
    Ok(Example::Call {
        call,
        expected: expected.to_owned(),
        form,
    })
}

/// `>>> source` and its output: the lines up to a blank one, the next
/// prompt or the docstring's end. No output is `None`, as doctest shows it.
fn doctest(source: &str, after: &[&str], entry_point: &str) -> Read {
    let output: Vec<&str> = after
        .iter()
        .map(|l| l.trim())
        .take_while(|l| !l.is_empty() && !l.starts_with(">>>") && !l.contains("\"\"\""))
        .collect();
    let used = 1 + output.len();
    let source = without_comment(source);
    if !calls(source, entry_point) {
        return (None, used);
    }
    if !is_expression(source) {
        return (Some(Err(())), used);
    }
    // `>>> f(x) == y` with no output line states its value (HumanEval/108).
    if output.is_empty()
        && let Some((call, value)) = split_comparison(source)
    {
        let read = call_example(call.trim().to_owned(), &clean_value(value), Form::Doctest);
        return (Some(read), used);
    }
    let expected = if output.is_empty() {
        "None".to_owned()
    } else {
        output.join(" ")
    };
    (
        Some(call_example(source.to_owned(), &expected, Form::Doctest)),
        used,
    )
}

/// `left == right` split at its one top-level `==`, where it has one.
fn split_comparison(source: &str) -> Option<(&str, &str)> {
    let mut scan = Scanner::default();
    let bytes = source.as_bytes();
    let mut found = None;
    for (i, c) in source.char_indices() {
        let outside = scan.depth == 0 && !scan.in_string();
        if outside && c == '=' && bytes.get(i + 1) == Some(&b'=') {
            if found.is_some() {
                return None;
            }
            found = Some(i);
        }
        scan.step(c);
    }
    found.map(|at| (&source[..at], &source[at + 2..]))
}

/// The line's call of `entry_point` at its start, after a bullet (`* `,
/// `- `) or a "for " (HumanEval/88, /150, /159).
fn call_line<'a>(line: &'a str, entry_point: &str) -> Option<&'a str> {
    let mut rest = line;
    for lead in ["* ", "- ", "for "] {
        if let Some(stripped) = strip_prefix_ci(rest, lead) {
            rest = stripped.trim_start();
        }
    }
    rest.starts_with(&format!("{entry_point}(")).then_some(rest)
}

/// A value as prose writes it, made a literal where that is plain: its
/// comment, a closing remark in parentheses and a full stop dropped, and
/// `true` / `false` read as Python's (HumanEval/76).
fn clean_value(value: &str) -> String {
    let mut value = without_comment(value).trim().to_owned();
    if !is_literal(&value)
        && let Some(at) = value.find(" (")
        && is_literal(value[..at].trim())
    {
        value = value[..at].trim().to_owned();
    }
    value = strip_sentence_end(&value);
    match value.as_str() {
        "true" => "True".to_owned(),
        "false" => "False".to_owned(),
        _ => value,
    }
}

/// The operators prose puts between a call and its value, longest first.
const PROSE_OPERATORS: [&str; 11] = [
    "should return",
    "should be",
    "returns",
    "==>",
    "==",
    "=>",
    "->",
    "➞",
    "→",
    "=",
    ":",
];

/// `f(args) OP value` on one line, the value continued on the next lines
/// while its brackets are open.
fn prose(line: &str, after: &[&str], entry_point: &str) -> Read {
    // A call whose arguments span lines (HumanEval/87) is read joined.
    let (line, call_lines) = continued(line, after);
    let Some(end) = call_end(&line, entry_point.len()) else {
        return (Some(Err(())), call_lines);
    };
    let (call, rest) = line.split_at(end);
    // `f(x)   # returns y` (HumanEval/79, /141).
    let rest = rest.trim_start().trim_start_matches('#').trim_start();
    // `g(n) = g(n - 1) + ...` defines; only a call on literals is an example.
    let inner = &call[entry_point.len() + 1..call.len() - 1];
    let literal_args = inner.trim().is_empty()
        || split_top_level(inner, ',')
            .into_iter()
            .all(|arg| is_literal(keyword_value(arg)));
    if !literal_args {
        return (None, call_lines);
    }
    let Some(value) = PROSE_OPERATORS.iter().find_map(|op| rest.strip_prefix(op)) else {
        return (None, call_lines);
    };
    let (value, used) = continued(value, &after[call_lines - 1..]);
    (
        Some(call_example(
            call.to_owned(),
            &clean_value(&value),
            Form::Prose,
        )),
        call_lines + used - 1,
    )
}

/// "For x = v[, y = w] the output (or result) should be z." (HumanEval/78,
/// /94, /112, /133):
/// the named values in order are the arguments.
fn output_should_be(rest: &str, entry_point: &str) -> Option<Result<Example, ()>> {
    // ASCII case only, so byte offsets in `lower` are offsets in `rest`.
    let lower = rest.to_ascii_lowercase();
    let (at, phrase) = ["the output should be", "the result should be"]
        .iter()
        .find_map(|phrase| Some((lower.find(phrase)?, phrase)))?;
    let expected = clean_value(&rest[at + phrase.len()..]);
    let named = rest[..at].trim().trim_end_matches(',');
    let args: Vec<String> = split_top_level(named, ',')
        .into_iter()
        .map_while(named_value)
        .collect();
    if args.is_empty() {
        return Some(Err(()));
    }
    let call = format!("{entry_point}({})", args.join(", "));
    Some(call_example(call, &expected, Form::OutputShouldBe))
}

/// `Input: a = v, b = w` (or the names on the following lines, `name : v`)
/// up to `Output: y`.
fn input_output(first: &str, after: &[&str], entry_point: &str) -> Read {
    let mut inputs = vec![first.trim()];
    let mut used = 1;
    let mut output = None;
    for line in after.iter().take(12) {
        used += 1;
        let line = line.trim();
        if let Some(value) = strip_prefix_ci(line, "output:") {
            output = Some(value);
            break;
        }
        inputs.push(line);
    }
    let Some(output) = output else {
        return (Some(Err(())), 1);
    };
    let (output, more) = continued(output, &after[used - 1..]);
    let args: Option<Vec<String>> = inputs
        .iter()
        .filter(|l| !l.is_empty())
        .flat_map(|l| split_top_level(l, ','))
        .map(named_value)
        .collect();
    let read = match args.filter(|a| !a.is_empty()) {
        Some(args) => {
            let call = format!("{entry_point}({})", args.join(", "));
            call_example(call, &clean_value(&output), Form::InputOutput)
        }
        None => Err(()),
    };
    (Some(read), used + more - 1)
}

/// The value of a call's argument `name=value`, or the argument itself.
fn keyword_value(arg: &str) -> &str {
    let arg = arg.trim();
    match arg.split_once('=') {
        Some((name, value)) if is_name(name.trim()) && !value.starts_with('=') => value.trim(),
        _ => arg,
    }
}

/// The literal of `name = value` or `name : value` (or a bare literal).
fn named_value(piece: &str) -> Option<String> {
    let piece = piece.trim();
    let value = match piece.find(['=', ':']) {
        Some(at) if is_name(piece[..at].trim()) && !piece[at..].starts_with("==") => {
            piece[at + 1..].trim()
        }
        _ => piece,
    };
    is_literal(value).then(|| value.to_owned())
}

fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// `value` joined with the lines after it while its brackets are open (at
/// most five), and how many lines were read in all.
fn continued(value: &str, after: &[&str]) -> (String, usize) {
    let mut text = value.trim().to_owned();
    let mut used = 1;
    for line in after.iter().take(5) {
        if depth(&text) <= 0 {
            break;
        }
        text.push(' ');
        text.push_str(line.trim());
        used += 1;
    }
    (text, used)
}

/// A value written at the end of a sentence, without its full stop.
fn strip_sentence_end(value: &str) -> String {
    let value = value.trim();
    match value.strip_suffix('.') {
        Some(stripped) if is_literal(stripped.trim()) => stripped.trim().to_owned(),
        _ => value.to_owned(),
    }
}

fn strip_prefix_ci<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    let head = line.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &line[prefix.len()..])
}

#[cfg(test)]
mod tests;
