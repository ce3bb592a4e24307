//! REval (Chen et al., ICSE 2025; "Open the Oyster"'s CCP, PSP, EPP and OP):
//! questions about how a program behaves at run time, read from the
//! benchmark's own files (`DREval_data.jsonl`, `DREval_tasks.jsonl` and the
//! `prompts/direct_*.txt` templates, as `../shared/data/reval/` holds them).
//!
//! REval stores no answers: the ground truth comes from tracing the program
//! on its input. That happens in the sandbox, in `reval/judge.py` (ours,
//! carried in the binary), which traces the (program, input) pair, parses
//! the model's reply by the rules SOURCE.md states and compares values as
//! Python values; a wrong answer ends the program with an `AssertionError`.
//! This module builds the questions and the judging program; it runs
//! nothing itself.

use std::path::Path;

use serde::Deserialize;

use super::{Oracle, Problem};
use crate::corpus::{CorpusError, read_text};

/// The worker the sandbox runs for every REval question.
pub const JUDGE_PY: &str = include_str!("../../reval/judge.py");

/// The four runtime-behaviour questions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Question {
    /// Is line L executed? (CCP)
    Coverage,
    /// The value and type of a variable after line L. (PSP)
    State,
    /// The line that runs next after line L. (EPP)
    Path,
    /// The output of the call, completing an assertion. (OP)
    Output,
}

impl Question {
    /// The name REval's files and the judge use.
    pub fn name(self) -> &'static str {
        match self {
            Question::Coverage => "coverage",
            Question::State => "state",
            Question::Path => "path",
            Question::Output => "output",
        }
    }
}

#[derive(Deserialize)]
struct ProgramLine {
    task_id: String,
    entry_point: String,
    code: String,
    inputs: Vec<String>,
    #[serde(default)]
    outputs: Vec<String>,
    test: Option<String>,
}

#[derive(Deserialize)]
struct TasksLine {
    task_id: String,
    tasks: Vec<InputTasks>,
}

#[derive(Deserialize)]
struct InputTasks {
    input_idx: usize,
    task: Vec<Point>,
    output_pred: String,
}

#[derive(Deserialize)]
struct Point {
    lineno: usize,
    var: String,
}

/// One REval question: a program, one of its inputs, and (except for
/// output) a line and a variable.
struct Asked<'a> {
    program: &'a ProgramLine,
    input: &'a InputTasks,
    point: Option<&'a Point>,
}

/// Every question of kind `question` in the REval directory `dir`, each a
/// [`Problem`] whose group is its program (cross-validation never splits a
/// program's questions).
pub fn read(dir: &Path, question: Question) -> Result<Vec<Problem>, CorpusError> {
    let programs: Vec<ProgramLine> =
        super::datasets::read_json_lines(&dir.join("DREval_data.jsonl"))?;
    let tasks: Vec<TasksLine> = super::datasets::read_json_lines(&dir.join("DREval_tasks.jsonl"))?;
    let template_path = dir.join(format!("prompts/direct_{}.txt", question.name()));
    let template = read_text(&template_path)?;
    let mut problems = Vec::new();
    for line in &tasks {
        let program = programs
            .iter()
            .find(|p| p.task_id == line.task_id)
            .ok_or_else(|| CorpusError::Malformed {
                path: dir.join("DREval_tasks.jsonl"),
                line: 0,
                reason: format!("{} is not in DREval_data.jsonl", line.task_id),
            })?;
        for input in &line.tasks {
            if input.input_idx >= program.inputs.len() {
                return Err(CorpusError::Malformed {
                    path: dir.join("DREval_tasks.jsonl"),
                    line: 0,
                    reason: format!("{}: no input {}", line.task_id, input.input_idx),
                });
            }
            let asked: Vec<Asked> = match question {
                Question::Output => vec![Asked {
                    program,
                    input,
                    point: None,
                }],
                _ => input
                    .task
                    .iter()
                    .map(|point| Asked {
                        program,
                        input,
                        point: Some(point),
                    })
                    .collect(),
            };
            for (j, asked) in asked.iter().enumerate() {
                problems.push(problem(&template, question, asked, j));
            }
        }
    }
    Ok(problems)
}

fn problem(template: &str, question: Question, asked: &Asked, index: usize) -> Problem {
    let Asked {
        program,
        input,
        point,
    } = asked;
    let input_text = &program.inputs[input.input_idx];
    let id = match point {
        Some(p) => format!(
            "{}/input-{}/point-{index}:L{}:{}",
            program.task_id, input.input_idx, p.lineno, p.var
        ),
        None => format!("{}/input-{}", program.task_id, input.input_idx),
    };
    let job = serde_json::json!({
        "mode": "judge",
        "kind": if program.test.is_some() { "classeval" } else { "humaneval" },
        "code": program.code,
        "entry_point": program.entry_point,
        "input": input_text,
        "test": program.test,
        "questions": [{
            "task": question.name(),
            "lineno": point.map(|p| p.lineno),
            "var": point.map(|p| p.var.clone()),
            "question": input.output_pred,
        }],
    });
    let reference_answer = match question {
        // The HumanEval part records each call's output; ClassEval's come
        // only from running the test.
        Question::Output => program
            .outputs
            .get(input.input_idx)
            .map(|output| input.output_pred.replacen("??", output, 1))
            .unwrap_or_default(),
        _ => String::new(),
    };
    Problem {
        id,
        prompt: fill(template, question, asked),
        reference_answer,
        oracle: Oracle::Reval {
            question: question.name().to_owned(),
            job: job.to_string(),
        },
        group: Some(program.task_id.clone()),
    }
}

/// The template with its slots filled as SOURCE.md describes: the path
/// question numbers the code's lines (`N<TAB>line`); a ClassEval question
/// shows the test's `setUp` as comments before the test code.
fn fill(template: &str, question: Question, asked: &Asked) -> String {
    let Asked {
        program,
        input,
        point,
    } = asked;
    let classeval = program.test.is_some();
    let code = match question {
        Question::Path => program
            .code
            .lines()
            .enumerate()
            .map(|(i, line)| format!("{}\t{line}", i + 1))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => program.code.trim_end().to_owned(),
    };
    let call = call_of(&input.output_pred);
    let invocation = match (question, classeval) {
        (Question::Output, false) => input.output_pred.clone(),
        (Question::Output, true) => format!(
            "{}# Test code starts here. Only write the completed test code in your answer.\n{}",
            set_up_comment(program),
            input.output_pred
        ),
        (_, false) => call.clone(),
        (_, true) => format!(
            "{}{}",
            set_up_comment(program),
            program.inputs[input.input_idx].trim_end()
        ),
    };
    let abbreviated = if classeval {
        "the above test code".to_owned()
    } else {
        call
    };
    let line = point.map(|p| p.lineno).unwrap_or(0);
    let codeline = program
        .code
        .lines()
        .nth(line.saturating_sub(1))
        .unwrap_or("");
    // `{invocation_abbr}` first: `{invocation}` is a prefix of its name.
    template
        .replace("{code}", &code)
        .replace("{invocation_abbr}", &abbreviated)
        .replace("{invocation}", &invocation)
        .replace("{line}", &line.to_string())
        .replace("{codeline}", codeline)
        .replace("{var}", point.map_or("", |p| p.var.as_str()))
}

/// `f(1, 2)` from `assert f(1, 2) == ??`.
fn call_of(output_pred: &str) -> String {
    let text = output_pred.trim();
    let text = text.strip_prefix("assert ").unwrap_or(text);
    text.strip_suffix("== ??")
        .unwrap_or(text)
        .trim_end()
        .to_owned()
}

/// The test class's `setUp` method, each line commented, or nothing.
fn set_up_comment(program: &ProgramLine) -> String {
    let Some(test) = &program.test else {
        return String::new();
    };
    let lines: Vec<&str> = test.lines().collect();
    let Some(start) = lines
        .iter()
        .position(|l| l.trim_start().starts_with("def setUp("))
    else {
        return String::new();
    };
    let indent = lines[start].len() - lines[start].trim_start().len();
    let mut out = String::new();
    for (k, line) in lines[start..].iter().enumerate() {
        let inside = line.trim().is_empty() || line.len() - line.trim_start().len() > indent;
        if k > 0 && !inside {
            break;
        }
        out += &format!("# {}\n", line.get(indent.min(line.len())..).unwrap_or(line));
    }
    out.trim_end_matches("# \n").to_owned()
}

/// The program the sandbox runs to judge `reply` for the question whose
/// job (without a reply) is `job`: the judge, then its call.
pub fn judging_program(job: &str, reply: &str) -> String {
    let mut value: serde_json::Value = serde_json::from_str(job).unwrap_or_default();
    if let Some(question) = value["questions"].get_mut(0) {
        question["reply"] = serde_json::Value::String(reply.to_owned());
    }
    call_judge(&value)
}

/// The program that writes the ground truth of the question, and the answer
/// a perfect model would give, as the last line of its standard error.
pub fn truth_program(job: &str) -> String {
    let mut value: serde_json::Value = serde_json::from_str(job).unwrap_or_default();
    value["mode"] = "truth".into();
    call_judge(&value)
}

fn call_judge(job: &serde_json::Value) -> String {
    super::run_job_program(JUDGE_PY, job)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_cut_from_its_assertion() {
        assert_eq!(call_of("assert f([1, 2], 0.3) == ??"), "f([1, 2], 0.3)");
        assert_eq!(call_of("assert g('a == b') == ??"), "g('a == b')");
    }

    #[test]
    fn set_up_is_shown_as_comments() {
        let program = ProgramLine {
            task_id: "t".into(),
            entry_point: "A".into(),
            code: String::new(),
            inputs: vec![],
            outputs: vec![],
            test: Some(
                "class T(unittest.TestCase):\n    def setUp(self):\n        self.a = A()\n\n    def test_x(self):\n        pass\n"
                    .into(),
            ),
        };
        assert_eq!(
            set_up_comment(&program),
            "# def setUp(self):\n#     self.a = A()\n"
        );
    }
}
