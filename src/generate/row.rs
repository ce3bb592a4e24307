//! One line of a generations file, typed: what the generation stage writes
//! for each prompt (the answer, its tokens, its token measures, its
//! reflective readings and sampled answers, and the prompt line's own
//! fields) and what every later stage reads back. Not how the answer is
//! asked for (`stage`) nor what the measures mean (`confidence`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Token;
use crate::prompt::Prompt;

/// A generation row. Written by `codecal generate` and by a run's
/// generation stage; a run's later stages read it back as it is.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GenerationRow {
    pub id: String,
    pub backend: String,
    pub model: String,
    /// The local model file's sha256; empty for a server's model.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model_sha256: String,
    pub text: String,
    /// The token measures by name (null where the answer has no tokens to
    /// measure); a run adds its agreement measures here.
    #[serde(default)]
    pub confidence: BTreeMap<String, Option<f64>>,
    /// Each reflective measure's reading, by the measure's name.
    #[serde(default)]
    pub reflective: BTreeMap<String, ReflectiveReading>,
    #[serde(default)]
    pub tokens: Vec<Token>,
    #[serde(default)]
    pub prompt_tokens: Option<usize>,
    #[serde(default)]
    pub completion_tokens: Option<usize>,
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// Seconds the backend took; a run drops it from its files, which must
    /// not depend on the machine's speed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// Whether the answer came from the cache; dropped as `seconds` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached: Option<bool>,
    /// The reply's token texts do not join to its text (see
    /// `stage::tokens_join_to_text`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub token_text_mismatch: bool,
    /// Answers sampled beside the main one, for the agreement measures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<Vec<SampleAnswer>>,
    /// The tokens the samples cost; a run sets it with the agreement measures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_tokens: Option<u64>,
    /// The model's reply when asked to write tests (`[generation] tests`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests_reply: Option<TestsReply>,
    /// Sandbox seconds per measure that ran code for its confidence (the
    /// shown examples'); a run sets it beside the measures.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sandbox_seconds: BTreeMap<String, f64>,
    /// The prompt line's other fields, passed on.
    #[serde(flatten)]
    pub item: ItemFields,
}

/// A prompt line as a run's flows write it (`prompts.jsonl`): the id, the
/// prompt, and the fields later stages read. `batch::read_prompts` reads it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PromptLine {
    pub id: String,
    pub prompt: Prompt,
    #[serde(flatten)]
    pub item: ItemFields,
}

/// What a prompt line carries beside its prompt. A run's flows write the
/// named fields; a line given to `codecal generate` may carry any others,
/// which are passed on untouched.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ItemFields {
    /// The code the answer is about (what a fresh-context reflective
    /// question shows the judge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The reference answer: the developer's comment, the dataset's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// What repository-split cross-validation groups by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The few-shot exemplars retrieval put in the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exemplars: Option<Vec<ExemplarRef>>,
    /// Turbulence's rounds: which repetition of the same prompt this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_offset: Option<u64>,
    /// The text the model continues to write tests for the item
    /// (`task::examples::written`), where the run asks for tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_prompt: Option<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl ItemFields {
    /// The fields as a prompt row keeps them (`batch::PromptRow::fields`).
    pub fn into_map(self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        }
    }
}

/// A retrieved exemplar: its id and its BM25 score.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExemplarRef {
    pub id: String,
    pub score: f64,
}

/// What a row keeps of each sampled answer: enough to judge it and weigh
/// it, not its alternatives at every position.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleAnswer {
    pub seed: u64,
    pub text: String,
    #[serde(default)]
    pub mean_logprob: Option<f64>,
    #[serde(default)]
    pub completion_tokens: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached: Option<bool>,
}

/// The model's reply to a row's test prompt: the tests it wrote, and what
/// they cost.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TestsReply {
    pub text: String,
    #[serde(default)]
    pub completion_tokens: Option<usize>,
    /// Why the reply ended ("length": its last line may be cut off).
    #[serde(default)]
    pub finish_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached: Option<bool>,
}

/// One reflective measure's reading of a reply: its confidence and the
/// measure's own fields (seed 000 §3.3 and "Open the Oyster" §3).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReflectiveReading {
    /// In [0, 1]; `None` when the reply gave none.
    #[serde(default)]
    pub confidence: Option<f64>,
    #[serde(default)]
    pub reply: String,
    #[serde(default)]
    pub template_sha256: String,
    #[serde(default)]
    pub reply_tokens: Option<usize>,
    /// Ask True/False: P(True) renormalised over True and False.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_true_normalized: Option<f64>,
    /// The verbalized 1–4 rating read from the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rating: Option<u8>,
    /// "Open the Oyster"'s intrinsic reply: the answer it gave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// How many times the question was asked before a probability was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    /// No probability was read in any attempt, and 0.5 stands in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<bool>,
    /// Which answer a reassess or reflective reading speaks of: the
    /// intrinsic reply's (`oyster-intrinsic`) or the main one (`answer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follows: Option<String>,
}

impl GenerationRow {
    /// The prompt line's fields for a row, less those the row names
    /// itself (an input line's own `text` or `model` would otherwise be
    /// written twice).
    pub fn item_fields(fields: &Map<String, Value>) -> ItemFields {
        const OWN: [&str; 17] = [
            "id",
            "backend",
            "model",
            "model_sha256",
            "text",
            "confidence",
            "reflective",
            "tokens",
            "prompt_tokens",
            "completion_tokens",
            "finish_reason",
            "seconds",
            "cached",
            "token_text_mismatch",
            "samples",
            "sample_tokens",
            "tests_reply",
        ];
        let mut other: Map<String, Value> = fields
            .iter()
            .filter(|(key, _)| !OWN.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        // A named field of another type than its own is kept among the
        // others rather than lost.
        fn take<T: serde::de::DeserializeOwned>(
            other: &mut Map<String, Value>,
            key: &str,
        ) -> Option<T> {
            let typed = serde_json::from_value(other.get(key)?.clone()).ok()?;
            other.remove(key);
            Some(typed)
        }
        ItemFields {
            code: take(&mut other, "code"),
            reference: take(&mut other, "reference"),
            repo: take(&mut other, "repo"),
            language: take(&mut other, "language"),
            exemplars: take(&mut other, "exemplars"),
            seed_offset: take(&mut other, "seed_offset"),
            test_prompt: take(&mut other, "test_prompt"),
            other,
        }
    }

    /// The field `key` of the prompt line, as text.
    pub fn field(&self, key: &str) -> Option<&str> {
        let item = &self.item;
        match key {
            "code" => item.code.as_deref(),
            "reference" => item.reference.as_deref(),
            "repo" => item.repo.as_deref(),
            "language" => item.language.as_deref(),
            _ => item.other.get(key).and_then(Value::as_str),
        }
    }

    /// The answers sampled beside the main one (none when it has none).
    pub fn sample_answers(&self) -> &[SampleAnswer] {
        self.samples.as_deref().unwrap_or_default()
    }

    /// A measure's value: a token or agreement measure, else a reflective
    /// measure's confidence.
    pub fn measure(&self, name: &str) -> Option<f64> {
        self.confidence
            .get(name)
            .copied()
            .flatten()
            .or_else(|| self.reflective.get(name).and_then(|r| r.confidence))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_reads_back_as_written_with_unknown_fields_passed_on() {
        let mut fields = Map::new();
        fields.insert("code".into(), Value::from("def f():\n    pass\n"));
        fields.insert("task_id".into(), Value::from("HumanEval/0"));
        fields.insert("text".into(), Value::from("shadowed by the answer"));
        let row = GenerationRow {
            id: "a".into(),
            text: "  keeps\twhitespace \n".into(),
            confidence: BTreeMap::from([("total_probability".into(), Some(0.25))]),
            item: GenerationRow::item_fields(&fields),
            ..GenerationRow::default()
        };
        let line = serde_json::to_string(&row).unwrap();
        assert_eq!(line.matches("\"text\"").count(), 1, "{line}");
        let back: GenerationRow = serde_json::from_str(&line).unwrap();
        assert_eq!(back, row);
        assert_eq!(back.field("code"), Some("def f():\n    pass\n"));
        assert_eq!(back.field("task_id"), Some("HumanEval/0"));
        assert_eq!(back.measure("total_probability"), Some(0.25));
        assert_eq!(back.measure("ask-true"), None);
    }

    #[test]
    fn a_named_field_of_another_type_is_kept_among_the_others() {
        let mut fields = Map::new();
        fields.insert("repo".into(), Value::from(7));
        fields.insert("code".into(), Value::from("x = 1\n"));
        let item = GenerationRow::item_fields(&fields);
        assert_eq!(item.repo, None);
        assert_eq!(item.other.get("repo"), Some(&Value::from(7)));
        assert_eq!(item.code.as_deref(), Some("x = 1\n"));
        assert_eq!(GenerationRow::item_fields(&item.clone().into_map()), item);
    }
}
