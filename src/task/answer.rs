//! Cuts a model's raw generation down to the answer an oracle judges.
//!
//! Models wrap answers in Markdown fences, repeat the assertion they were
//! asked to complete, or run on past the answer; these rules undo that in
//! the ways the seed papers' scripts did. They never invent an answer: what
//! is not there stays missing, and the oracle judges it wrong.

use super::TaskKind;

/// The answer inside `raw` for a task of `kind`.
pub fn extract(kind: TaskKind, raw: &str) -> String {
    match kind {
        TaskKind::Summarize => first_nonblank_line(raw).trim().to_string(),
        TaskKind::Synthesis => unfence(raw),
        TaskKind::LineCompletion => first_nonblank_line(&unfence(raw)).to_string(),
        TaskKind::CruxevalOutput => cruxeval_answer(raw, Side::Right),
        TaskKind::CruxevalInput => cruxeval_answer(raw, Side::Left),
    }
}

fn first_nonblank_line(text: &str) -> &str {
    text.lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
}

/// The code inside the first Markdown fence, or the whole text without one.
/// A lone fence closes code that began the reply, or opens code that runs
/// to its end.
fn unfence(raw: &str) -> String {
    let Some(open) = raw.find("```") else {
        return raw.to_string();
    };
    let before = &raw[..open];
    let after_open = &raw[open + 3..];
    // Skip the fence's language tag line.
    let body = after_open.split_once('\n').map_or("", |(_, body)| body);
    match body.find("```") {
        Some(close) => body[..close].to_string(),
        None if !before.trim().is_empty() => before.to_string(),
        None => body.to_string(),
    }
}

enum Side {
    /// The `f(...)` call before `==` (input prediction).
    Left,
    /// The literal after `==` (output prediction).
    Right,
}

/// CRUXEval answers, as its prompts ask for them: between `[ANSWER]` and
/// `[/ANSWER]` where those markers appear, possibly as a whole assertion
/// `assert f(x) == y`, of which the wanted side is kept. A reply that
/// restates the code keeps only its last assertion line.
fn cruxeval_answer(raw: &str, side: Side) -> String {
    let mut answer = raw;
    if let Some((_, after)) = answer.split_once("[ANSWER]") {
        answer = after;
    }
    if let Some((before, _)) = answer.split_once("[/ANSWER]") {
        answer = before;
    }
    let unfenced = unfence(answer);
    let answer = unfenced.trim();
    let answer = answer
        .lines()
        .rev()
        .find(|line| line.trim_start().starts_with("assert ") && line.contains(" == "))
        .unwrap_or(answer)
        .trim();
    let answer = answer.strip_prefix("assert ").unwrap_or(answer);
    match (answer.split_once(" == "), side) {
        (Some((left, _)), Side::Left) => left.trim().to_string(),
        (Some((_, right)), Side::Right) => right.trim().to_string(),
        (None, _) => answer.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenced_code_loses_its_fence() {
        let raw = "Here:\n```python\ndef f(x):\n    return x\n```\nDone.";
        assert_eq!(
            extract(TaskKind::Synthesis, raw),
            "def f(x):\n    return x\n"
        );
        assert_eq!(
            extract(TaskKind::Synthesis, "def g(): pass"),
            "def g(): pass"
        );
    }

    #[test]
    fn cruxeval_keeps_the_asked_side_of_an_assertion() {
        let raw = "[ANSWER]assert f([1, 2]) == [2, 1][/ANSWER] trailing";
        assert_eq!(extract(TaskKind::CruxevalOutput, raw), "[2, 1]");
        assert_eq!(extract(TaskKind::CruxevalInput, raw), "f([1, 2])");
        assert_eq!(extract(TaskKind::CruxevalOutput, " 'abc'\n"), "'abc'");
        let restated = "```python\ndef f(x):\n    return x\nassert f(3) == 3\n```";
        assert_eq!(extract(TaskKind::CruxevalOutput, restated), "3");
    }

    #[test]
    fn a_completed_line_is_the_first_nonblank_one() {
        assert_eq!(
            extract(TaskKind::LineCompletion, "\n  x = 1\ny = 2"),
            "  x = 1"
        );
    }
}
