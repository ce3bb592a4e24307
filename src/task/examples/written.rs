//! Tests the model writes from the prompt alone, in the manner of CodeT
//! (Chen et al. 2022, "CodeT: Code Generation with Generated Tests", §2):
//! the prompt as code the model continues, closed by `pass`, the comment
//! `# check the correctness of <entry point>` and `assert <entry point>(`;
//! the assertions are read from the continuation. And CodeT's dual
//! execution agreement, scored for the main answer.
//!
//! CodeT samples many test replies; one greedy reply here keeps the cost to
//! one generation per problem (reported in the sources table's tokens). A
//! written test that copies an example the prompt already shows is dropped,
//! so that `model_tests` adds to `spec_examples` rather than repeating it.
//!
//! Not here: asking the model (the generation stage) or running the tests
//! (`run`, the same programs as the shown examples').

use super::{Example, Form, shown_examples, split_comparison};
use crate::task::python_text::{
    call_end, calls, is_expression, is_literal, split_top_level, without_comment,
};
use crate::task::{Oracle, Problem};

/// The share of the model-written tests the main answer passes.
pub const MODEL_TESTS: &str = "model_tests";
/// CodeT's dual agreement of the main answer: the answers that pass exactly
/// the written tests it passes, times those tests, over all answers times
/// all tests (with samples).
pub const DUAL_AGREEMENT: &str = "dual_agreement";
/// Every measure read from the model-written tests.
pub const WRITTEN_MEASURES: [&str; 2] = [MODEL_TESTS, DUAL_AGREEMENT];

/// Where the model's test reply stops: the end of the block of assertions.
pub const TEST_STOPS: [&str; 5] = ["\ndef ", "\nclass ", "\nif ", "\nprint(", "\n```"];

/// Tokens allowed per test asked for: room for one assertion of a few
/// lists, not for an essay after the last one.
pub const TOKENS_PER_TEST: usize = 32;

/// The text the model continues to write tests for `problem`; `None` for a
/// task that is not function synthesis. HumanEval's prompt is code (a
/// signature and docstring), closed with `pass`; MBPP's is prose, shown as
/// comments.
pub fn test_prompt(problem: &Problem) -> Option<String> {
    let (context, entry_point) = match &problem.oracle {
        Oracle::HumanEval { entry_point, .. } => {
            (format!("{}    pass\n", problem.prompt), entry_point)
        }
        Oracle::Mbpp { entry_point, .. } => {
            let commented: String = problem
                .prompt
                .lines()
                .map(|line| format!("# {line}").trim_end().to_owned() + "\n")
                .collect();
            (commented, entry_point)
        }
        _ => return None,
    };
    Some(format!(
        "{context}\n\n# check the correctness of {entry_point}\nassert {entry_point}("
    ))
}

/// What was read from one test reply.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WrittenTests {
    /// At most `k` tests, in the reply's order, without repeats or copies of
    /// the prompt's own examples.
    pub tests: Vec<Example>,
    /// Assertion lines that could not be run as one: unbalanced, cut off,
    /// or not calling the entry point.
    pub unread: usize,
}

/// The first `k` tests of `problem` in `reply` (the continuation of
/// [`test_prompt`]). `cut` says the reply ended at its token limit, so its
/// last line may be unfinished and is not read.
pub fn read_tests(problem: &Problem, reply: &str, cut: bool, k: usize) -> WrittenTests {
    let entry_point = match &problem.oracle {
        Oracle::HumanEval { entry_point, .. } | Oracle::Mbpp { entry_point, .. } => entry_point,
        _ => return WrittenTests::default(),
    };
    let text = format!("assert {entry_point}({reply}");
    let mut lines: Vec<&str> = text.lines().collect();
    if cut && !text.ends_with('\n') {
        lines.pop();
    }
    // What the prompt shows and what was read so far, as keys: a written
    // test that checks the same as one of them is not another test.
    let mut seen: Vec<String> = shown_examples(problem).examples.iter().map(key).collect();
    let mut read = WrittenTests::default();
    for line in lines {
        let line = without_comment(line).trim();
        let Some(condition) = line.strip_prefix("assert ") else {
            continue;
        };
        if !calls(line, entry_point) || !is_whole(condition) {
            read.unread += 1;
            continue;
        }
        let test = assertion(line, condition, entry_point);
        if !seen.contains(&key(&test)) {
            seen.push(key(&test));
            read.tests.push(test);
        }
        if read.tests.len() == k {
            break;
        }
    }
    read
}

/// Whether an assertion's condition is complete: balanced, and not ending
/// in an operator or a separator a cut reply leaves.
fn is_whole(condition: &str) -> bool {
    let end = condition.trim_end().chars().last();
    is_expression(condition)
        && !matches!(
            end,
            None | Some('=' | ',' | '+' | '-' | '*' | '/' | '<' | '>' | '\\')
        )
}

/// `assert <call> == <literal>` (with or without a message) as a call
/// example, compared as the shown examples are (floats within 1e-6); any
/// other assertion as written.
fn assertion(line: &str, condition: &str, entry_point: &str) -> Example {
    let checked = match split_top_level(condition, ',')[..] {
        [checked] | [checked, _] => checked,
        _ => condition,
    };
    if let Some((call, expected)) = split_comparison(checked) {
        let (call, expected) = (call.trim(), expected.trim());
        let one_call = call.starts_with(&format!("{entry_point}("))
            && call_end(call, entry_point.len()) == Some(call.len());
        if one_call && is_literal(expected) {
            return Example::Call {
                call: call.to_owned(),
                expected: expected.to_owned(),
                form: Form::Written,
            };
        }
    }
    Example::Assert {
        statement: line.to_owned(),
    }
}

/// What an example checks, with whitespace dropped, so that a written test
/// and a shown example that check the same are seen to be one.
fn key(example: &Example) -> String {
    let text = match example {
        Example::Call { call, expected, .. } => format!("assert {call}=={expected}"),
        Example::Assert { statement } => statement.clone(),
    };
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// CodeT's dual agreement for the first answer (the main one) of answers
/// whose pass/fail on each written test is `passes` (one row per answer):
/// its consensus set is the answers that pass exactly the tests it passes,
/// and its score |answers in the set| x |tests it passes|, here over
/// |answers| x |tests| so that it lies in [0, 1]. `None` without samples or
/// without tests.
pub fn dual_agreement(passes: &[Vec<bool>]) -> Option<f64> {
    let (main, _) = passes.split_first()?;
    if passes.len() < 2 || main.is_empty() {
        return None;
    }
    let consensus = passes.iter().filter(|p| *p == main).count();
    let passed = main.iter().filter(|p| **p).count();
    Some((consensus * passed) as f64 / (passes.len() * main.len()) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn humaneval(prompt: &str) -> Problem {
        Problem {
            id: "t/0".into(),
            prompt: prompt.into(),
            reference_answer: String::new(),
            oracle: Oracle::HumanEval {
                prompt: prompt.into(),
                test: String::new(),
                entry_point: "f".into(),
            },
            group: None,
        }
    }

    fn call(call: &str, expected: &str) -> Example {
        Example::Call {
            call: call.into(),
            expected: expected.into(),
            form: Form::Written,
        }
    }

    #[test]
    fn the_test_prompt_closes_the_function_and_opens_an_assertion_of_it() {
        let prompt = "def f(a, b):\n    \"\"\"Add.\"\"\"\n";
        let text = test_prompt(&humaneval(prompt)).unwrap();
        assert_eq!(
            text,
            format!("{prompt}    pass\n\n\n# check the correctness of f\nassert f(")
        );
    }

    #[test]
    fn assertions_are_read_up_to_k_without_repeats_or_cut_lines() {
        let problem = humaneval("def f(a, b):\n    \"\"\"\n    >>> f(0, 0)\n    0\n    \"\"\"\n");
        let reply = "1, 2) == 3\nassert f(2, 2) == 4  # two\nassert f(1,2) == 3\n\
                     assert f(0, 0) == 0\nassert f(x) ==\nassert g(1) == 2\n\
                     assert f(1, 1) == sum([1, 1])\n    assert f(5, 5) == 10\n\
                     assert f(6, 6) == 12, \"case 6\"\nassert f(3, [1,";
        let read = read_tests(&problem, reply, true, 10);
        assert_eq!(
            read.tests,
            vec![
                call("f(1, 2)", "3"),
                call("f(2, 2)", "4"),
                // Not a literal on the right: run as written.
                Example::Assert {
                    statement: "assert f(1, 1) == sum([1, 1])".into()
                },
                call("f(5, 5)", "10"),
                // The message is not part of the value.
                call("f(6, 6)", "12"),
            ],
            "the repeat f(1,2) and the prompt's own f(0, 0) are dropped"
        );
        // `f(x) ==` is cut and `g(1)` does not call f; the last line is cut
        // by the token limit and not read at all.
        assert_eq!(read.unread, 2);
        assert_eq!(read_tests(&problem, reply, true, 2).tests.len(), 2);
    }

    #[test]
    fn a_reply_with_no_assertion_gives_no_test() {
        let problem = humaneval("def f(a):\n    pass\n");
        let read = read_tests(&problem, "", false, 5);
        // "assert f(" alone is unbalanced.
        assert!(read.tests.is_empty());
        assert_eq!(read.unread, 1);
    }

    #[test]
    fn dual_agreement_is_codet_s_consensus_score_over_its_largest_value() {
        let (t, f) = (true, false);
        let passes = vec![vec![t, t, f], vec![t, t, f], vec![t, f, f], vec![t, t, f]];
        // Three of four answers pass exactly the main one's two of three tests.
        assert_eq!(dual_agreement(&passes), Some(3.0 * 2.0 / (4.0 * 3.0)));
        assert_eq!(dual_agreement(&[vec![f, f], vec![f, f]]), Some(0.0));
        assert_eq!(dual_agreement(&[vec![t, t], vec![t, t]]), Some(1.0));
        assert_eq!(dual_agreement(&passes[..1]), None, "no samples");
        assert_eq!(dual_agreement(&[vec![], vec![]]), None, "no tests");
    }
}
