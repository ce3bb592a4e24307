//! The generation stage as one call: prompts in, one JSON row per prompt out,
//! with the generation, its tokens, every intrinsic confidence measure and
//! the reflective measures asked for, and any sampled answers besides the
//! main one (for confidence from agreement). `codecal generate` and the
//! pipeline both use it; writing the rows is the caller's job.

use std::collections::BTreeMap;

use super::batch::{
    Answer, AskError, BatchError, PromptRow, answer_all, ask, parallel_map, row_params,
};
use super::cache::Cache;
use super::row::{GenerationRow, ReflectiveReading, SampleAnswer, TestsReply};
use super::{Backend, Params};
use crate::confidence::reflective::{Inquiry, Measure, ReflectiveError, Subject, Templates};
use crate::confidence::token_measures;
use crate::prompt::Prompt;

/// What to ask and measure.
pub struct StageOptions<'a> {
    pub params: Params,
    /// Also compute each intrinsic measure over the first k tokens.
    pub first_k: Option<usize>,
    pub reflective: Vec<Measure>,
    pub templates: &'a Templates,
    /// Answers to sample per prompt besides the main one (0: none).
    pub samples: usize,
    /// The temperature they are sampled at.
    pub sample_temperature: f64,
    /// How to ask each row that carries a `test_prompt` for tests (its seed
    /// offset applied); `None`: no tests are asked for.
    pub tests: Option<Params>,
}

/// One request of a row: its main answer, a sample, or its tests.
#[derive(Clone, Copy, PartialEq)]
enum Request {
    Main,
    Sample(usize),
    Tests,
}

impl Request {
    fn name(self) -> &'static str {
        match self {
            Request::Main => "answer",
            Request::Sample(_) => "samples",
            Request::Tests => "tests",
        }
    }
}

/// What answering every request of every row gave, by row.
struct Answered {
    main: Vec<Answer>,
    samples: Vec<Vec<SampleAnswer>>,
    tests: Vec<Option<TestsReply>>,
}

/// The decoding parameters of a row's sample `index` (from 0): the row's
/// own at the sampling temperature, with a seed of its own, so that every
/// sample is its own request and its own cache entry (a resumed run asks
/// for none twice) and never the main answer's.
pub fn sample_params(params: &Params, row: &PromptRow, index: usize, temperature: f64) -> Params {
    let row = row_params(params, row);
    Params {
        temperature,
        seed: row.seed.wrapping_add((index as u64 + 1) << 32),
        ..row
    }
}

/// What a row keeps of each sampled answer: enough to judge it and weigh
/// it, not its alternatives at every position.
fn sample_answer(params: &Params, answer: &Answer) -> SampleAnswer {
    let tokens = &answer.generation.tokens;
    let mean_logprob = (!tokens.is_empty())
        .then(|| tokens.iter().map(|t| t.logprob).sum::<f64>() / tokens.len() as f64);
    SampleAnswer {
        seed: params.seed,
        text: answer.generation.text.clone(),
        mean_logprob,
        completion_tokens: answer.generation.completion_tokens.or(Some(tokens.len())),
        seconds: Some(answer.seconds),
        cached: Some(answer.cached),
    }
}

/// The test prompt a row carries, where the run asks for tests.
fn test_prompt(row: &PromptRow) -> Option<Prompt> {
    let text = row.fields.get("test_prompt")?.as_str()?;
    Some(Prompt::Completion(text.to_owned()))
}

/// Every row's main answer, sampled answers and test reply. A prompt's
/// requests are asked one after the other in the work order, so that with
/// several in flight they share the backend's decode steps and its kept
/// prefill.
fn answer_every_request(
    backend: &dyn Backend,
    cache: &Cache,
    rows: &[PromptRow],
    options: &StageOptions,
    on_progress: &(dyn Fn() + Sync),
) -> Result<Answered, StageError> {
    let work: Vec<(usize, Request, Prompt, Params)> = rows
        .iter()
        .enumerate()
        .flat_map(|(i, row)| {
            let main = (
                Request::Main,
                row.prompt.clone(),
                row_params(&options.params, row),
            );
            let samples = (0..options.samples).map(move |s| {
                let params = sample_params(&options.params, row, s, options.sample_temperature);
                (Request::Sample(s), row.prompt.clone(), params)
            });
            let tests = options
                .tests
                .as_ref()
                .zip(test_prompt(row))
                .map(|(params, prompt)| (Request::Tests, prompt, row_params(params, row)));
            std::iter::once(main)
                .chain(samples)
                .chain(tests)
                .map(move |(request, prompt, params)| (i, request, prompt, params))
        })
        .collect();
    let answers = parallel_map(
        backend.concurrency(),
        &work,
        |(row, request, prompt, params)| {
            let answer = ask(backend, cache, prompt, params).map_err(|source| StageError::Ask {
                id: rows[*row].id.clone(),
                measure: request.name(),
                source,
            })?;
            on_progress();
            Ok::<Answer, StageError>(answer)
        },
    )?;
    let mut answered = Answered {
        main: Vec::with_capacity(rows.len()),
        samples: vec![Vec::with_capacity(options.samples); rows.len()],
        tests: vec![None; rows.len()],
    };
    for ((row, request, _, params), answer) in work.iter().zip(answers) {
        let row = *row;
        match request {
            Request::Main => answered.main.push(answer),
            Request::Sample(_) => answered.samples[row].push(sample_answer(params, &answer)),
            Request::Tests => answered.tests[row] = Some(tests_reply(&answer)),
        }
    }
    Ok(answered)
}

/// What a row keeps of its test reply.
fn tests_reply(answer: &Answer) -> TestsReply {
    let generation = &answer.generation;
    TestsReply {
        text: generation.text.clone(),
        completion_tokens: generation
            .completion_tokens
            .or(Some(generation.tokens.len())),
        finish_reason: generation.finish_reason.clone(),
        seconds: Some(answer.seconds),
        cached: Some(answer.cached),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StageError {
    #[error(transparent)]
    Batch(#[from] BatchError),
    #[error("prompt {id}: {measure}: {source}")]
    Reflective {
        id: String,
        measure: &'static str,
        source: ReflectiveError,
    },
    #[error("prompt {id}: {measure}: {source}")]
    Ask {
        id: String,
        measure: &'static str,
        source: AskError,
    },
}

/// Answers and measures every row. `on_progress(done)` is called as prompts
/// finish: first the answers, then (if any) the reflective questions.
pub fn run(
    backend: &dyn Backend,
    cache: &Cache,
    rows: &[PromptRow],
    options: &StageOptions,
    on_progress: &(dyn Fn() + Sync),
) -> Result<Vec<GenerationRow>, StageError> {
    let Answered {
        main: answers,
        samples,
        tests,
    } = if options.samples > 0 || options.tests.is_some() {
        answer_every_request(backend, cache, rows, options, on_progress)?
    } else {
        let main = answer_all(backend, cache, rows, &options.params, &|_| on_progress())?;
        Answered {
            main,
            samples: Vec::new(),
            tests: vec![None; rows.len()],
        }
    };
    let pairs: Vec<(&PromptRow, &Answer)> = rows.iter().zip(&answers).collect();
    let reflective = if options.reflective.is_empty() {
        vec![BTreeMap::new(); rows.len()]
    } else {
        parallel_map(backend.concurrency(), &pairs, |(row, answer)| {
            let measured = reflective_for(backend, cache, row, answer, options);
            on_progress();
            measured
        })?
    };
    let mut samples = samples.into_iter();
    let mut tests = tests.into_iter();
    let id = backend.id();
    Ok(pairs
        .iter()
        .zip(reflective)
        .map(|((row, answer), reflective)| {
            let generation = &answer.generation;
            GenerationRow {
                id: row.id.clone(),
                backend: id.kind.clone(),
                model: id.model.clone(),
                model_sha256: id.model_sha256.clone(),
                text: generation.text.clone(),
                confidence: token_measures(&generation.tokens, options.first_k)
                    .into_iter()
                    .collect(),
                reflective,
                tokens: generation.tokens.clone(),
                prompt_tokens: generation.prompt_tokens,
                completion_tokens: generation.completion_tokens,
                finish_reason: generation.finish_reason.clone(),
                seconds: Some(answer.seconds),
                cached: Some(answer.cached),
                token_text_mismatch: !tokens_join_to_text(generation),
                samples: (options.samples > 0).then(|| samples.next()).flatten(),
                sample_tokens: None,
                tests_reply: tests.next().flatten(),
                sandbox_seconds: BTreeMap::new(),
                item: GenerationRow::item_fields(&row.fields),
            }
        })
        .collect())
}

/// Whether the reply's token texts, joined, are its text (vacuously, when
/// it came without tokens). A server whose tokens do not join (byte pieces
/// shown as escapes, a detokeniser that trims) gives measures over tokens
/// that are not the text; the row is flagged and `generate` counts them.
pub fn tokens_join_to_text(generation: &crate::generate::Generation) -> bool {
    generation.tokens.is_empty()
        || generation
            .tokens
            .iter()
            .map(|t| t.token.as_str())
            .collect::<String>()
            == generation.text
}

fn reflective_for(
    backend: &dyn Backend,
    cache: &Cache,
    row: &PromptRow,
    answer: &Answer,
    options: &StageOptions,
) -> Result<BTreeMap<String, ReflectiveReading>, StageError> {
    let code = row.fields.get("code").and_then(serde_json::Value::as_str);
    let mut measures = options.reflective.clone();
    // Intrinsic before reassess: "Open the Oyster"'s reassess turn follows
    // up the intrinsic conversation.
    measures.sort();
    measures.dedup();
    let mut intrinsic_turn: Option<(Prompt, String)> = None;
    let mut out = BTreeMap::new();
    for measure in measures {
        // "Open the Oyster" (seed 003 §3, step 1): one answer per question,
        // the intrinsic reply's, which reassess follows up in its
        // conversation and reflective judges afresh; without an intrinsic
        // turn, both speak of the main answer.
        let intrinsic_answer = intrinsic_turn
            .as_ref()
            .map(|(_, reply)| crate::confidence::reflective::split_intrinsic(reply).0);
        let (prompt, answered) = match (&intrinsic_turn, measure, &intrinsic_answer) {
            (Some((prompt, reply)), Measure::OysterReassess, _) => (prompt, reply.as_str()),
            (_, Measure::OysterReflective, Some(answer)) => (&row.prompt, answer.as_str()),
            _ => (&row.prompt, answer.generation.text.as_str()),
        };
        let subject = Subject {
            prompt,
            code,
            answer: answered,
        };
        let (mut result, turn) = ask_measure(backend, cache, measure, &row.id, &subject, options)?;
        match measure {
            Measure::OysterIntrinsic => intrinsic_turn = Some(turn),
            Measure::OysterReassess | Measure::OysterReflective => {
                let follows = match intrinsic_turn {
                    Some(_) => Measure::OysterIntrinsic.name(),
                    None => "answer",
                };
                result.follows = Some(follows.to_owned());
            }
            _ => {}
        }
        out.insert(measure.name().to_owned(), result);
    }
    Ok(out)
}

/// Puts `measure`'s questions to the backend, through the cache, until its
/// reading is done: the result, and the last question with its reply.
fn ask_measure(
    backend: &dyn Backend,
    cache: &Cache,
    measure: Measure,
    id: &str,
    subject: &Subject,
    options: &StageOptions,
) -> Result<(ReflectiveReading, (Prompt, String)), StageError> {
    let mut inquiry = Inquiry::start(measure, options.templates, subject, &options.params)
        .map_err(|source| StageError::Reflective {
            id: id.to_owned(),
            measure: measure.name(),
            source,
        })?;
    loop {
        let question = inquiry.question();
        let reply = ask(backend, cache, &question.prompt, &question.params)
            .map_err(|source| StageError::Ask {
                id: id.to_owned(),
                measure: measure.name(),
                source,
            })?
            .generation;
        if let Some(result) = inquiry.read(&reply.text, &reply.tokens) {
            return Ok((result, (inquiry.question().prompt.clone(), reply.text)));
        }
    }
}
