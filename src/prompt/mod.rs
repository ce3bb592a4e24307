//! Few-shot summarization prompts in the summarization seed's format: each
//! exemplar's code, the instruction, `Comment: <reference>`; then the query's
//! code, the instruction and an empty comment.
//!
//! A [`Template`] holds the two blocks as text with `{code}` and `{reference}`
//! placeholders, so users can change the wording in a file. [`Prompt`] is
//! either one completion string or chat messages. Which exemplars to show is
//! `retrieve`'s business; sending the prompt is `generate`'s.

pub mod asap;

use serde::{Deserialize, Serialize};

/// The seed's template; `[exemplar]` and `[query]` open the two blocks.
pub const SEED_TEMPLATE: &str = "[exemplar]
{code}
Write down the original comment written by the developer.
Comment: {reference}

[query]
{code}
Write down the original comment written by the developer.
Comment:";

/// The text blocks a prompt is made of.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    /// With `{code}` and `{reference}`.
    pub exemplar: String,
    /// With `{code}`.
    pub query: String,
}

#[derive(Debug, PartialEq, thiserror::Error)]
pub enum TemplateError {
    #[error("{source_name}: the template needs an [exemplar] block and then a [query] block")]
    Blocks { source_name: String },
    #[error("{source_name}: the [{block}] block has no {placeholder}")]
    Placeholder {
        source_name: String,
        block: &'static str,
        placeholder: &'static str,
    },
}

impl Template {
    /// Parses template text; `source_name` names it in errors (a path, or "built-in").
    pub fn parse(text: &str, source_name: &str) -> Result<Template, TemplateError> {
        let blocks_error = || TemplateError::Blocks {
            source_name: source_name.to_owned(),
        };
        let rest = text
            .trim_start()
            .strip_prefix("[exemplar]\n")
            .ok_or_else(blocks_error)?;
        let (exemplar, query) = rest.split_once("\n[query]\n").ok_or_else(blocks_error)?;
        let template = Template {
            exemplar: exemplar.trim_end_matches('\n').to_owned(),
            query: query.trim_end_matches('\n').to_owned(),
        };
        let needs = [
            ("exemplar", &template.exemplar, "{code}"),
            ("exemplar", &template.exemplar, "{reference}"),
            ("query", &template.query, "{code}"),
        ];
        for (block, text, placeholder) in needs {
            if !text.contains(placeholder) {
                return Err(TemplateError::Placeholder {
                    source_name: source_name.to_owned(),
                    block,
                    placeholder,
                });
            }
        }
        Ok(template)
    }

    pub fn seed() -> Template {
        Template::parse(SEED_TEMPLATE, "built-in").expect("the built-in template parses")
    }

    /// Where an answer has run into the template's next block: the query
    /// block's fixed lines (the instruction, `Comment:`), which a model that
    /// continues the pattern writes after its summary on the same line
    /// ("… Write down the original comment written by the developer.").
    pub fn stops(&self) -> Vec<String> {
        self.query
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.contains("{code}"))
            .map(str::to_owned)
            .collect()
    }
}

/// How the prompt is sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PromptStyle {
    /// One string for a completion endpoint.
    #[default]
    Completion,
    /// Messages: each exemplar a user turn and an assistant answer, then the query.
    Chat,
}

crate::choices!(PromptStyle { Completion => "completion", Chat => "chat" });

/// One chat message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: String,
    pub content: String,
}

impl Message {
    pub fn new(role: &str, content: impl Into<String>) -> Message {
        Message {
            role: role.to_owned(),
            content: content.into(),
        }
    }
}

/// A finished prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Prompt {
    Completion(String),
    Chat(Vec<Message>),
}

/// An exemplar to show: its code and its reference summary.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shot<'a> {
    pub code: &'a str,
    pub reference: &'a str,
}

/// Tokens are estimated as characters / 4: the budget is a guard against
/// overlong prompts before any model's tokenizer is known, not an exact count.
pub fn estimated_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// Builds the prompt for `query_code` after `shots`. With a `budget` (in
/// estimated tokens), the longest code is cut first, exemplars before the
/// query; the query is shortened only when the exemplars alone cannot make
/// room, and never dropped.
pub fn build(
    template: &Template,
    style: PromptStyle,
    shots: &[Shot],
    query_code: &str,
    budget: Option<usize>,
) -> Prompt {
    let mut codes: Vec<String> = shots.iter().map(|s| s.code.to_owned()).collect();
    let mut query = query_code.to_owned();
    if let Some(budget) = budget {
        fit(template, shots, &mut codes, &mut query, budget);
    }
    let fill_exemplar = |code: &str, reference: &str| {
        template
            .exemplar
            .replace("{code}", code)
            .replace("{reference}", reference)
    };
    let fill_query = |code: &str| template.query.replace("{code}", code);
    match style {
        PromptStyle::Completion => {
            let mut parts: Vec<String> = shots
                .iter()
                .zip(&codes)
                .map(|(shot, code)| fill_exemplar(code, shot.reference))
                .collect();
            parts.push(fill_query(&query));
            Prompt::Completion(parts.join("\n\n"))
        }
        PromptStyle::Chat => {
            // The user turn is the exemplar block up to its reference; the answer is the reference.
            let question = |code: &str| {
                let head = template.exemplar.split("{reference}").next().unwrap_or("");
                head.replace("{code}", code).trim_end().to_owned()
            };
            let mut messages = Vec::new();
            for (shot, code) in shots.iter().zip(&codes) {
                messages.push(Message::new("user", question(code)));
                messages.push(Message::new("assistant", shot.reference));
            }
            messages.push(Message::new("user", fill_query(&query)));
            Prompt::Chat(messages)
        }
    }
}

/// Cuts code until the completion prompt's estimate fits `budget`.
fn fit(
    template: &Template,
    shots: &[Shot],
    codes: &mut [String],
    query: &mut String,
    budget: usize,
) {
    let size = |codes: &[String], query: &str| {
        let exemplars: usize = shots
            .iter()
            .zip(codes)
            .map(|(s, c)| {
                estimated_tokens(
                    &template
                        .exemplar
                        .replace("{code}", c)
                        .replace("{reference}", s.reference),
                )
            })
            .sum();
        exemplars + estimated_tokens(&template.query.replace("{code}", query))
    };
    while size(codes, query) > budget {
        let over = size(codes, query) - budget;
        let longest = codes
            .iter_mut()
            .max_by_key(|c| c.chars().count())
            .filter(|c| !c.is_empty());
        let target = match longest {
            Some(code) => code,
            None if !query.is_empty() => query,
            None => return,
        };
        let keep = target.chars().count().saturating_sub(over * 4);
        *target = target.chars().take(keep).collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_template_stops_at_its_instruction_and_comment_lines() {
        let stops = Template::seed().stops();
        assert_eq!(
            stops,
            [
                "Write down the original comment written by the developer.",
                "Comment:"
            ]
        );
        let reply = " Returns the size . Write down the original comment written by the developer.";
        let end = crate::generate::stop_at(reply, &stops, false);
        assert_eq!(end.map(|end| &reply[..end]), Some(" Returns the size . "));
    }

    const SHOTS: [Shot; 2] = [
        Shot {
            code: "int size() { return n; }",
            reference: "Returns the size .",
        },
        Shot {
            code: "void clear() { n = 0; }",
            reference: "Removes all items .",
        },
    ];

    #[test]
    fn completion_prompt_is_the_seed_format() {
        let prompt = build(
            &Template::seed(),
            PromptStyle::Completion,
            &SHOTS,
            "boolean isEmpty() { return n == 0; }",
            None,
        );
        let Prompt::Completion(text) = prompt else {
            panic!("completion expected")
        };
        assert_eq!(
            text,
            "int size() { return n; }\nWrite down the original comment written by the developer.\nComment: Returns the size .\n\n\
             void clear() { n = 0; }\nWrite down the original comment written by the developer.\nComment: Removes all items .\n\n\
             boolean isEmpty() { return n == 0; }\nWrite down the original comment written by the developer.\nComment:"
        );
    }

    #[test]
    fn chat_prompt_pairs_questions_and_answers() {
        let Prompt::Chat(messages) =
            build(&Template::seed(), PromptStyle::Chat, &SHOTS, "q()", None)
        else {
            panic!("chat expected")
        };
        assert_eq!(messages.len(), 5);
        assert_eq!(
            messages[0].content,
            "int size() { return n; }\nWrite down the original comment written by the developer.\nComment:"
        );
        assert_eq!(
            (messages[1].role.as_str(), messages[1].content.as_str()),
            ("assistant", "Returns the size .")
        );
        assert!(messages[4].content.starts_with("q()\n"));
    }

    #[test]
    fn budget_cuts_exemplars_first_and_keeps_the_query() {
        let long = "x".repeat(4000);
        let shots = [Shot {
            code: &long,
            reference: "Long one .",
        }];
        let Prompt::Completion(text) = build(
            &Template::seed(),
            PromptStyle::Completion,
            &shots,
            "short()",
            Some(200),
        ) else {
            panic!()
        };
        assert!(
            estimated_tokens(&text) <= 200,
            "{}",
            estimated_tokens(&text)
        );
        assert!(
            text.contains("short()\nWrite down"),
            "the query stays whole"
        );
        assert!(
            text.contains("Comment: Long one ."),
            "the exemplar's reference stays"
        );
    }

    #[test]
    fn template_errors_name_the_block_and_placeholder() {
        assert_eq!(
            Template::parse("[exemplar]\n{code}\n[query]\n{code}", "t.txt"),
            Err(TemplateError::Placeholder {
                source_name: "t.txt".into(),
                block: "exemplar",
                placeholder: "{reference}"
            })
        );
        assert!(matches!(
            Template::parse("{code}", "t.txt"),
            Err(TemplateError::Blocks { .. })
        ));
    }
}
