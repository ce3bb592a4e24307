//! Reflective confidence: ask the model about an answer, and read a number
//! from its reply.
//!
//! Each measure is a prompt template (a file users can edit; the built-in
//! ones are in `templates/reflective/`) and a parser. Some templates continue
//! the original conversation ("follow-up": the answer is shown as the
//! model's own turn); others open a fresh context that shows the code and the
//! answer ("fresh": `{code}` and `{answer}` are filled in). Every result
//! records the sha256 of the template that produced it.
//!
//! This module knows what to ask and how to read the reply (an [`Inquiry`]);
//! it does not ask. The generation stage puts each [`Question`] to the
//! backend through the response cache, like any other generation.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::generate::row::ReflectiveReading;
use regex::Regex;

use crate::generate::{Params, Token};
use crate::prompt::{Message, Prompt};

/// A reflective measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Measure {
    /// Seed 000's "Ask True/False": P(True) from the first two tokens' top log-probs.
    AskTrue,
    /// Verbalized 1-4 similarity (Haque et al.'s scale), zero-shot; confidence (r-1)/3.
    Verbalized14,
    /// The same with rated examples in the prompt.
    Verbalized14Fewshot,
    /// Seed 000's verbalized probability, asked as a follow-up.
    VerbalizedProbability,
    /// "Open the Oyster" intrinsic: answer and confidence in one reply.
    OysterIntrinsic,
    /// "Open the Oyster" reassess: told the answer may be wrong, asked again.
    OysterReassess,
    /// "Open the Oyster" reflective: a fresh context judges the answer.
    OysterReflective,
}

crate::choices!(Measure { AskTrue => "ask-true", Verbalized14 => "verbalized-1-4", Verbalized14Fewshot => "verbalized-1-4-fewshot", VerbalizedProbability => "verbalized-probability", OysterIntrinsic => "oyster-intrinsic", OysterReassess => "oyster-reassess", OysterReflective => "oyster-reflective" });

/// Whether a template continues the conversation or starts a new one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Context {
    FollowUp,
    Fresh,
}

impl Measure {
    pub const ALL: [Measure; 7] = [
        Measure::AskTrue,
        Measure::Verbalized14,
        Measure::Verbalized14Fewshot,
        Measure::VerbalizedProbability,
        Measure::OysterIntrinsic,
        Measure::OysterReassess,
        Measure::OysterReflective,
    ];

    /// The template's file name without `.txt`, and the measure's output name.
    pub fn name(self) -> &'static str {
        crate::choice::Choice::choice_name(self)
    }

    fn builtin_template(self, wording: Wording) -> &'static str {
        // Code tasks ask about an answer, not a comment; the 1-4 ratings are
        // Haque et al.'s similarity scale for summaries and the reassess
        // turn speaks of any answer, so those stay as they are.
        match (self, wording) {
            (Measure::AskTrue, Wording::Code) => {
                include_str!("../../templates/reflective-code/ask-true.txt")
            }
            (Measure::VerbalizedProbability, Wording::Code) => {
                include_str!("../../templates/reflective-code/verbalized-probability.txt")
            }
            (Measure::OysterIntrinsic, Wording::Code) => {
                include_str!("../../templates/reflective-code/oyster-intrinsic.txt")
            }
            (Measure::OysterReflective, Wording::Code) => {
                include_str!("../../templates/reflective-code/oyster-reflective.txt")
            }
            _ => self.summary_template(),
        }
    }

    fn summary_template(self) -> &'static str {
        match self {
            Measure::AskTrue => include_str!("../../templates/reflective/ask-true.txt"),
            Measure::Verbalized14 => include_str!("../../templates/reflective/verbalized-1-4.txt"),
            Measure::Verbalized14Fewshot => {
                include_str!("../../templates/reflective/verbalized-1-4-fewshot.txt")
            }
            Measure::VerbalizedProbability => {
                include_str!("../../templates/reflective/verbalized-probability.txt")
            }
            Measure::OysterIntrinsic => {
                include_str!("../../templates/reflective/oyster-intrinsic.txt")
            }
            Measure::OysterReassess => {
                include_str!("../../templates/reflective/oyster-reassess.txt")
            }
            Measure::OysterReflective => {
                include_str!("../../templates/reflective/oyster-reflective.txt")
            }
        }
    }

    fn context(self) -> Context {
        match self {
            Measure::VerbalizedProbability | Measure::OysterReassess => Context::FollowUp,
            _ => Context::Fresh,
        }
    }

    /// Decoding for the question: short replies, and for Ask True/False the
    /// top alternatives of the first two tokens.
    fn params(self, base: &Params) -> Params {
        let (max_tokens, stop) = match self {
            Measure::AskTrue => (2, Vec::new()),
            Measure::OysterIntrinsic => (120, Vec::new()),
            _ => (12, vec!["\n".to_owned()]),
        };
        Params {
            max_tokens,
            stop,
            top_logprobs: base.top_logprobs.max(5),
            ..base.clone()
        }
    }
}

/// The templates in use, each with its sha256.
#[derive(Clone, Debug)]
pub struct Templates {
    texts: BTreeMap<Measure, (String, String)>,
}

#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: a fresh-context template needs {{code}} and {{answer}}")]
    Placeholders { path: PathBuf },
}

/// Which built-in templates: about a comment (summaries) or about an answer
/// (code generation and reasoning tasks, from `templates/reflective-code/`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Wording {
    #[default]
    Summary,
    Code,
}

impl Templates {
    /// The built-in templates of `wording`, each replaced by
    /// `DIR/<name>.txt` where `dir` has one.
    pub fn load(dir: Option<&Path>, wording: Wording) -> Result<Templates, TemplateError> {
        let mut texts = BTreeMap::new();
        for measure in Measure::ALL {
            let file = dir.map(|d| d.join(format!("{}.txt", measure.name())));
            let text = match file.as_ref().filter(|f| f.is_file()) {
                Some(path) => {
                    let text =
                        std::fs::read_to_string(path).map_err(|source| TemplateError::Read {
                            path: path.clone(),
                            source,
                        })?;
                    let fresh = measure.context() == Context::Fresh;
                    if fresh
                        && !(text.contains("{code}") && text.contains("{answer}"))
                        && measure != Measure::OysterIntrinsic
                    {
                        return Err(TemplateError::Placeholders { path: path.clone() });
                    }
                    text
                }
                None => measure.builtin_template(wording).to_owned(),
            };
            // The file's final newline is not part of the prompt.
            let text = text.strip_suffix('\n').unwrap_or(&text).to_owned();
            let hash = crate::digest::sha256_hex(text.as_bytes());
            texts.insert(measure, (text, hash));
        }
        Ok(Templates { texts })
    }

    /// The sha256 of the template in use for `measure`.
    pub fn hash(&self, measure: Measure) -> &str {
        &self.texts[&measure].1
    }

    fn get(&self, measure: Measure) -> (&str, &str) {
        let (text, hash) = &self.texts[&measure];
        (text, hash)
    }
}

/// What a measure is about: the original prompt, the query's code and the answer.
pub struct Subject<'a> {
    pub prompt: &'a Prompt,
    pub code: Option<&'a str>,
    pub answer: &'a str,
}

#[derive(Debug, thiserror::Error)]
pub enum ReflectiveError {
    #[error("{measure} needs the query's code, and the prompt line has no \"code\" key")]
    NoCode { measure: &'static str },
}

/// The question a measure asks about `subject`.
fn question(
    measure: Measure,
    template: &str,
    subject: &Subject,
) -> Result<Prompt, ReflectiveError> {
    if measure.context() == Context::FollowUp {
        return Ok(match subject.prompt {
            Prompt::Completion(text) => {
                Prompt::Completion(format!("{text}{}{template}", subject.answer))
            }
            Prompt::Chat(messages) => {
                let mut messages = messages.clone();
                messages.push(Message::new("assistant", subject.answer));
                messages.push(Message::new("user", template.trim_start()));
                Prompt::Chat(messages)
            }
        });
    }
    let code = subject.code.ok_or(ReflectiveError::NoCode {
        measure: measure.name(),
    })?;
    let text = template
        .replace("{code}", code)
        .replace("{answer}", subject.answer.trim());
    Ok(match subject.prompt {
        Prompt::Completion(_) => Prompt::Completion(text),
        Prompt::Chat(_) => Prompt::Chat(vec![Message::new("user", text)]),
    })
}

/// One request a measure puts to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Question {
    pub prompt: Prompt,
    pub params: Params,
}

/// Seed 000 asks a verbalized probability up to three more times when the
/// reply holds none.
const MAX_ATTEMPTS: u32 = 4;

/// One measure being asked about one subject: the question to put next, and
/// what the replies so far say. The caller asks; [`Inquiry::read`] reads.
pub struct Inquiry {
    measure: Measure,
    question: Question,
    /// The first question's decoding, which the retries vary.
    first_params: Params,
    base_seed: u64,
    attempts: u32,
    template_sha256: String,
}

impl Inquiry {
    /// The first question of `measure` about `subject`.
    pub fn start(
        measure: Measure,
        templates: &Templates,
        subject: &Subject,
        base: &Params,
    ) -> Result<Inquiry, ReflectiveError> {
        let (template, hash) = templates.get(measure);
        let params = measure.params(base);
        Ok(Inquiry {
            measure,
            question: Question {
                prompt: question(measure, template, subject)?,
                params: params.clone(),
            },
            first_params: params,
            base_seed: base.seed,
            attempts: 1,
            template_sha256: hash.to_owned(),
        })
    }

    /// The question to ask now.
    pub fn question(&self) -> &Question {
        &self.question
    }

    /// Reads the reply to [`Inquiry::question`]. `Some` is the measure's
    /// reading: `confidence` (in [0, 1], or none when the reply had none),
    /// the reply, the template's hash, and the measure's own fields.
    /// `None`: the reply held no answer, and the question has changed to a
    /// retry that must be asked.
    pub fn read(&mut self, reply: &str, tokens: &[Token]) -> Option<ReflectiveReading> {
        let mut out = ReflectiveReading {
            reply: reply.to_owned(),
            template_sha256: self.template_sha256.clone(),
            reply_tokens: Some(tokens.len()),
            ..ReflectiveReading::default()
        };
        match self.measure {
            Measure::AskTrue => {
                let (p_true, normalized) = p_true(tokens);
                out.confidence = Some(p_true).filter(|p| p.is_finite());
                out.p_true_normalized = Some(normalized).filter(|p| p.is_finite());
            }
            Measure::Verbalized14 | Measure::Verbalized14Fewshot => {
                let rating = parse_rating(reply);
                out.rating = rating;
                out.confidence = rating.map(|r| f64::from(r - 1) / 3.0);
            }
            Measure::OysterIntrinsic => {
                let (answer, confidence) = split_intrinsic(reply);
                out.answer = Some(answer);
                out.confidence = confidence;
            }
            Measure::VerbalizedProbability
            | Measure::OysterReassess
            | Measure::OysterReflective => {
                let value = parse_probability(reply);
                if value.is_none() && self.attempts < MAX_ATTEMPTS {
                    // Seed 000: the retries are sampled at temperature 1.
                    self.question.params = Params {
                        temperature: 1.0,
                        seed: self.base_seed + u64::from(self.attempts),
                        ..self.first_params.clone()
                    };
                    self.attempts += 1;
                    return None;
                }
                out.attempts = Some(self.attempts);
                out.fallback = Some(value.is_none());
                out.confidence = Some(value.unwrap_or(0.5));
            }
        }
        Some(out)
    }
}

/// How many alternatives per position seed 000 reads for Ask True/False.
const ASK_TRUE_TOP: usize = 5;

/// Seed 000's "Question Answering Logit" (§3.1.2): over the five most likely
/// tokens at each of the first two generated positions, P(True) is the
/// probability of the single likeliest token that contains "true"
/// (case-insensitive), and likewise P(False). Returns P(True) and the
/// normalised P(True) / (P(True) + P(False)). Where neither word appears,
/// both are 0: the model gave no sign that the answer is right, and the item
/// keeps its place in every table.
pub fn p_true(tokens: &[Token]) -> (f64, f64) {
    let likeliest = |word: &str| -> f64 {
        tokens
            .iter()
            .take(2)
            .flat_map(|token| {
                let mut top: Vec<_> = token.top.iter().collect();
                top.sort_by(|a, b| b.logprob.total_cmp(&a.logprob));
                top.into_iter().take(ASK_TRUE_TOP)
            })
            .filter(|a| a.token.to_lowercase().contains(word))
            .map(|a| a.logprob.exp())
            .fold(0.0, f64::max)
    };
    let (t, f) = (likeliest("true"), likeliest("false"));
    let normalized = if t + f > 0.0 { t / (t + f) } else { 0.0 };
    (t, normalized)
}

/// An intrinsic reply's answer and confidence ("Open the Oyster" §3, step 1).
/// The template asks for the answer, then a line "Confidence: N%". The
/// answer is every line before the last line that names a confidence and
/// holds a probability, so an answer of several lines (REval's questions
/// with more than one `??`) stays whole. A reply that is only that line
/// (small models skip the answer) has an empty answer, which is wrong, and
/// its confidence counts. Without such a line, the answer is the first line
/// and the confidence the first probability after it.
pub fn split_intrinsic(reply: &str) -> (String, Option<f64>) {
    let lines: Vec<&str> = reply.lines().collect();
    let stated = (0..lines.len()).rev().find_map(|k| {
        let line = lines[k];
        let names = line.to_ascii_lowercase().contains("confiden");
        names
            .then(|| parse_probability(line))
            .flatten()
            .map(|p| (k, p))
    });
    match stated {
        Some((k, p)) => (lines[..k].join("\n").trim().to_owned(), Some(p)),
        None => {
            let (answer, rest) = reply.split_once('\n').unwrap_or((reply, ""));
            (answer.trim().to_owned(), parse_probability(rest))
        }
    }
}

/// The first 1-4 rating in a reply.
pub fn parse_rating(text: &str) -> Option<u8> {
    text.chars()
        .find(|c| c.is_ascii_digit())
        .and_then(|c| c.to_digit(10))
        .filter(|d| (1..=4).contains(d))
        .map(|d| d as u8)
}

/// A probability from a reply: "80%", "0.8", "The probability is about 80."
/// A number with % or above 1 is a percentage; numbers above 100 are not
/// probabilities.
pub fn parse_probability(text: &str) -> Option<f64> {
    static NUMBER: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(r"(\d+(?:\.\d+)?|\.\d+)\s*(%|percent)?").expect("valid regex")
    });
    let caps = NUMBER.captures(text)?;
    let value: f64 = caps[1].parse().ok()?;
    let percent = caps.get(2).is_some() || value > 1.0;
    let p = if percent { value / 100.0 } else { value };
    (0.0..=1.0).contains(&p).then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::Alternative;

    #[test]
    fn probabilities_in_the_forms_models_write_them() {
        assert_eq!(parse_probability(" 80%"), Some(0.8));
        assert_eq!(parse_probability("0.8"), Some(0.8));
        assert_eq!(parse_probability("The probability is about 80."), Some(0.8));
        assert_eq!(parse_probability("75 percent"), Some(0.75));
        assert_eq!(parse_probability("1"), Some(1.0));
        assert_eq!(parse_probability("250"), None);
        assert_eq!(parse_probability("sure"), None);
    }

    /// Issue "fidelity, third pass", item 3: before, only the first line was
    /// the answer, and the second line's "2" was read as a 2% confidence.
    #[test]
    fn an_intrinsic_answer_of_several_lines_stays_whole() {
        let reply = "x = 1\ny = 2\nConfidence: 80%";
        assert_eq!(
            split_intrinsic(reply),
            ("x = 1\ny = 2".to_owned(), Some(0.8))
        );
        assert_eq!(
            split_intrinsic("[1, 2]\nConfidence: 90%\n"),
            ("[1, 2]".to_owned(), Some(0.9))
        );
        // No confidence line: the first line is the answer, as before.
        assert_eq!(split_intrinsic("42\n75%"), ("42".to_owned(), Some(0.75)));
        assert_eq!(split_intrinsic("'abc'"), ("'abc'".to_owned(), None));
        // Only the confidence line (Qwen2.5-Coder-0.5B's usual reply on
        // CRUXEval-O): no answer, and the confidence counts. Before, the
        // line was taken for the answer and the confidence was missing.
        assert_eq!(
            split_intrinsic("Confidence: 80%"),
            (String::new(), Some(0.8))
        );
        assert_eq!(
            split_intrinsic("\nConfidence: 90%\n"),
            (String::new(), Some(0.9))
        );
        // A confidence line with no number is no confidence line.
        assert_eq!(
            split_intrinsic("a\nb\nConfidence: high"),
            ("a".to_owned(), None)
        );
    }

    #[test]
    fn ratings() {
        assert_eq!(parse_rating(" 3 (similar)"), Some(3));
        assert_eq!(parse_rating("7"), None);
        assert_eq!(parse_rating("none"), None);
    }

    fn token(top: &[(&str, f64)]) -> Token {
        Token {
            token: top[0].0.into(),
            logprob: top[0].1.ln(),
            top: top
                .iter()
                .map(|(t, p)| Alternative {
                    token: (*t).into(),
                    logprob: p.ln(),
                })
                .collect(),
        }
    }

    #[test]
    fn p_true_takes_the_likeliest_matching_token_over_both_positions() {
        // Seed 000, §3.1.2: the two positions disagree; the single likeliest
        // token containing "true" anywhere in the two top-5 lists wins (not
        // a sum, not the first position that mentions it).
        let tokens = [
            token(&[(" ", 0.5), (" True", 0.2), ("false", 0.1), ("TRUE", 0.05)]),
            token(&[(" False", 0.6), ("True", 0.3), ("untrue", 0.04)]),
        ];
        let (p, n) = p_true(&tokens);
        assert!((p - 0.3).abs() < 1e-12, "{p}");
        assert!((n - 0.3 / (0.3 + 0.6)).abs() < 1e-12, "{n}");
    }

    #[test]
    fn p_true_reads_only_the_top_five_of_the_first_two_positions() {
        let sixth = token(&[
            ("a", 0.3),
            ("b", 0.2),
            ("c", 0.15),
            ("d", 0.1),
            ("e", 0.08),
            ("true", 0.07),
        ]);
        assert_eq!(p_true(&[sixth]), (0.0, 0.0));
        let third = [
            token(&[("x", 1.0)]),
            token(&[("y", 1.0)]),
            token(&[("True", 1.0)]),
        ];
        assert_eq!(p_true(&third), (0.0, 0.0));
        // Neither word: confidence 0, not a missing value.
        assert_eq!(p_true(&[token(&[("maybe", 1.0)])]), (0.0, 0.0));
    }

    #[test]
    fn follow_up_continues_and_fresh_fills_code() {
        let prompt = Prompt::Completion("code\nComment:".into());
        let subject = Subject {
            prompt: &prompt,
            code: Some("int f();"),
            answer: " Does f.",
        };
        let templates = Templates::load(None, Wording::Summary).unwrap();
        let (text, _) = templates.get(Measure::VerbalizedProbability);
        let Prompt::Completion(q) =
            question(Measure::VerbalizedProbability, text, &subject).unwrap()
        else {
            panic!()
        };
        assert!(q.starts_with("code\nComment: Does f.\n\nWhat is the probability"));
        let (text, _) = templates.get(Measure::AskTrue);
        let Prompt::Completion(q) = question(Measure::AskTrue, text, &subject).unwrap() else {
            panic!()
        };
        assert!(q.starts_with("int f();\nProposed comment: Does f.\n"));
        assert!(q.ends_with("Answer:"));
        let no_code = Subject {
            code: None,
            ..subject
        };
        assert!(matches!(
            question(Measure::AskTrue, text, &no_code),
            Err(ReflectiveError::NoCode { .. })
        ));
    }
}
