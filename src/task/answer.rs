//! Cuts a model's raw generation down to the answer an oracle judges.
//!
//! Models wrap answers in Markdown fences, repeat the assertion they were
//! asked to complete, or run on past the answer; these rules undo that in
//! the ways the seed papers' scripts did. They never invent an answer: what
//! is not there stays missing, and the oracle judges it wrong. Every answer
//! is a slice of the raw text, so [`span`] can say where it lies, and the
//! token measures can cover the answer's tokens and not the chat around it.

use std::ops::Range;

use super::TaskKind;

/// Seed 000 (§3.2) samples at most 500 tokens; its token measures cover no more.
pub const MAX_ANSWER_TOKENS: usize = 500;

/// The answer inside `raw` for a task of `kind`.
pub fn extract(kind: TaskKind, raw: &str) -> String {
    raw[span(kind, raw)].to_string()
}

/// Where in `raw` (bytes) the answer [`extract`] returns lies.
pub fn span(kind: TaskKind, raw: &str) -> Range<usize> {
    let answer = match kind {
        TaskKind::Summarize => first_nonblank_line(raw).trim(),
        TaskKind::Synthesis => unfence(raw),
        TaskKind::LineCompletion => first_nonblank_line(unfence(raw)),
        TaskKind::CruxevalOutput => cruxeval_answer(raw, Side::Right),
        TaskKind::CruxevalInput => cruxeval_answer(raw, Side::Left),
        TaskKind::RevalCoverage
        | TaskKind::RevalState
        | TaskKind::RevalPath
        | TaskKind::RevalOutput => between_answer_tags(raw),
        TaskKind::Turbulence => between_first_and_last_fence(raw),
    };
    within(raw, answer)
}

/// The part of `raw` whose tokens the confidence measures cover: the answer,
/// and for synthesis only up to the end of its first function block (seed
/// 000 stops there).
pub fn measured_span(kind: TaskKind, raw: &str) -> Range<usize> {
    let answer = span(kind, raw);
    match kind {
        TaskKind::Synthesis => {
            let block = function_block(&raw[answer.clone()]);
            answer.start..answer.start + block.len()
        }
        _ => answer,
    }
}

/// REval's answer: the text between `[ANSWER]` and `[/ANSWER]`, either
/// tag missing (the prompt ends with the opening one, so a reply usually
/// starts inside it), blank lines around it trimmed. The judge parses the
/// same text by REval's rules.
fn between_answer_tags(raw: &str) -> &str {
    let start = raw.find("[ANSWER]").map_or(0, |at| at + "[ANSWER]".len());
    let rest = &raw[start..];
    let inside = rest.find("[/ANSWER]").map_or(rest, |end| &rest[..end]);
    inside
        .trim_matches(|c: char| c == '\n' || c == '\r')
        .trim_end()
}

/// Turbulence's harness takes the code between the first and the last
/// Markdown fence (the first fence's language tag line left out); a reply
/// with fewer than two fences is taken whole, after a lone opening fence.
fn between_first_and_last_fence(raw: &str) -> &str {
    let (Some(first), Some(last)) = (raw.find("```"), raw.rfind("```")) else {
        return raw;
    };
    let after_first = &raw[first + 3..];
    let body = after_first
        .split_once('\n')
        .map_or(end_of(after_first), |(_, body)| body);
    if first == last {
        return body;
    }
    let end = last.saturating_sub(raw.len() - body.len());
    &body[..end.min(body.len())]
}

/// The byte range of `part`, a slice of `whole`, within `whole`.
fn within(whole: &str, part: &str) -> Range<usize> {
    let start = (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize);
    let start = start.min(whole.len());
    start..(start + part.len()).min(whole.len())
}

/// The empty slice at the end of `text`, so that "no answer" still lies in it.
fn end_of(text: &str) -> &str {
    &text[text.len()..]
}

fn first_nonblank_line(text: &str) -> &str {
    text.lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or(end_of(text))
}

/// Code up to the end of its first function block: the block ends at the
/// first non-blank line at column 0 after an indented body line, so that
/// imports and decorators before it stay and a test or second function
/// after it goes.
fn function_block(code: &str) -> &str {
    let mut body_seen = false;
    let mut end = 0;
    for line in code.split_inclusive('\n') {
        let blank = line.trim().is_empty();
        let indented = line.starts_with([' ', '\t']);
        if !blank && !indented && body_seen {
            break;
        }
        body_seen |= !blank && indented;
        end += line.len();
    }
    &code[..end]
}

/// The code inside the first Markdown fence, or the whole text without one.
/// A lone fence closes code that began the reply, or opens code that runs
/// to its end.
fn unfence(raw: &str) -> &str {
    let Some(open) = raw.find("```") else {
        return raw;
    };
    let before = &raw[..open];
    let after_open = &raw[open + 3..];
    // Skip the fence's language tag line.
    let body = after_open
        .split_once('\n')
        .map_or(end_of(after_open), |(_, body)| body);
    match body.find("```") {
        Some(close) => &body[..close],
        // An unclosed fence: a completion model's code before a fence it
        // went on to open (a function body: indented lines), or a chat
        // reply's code in a fence a stop sequence cut (prose, then a
        // function).
        None if before.trim().is_empty() => body,
        None if defines_function(body) && !defines_function(before) && !indented(before) => body,
        None => before,
    }
}

/// Whether any line of `text` is indented code (prose is not).
fn indented(text: &str) -> bool {
    text.lines()
        .any(|line| line.starts_with([' ', '\t']) && !line.trim().is_empty())
}

/// Whether `code` has a `def` (or `async def`) line.
pub(crate) fn defines_function(code: &str) -> bool {
    code.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with("def ") || line.starts_with("async def ")
    })
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
fn cruxeval_answer(raw: &str, side: Side) -> &str {
    let mut answer = raw;
    if let Some((_, after)) = answer.split_once("[ANSWER]") {
        answer = after;
    }
    if let Some((before, _)) = answer.split_once("[/ANSWER]") {
        answer = before;
    }
    let answer = unfence(answer).trim();
    let answer = answer
        .lines()
        .rev()
        .find(|line| line.trim_start().starts_with("assert ") && line.contains(" == "))
        .unwrap_or(answer)
        .trim();
    let answer = answer.strip_prefix("assert ").unwrap_or(answer);
    match (answer.split_once(" == "), side) {
        (Some((left, _)), Side::Left) => left.trim(),
        (Some((_, right)), Side::Right) => right.trim(),
        (None, _) => answer,
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
    fn a_fence_cut_by_a_stop_sequence_keeps_the_side_with_the_function() {
        // MBPP with a chat model: prose, then code in a fence that the stop
        // sequence `\nassert ` cut before it closed.
        let chat = "Use sets:\n\n```python\ndef f(a, b):\n    return set(a) & set(b)\n\n# Test\n";
        assert_eq!(
            extract(TaskKind::Synthesis, chat),
            "def f(a, b):\n    return set(a) & set(b)\n\n# Test\n"
        );
        // A completion model: the function's body, then a fence it opened
        // (even one that defines a function of its own).
        for completion in [
            "    return x + 1\n\n```python\nprint(f(1))",
            "    return x + 1\n\n```python\ndef check():\n    pass",
        ] {
            assert_eq!(
                extract(TaskKind::Synthesis, completion),
                "    return x + 1\n\n"
            );
        }
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

    #[test]
    fn an_answer_is_a_span_of_the_reply_and_measures_cover_only_it() {
        // Seed 000 (§3.2): prose, fences and a trailing test are not the answer.
        let raw = "Sure! Here it is:\n```python\ndef f(x):\n    return x\n\nassert f(1) == 1\n```\nHope it helps.";
        let answer = span(TaskKind::Synthesis, raw);
        assert_eq!(
            &raw[answer.clone()],
            "def f(x):\n    return x\n\nassert f(1) == 1\n"
        );
        let measured = measured_span(TaskKind::Synthesis, raw);
        assert_eq!(&raw[measured], "def f(x):\n    return x\n\n");
        let crux = "[ANSWER]assert f(3) == [1, 2][/ANSWER]";
        assert_eq!(&crux[span(TaskKind::CruxevalOutput, crux)], "[1, 2]");
        let empty = "   \n";
        assert_eq!(span(TaskKind::LineCompletion, empty), 4..4);
    }
}
