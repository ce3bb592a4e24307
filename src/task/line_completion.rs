//! Line completion on mined code, seed 000's DyPyBench protocol on code
//! anyone can mine: for each Python function, one non-blank, non-comment
//! line of its body, drawn with a seed, is the target; the prompt is
//! everything before it, signature and docstring included, and then the
//! target line's indentation, so that a model continues at the line's first
//! character; an answer is correct when its first line equals the target
//! once trimmed (exact match, seed 000's Table 7 notion).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{Oracle, Problem};
use crate::corpus::mine::FunctionSource;

/// One problem per function that has a line to complete, in the functions'
/// order. The same functions and seed give the same problems.
pub fn problems(functions: &[FunctionSource], seed: u64) -> Vec<Problem> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    functions
        .iter()
        .filter_map(|function| problem(function, &mut rng))
        .collect()
}

fn problem(function: &FunctionSource, rng: &mut ChaCha8Rng) -> Option<Problem> {
    let lines: Vec<&str> = function.text.lines().collect();
    let candidates: Vec<usize> = (function.body_start..lines.len())
        .filter(|&i| {
            let line = lines[i].trim();
            !line.is_empty() && !line.starts_with('#')
        })
        .collect();
    if candidates.is_empty() {
        return None;
    }
    let at = candidates[rng.random_range(0..candidates.len())];
    let target = lines[at];
    let indentation = &target[..target.len() - target.trim_start().len()];
    let mut prompt: String = lines[..at].iter().map(|line| format!("{line}\n")).collect();
    prompt += indentation;
    Some(Problem {
        id: function.id.clone(),
        prompt,
        reference_answer: lines[at].to_string(),
        oracle: Oracle::ExactLine {
            target: lines[at].to_string(),
        },
        group: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(text: &str, body_start: usize) -> FunctionSource {
        FunctionSource {
            id: "m.py#L1:f".into(),
            repo: "m".into(),
            func_name: "f".into(),
            text: text.into(),
            body_start,
        }
    }

    #[test]
    fn targets_are_body_lines_and_prompts_end_just_before_them() {
        let text =
            "def f(x):\n    \"\"\"Doc.\"\"\"\n    # a comment\n\n    y = x + 1\n    return y";
        let functions = vec![function(text, 2)];
        let mut targets = std::collections::BTreeSet::new();
        for seed in 0..20 {
            let problem = &problems(&functions, seed)[0];
            assert!(text.starts_with(&problem.prompt));
            assert!(problem.prompt.contains("\"\"\"Doc.\"\"\""));
            // The prompt ends with the target's indentation: the model
            // continues at the line's first character.
            assert!(problem.prompt.ends_with("\n    "), "{:?}", problem.prompt);
            let next = &text[problem.prompt.len()..];
            assert!(
                problem
                    .reference_answer
                    .ends_with(next.lines().next().unwrap())
            );
            assert!(!next.starts_with(' '));
            targets.insert(problem.reference_answer.trim().to_string());
        }
        let expected: std::collections::BTreeSet<String> =
            ["y = x + 1", "return y"].map(String::from).into();
        assert_eq!(targets, expected);
        assert_eq!(problems(&functions, 3), problems(&functions, 3));
    }

    #[test]
    fn a_function_with_nothing_to_complete_poses_no_problem() {
        let text = "def f():\n    \"\"\"Doc.\"\"\"\n    # only a comment";
        assert!(problems(&[function(text, 2)], 0).is_empty());
    }
}
