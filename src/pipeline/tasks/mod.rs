//! `codecal run` for tasks other than summaries (code synthesis, line
//! completion, CRUXEval): problems -> generate (per backend) -> judge ->
//! calibrate, with correctness from the task's oracle instead of a
//! similarity threshold.
//!
//! The generation stage is the summaries' own; what differs is where the
//! prompts come from (a dataset, not retrieval) and where the labels come
//! from (`task::judge_all`, running code only in the sandbox). The tables
//! are `report`'s. Not the summarization flow, and nothing another flow uses.

mod agreement;
mod cells;
mod columns;
mod examples;
mod items;
mod oyster;
mod report;
mod turbulence;

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::artifacts::{failed, read_jsonl, to_jsonl};
use super::config::RunConfig;
use super::generation::{generations, generators};
use super::{Books, PipelineError, Progress, file_sha256, hash_strings};
use crate::artifact::{create_dir, write_atomic};
use crate::confidence::reflective::{Measure, split_intrinsic};
use crate::confidence::token_range;
use crate::corpus::mine::python_stdlib;
use crate::generate::row::{GenerationRow, ItemFields, PromptLine};
use crate::models::ModelHome;
use crate::prompt::{Message, Prompt, PromptStyle};
use crate::sandbox::Limits;
use crate::task::datasets::Dataset;
use crate::task::{self, JudgedAnswer, Problem, answer, judge_all};

pub(crate) fn run(config: &RunConfig, books: &mut Books) -> Result<(), PipelineError> {
    let dataset = config.dataset()?;
    problems(config, dataset, books)?;
    let home = ModelHome::from_env().map_err(|e| failed("generate", e))?;
    let mut labels = Vec::new();
    for generator in generators(config) {
        let label = generator.label.clone();
        generations(config, &generator, &home, books)?;
        verdicts(config, dataset, &label, books)?;
        if config.generation.samples > 0 {
            agreement::stage(config, dataset, &label, books)?;
        }
        if examples::wanted(config) {
            examples::stage(config, dataset, &label, books)?;
        }
        labels.push(label);
    }
    if books.shard.is_some() {
        return Ok(());
    }
    let mut inputs = vec![
        super::calibration::REPORT_REVISION.to_string(),
        serde_json::to_string(&config.calibration).unwrap_or_default(),
        books.file_hash("problems.jsonl")?,
    ];
    for label in &labels {
        inputs.push(books.file_hash(&format!("generations/{label}.jsonl"))?);
        inputs.push(books.file_hash(&format!("verdicts/{label}.jsonl"))?);
        if config.generation.samples > 0 {
            inputs.push(books.file_hash(&format!("agreement/{label}.jsonl"))?);
        }
        if examples::wanted(config) {
            inputs.push(books.file_hash(&format!("examples/{label}.jsonl"))?);
        }
    }
    let outputs = super::run_report::REPORT_FILES.map(String::from);
    books.stage("calibrate", &inputs, &outputs, 0, |dir| {
        report::calibrate_and_report(config, dataset, dir, &labels)
    })
}

/// The dataset's file, or its default: HumanEval from the set-up, the
/// Python standard library for line completion.
fn dataset_path(config: &RunConfig, dataset: Dataset) -> Result<PathBuf, PipelineError> {
    if let Some(path) = &config.dataset.path {
        return Ok(path.clone());
    }
    match dataset {
        Dataset::Humaneval => ModelHome::from_env()
            .and_then(|home| home.ensure_humaneval())
            .map_err(|e| failed("problems", e)),
        _ => python_stdlib().map_err(|e| failed("problems", e)),
    }
}

/// Reads the dataset, draws the sample, and writes the problems and the
/// prompts the generation stage reads.
fn problems(config: &RunConfig, dataset: Dataset, books: &mut Books) -> Result<(), PipelineError> {
    let path = dataset_path(config, dataset)?;
    let fingerprint = if path.is_dir() {
        path.display().to_string()
    } else {
        file_sha256(&path)?
    };
    let mut inputs = vec![
        serde_json::to_string(&config.dataset).unwrap_or_default(),
        config.task.to_string(),
        fingerprint,
        // Unset is hashed as empty, not as the completion style it means.
        config
            .prompt
            .style
            .map(|s| s.to_string())
            .unwrap_or_default(),
    ];
    if dataset == Dataset::Turbulence {
        // The jobs carry the oracles' text: new oracles make new problems.
        inputs.push(task::turbulence::oracles_fingerprint());
    }
    if dataset == Dataset::MbppDocstring {
        // The references are judged to choose the problems.
        inputs.push(task::judging_rules_fingerprint());
    }
    // An instruct model answers a chat turn; a completion model continues text.
    let chat = config.prompt.style == Some(PromptStyle::Chat);
    let tests = config.generation.tests > 0;
    if tests {
        // The test prompt is a prompt line's field: its text is an input.
        inputs.push(hash_strings(&[include_str!(
            "../../task/examples/written.rs"
        )
        .to_owned()]));
    }
    let books_progress = books.on_progress;
    let outputs = ["problems.jsonl".to_owned(), "prompts.jsonl".to_owned()];
    books.stage("problems", &inputs, &outputs, 0, |dir| {
        let mut all = read_dataset(config, dataset, &path)?;
        if dataset == Dataset::MbppDocstring {
            all = with_passing_references(config, all, books_progress)?;
        }
        let problems = sample(all, config.dataset.problems, config.dataset.seed);
        let mut problem_lines = String::new();
        let mut prompt_lines = String::new();
        for problem in &problems {
            problem_lines += &(serde_json::to_string(problem).unwrap_or_default() + "\n");
            let line = prompt_line(problem, chat, tests);
            prompt_lines += &(serde_json::to_string(&line).unwrap_or_default() + "\n");
        }
        write_atomic(&dir.join("problems.jsonl"), problem_lines.as_bytes())?;
        write_atomic(&dir.join("prompts.jsonl"), prompt_lines.as_bytes())?;
        Ok(())
    })
}

/// A problem's prompt line: its prompt as a chat turn or as text to
/// continue, and the fields later stages read; with `tests`, the text the
/// model continues to write tests.
fn prompt_line(problem: &Problem, chat: bool, tests: bool) -> PromptLine {
    let prompt = if chat {
        Prompt::Chat(vec![Message::new("user", problem.prompt.as_str())])
    } else {
        Prompt::Completion(problem.prompt.clone())
    };
    PromptLine {
        id: problem.id.clone(),
        prompt,
        item: ItemFields {
            // What fresh-context reflective templates show the judge.
            code: Some(problem.prompt.clone()),
            reference: Some(problem.reference_answer.clone()),
            // What repository-split cross-validation groups by: here
            // the problem, so that its answers never straddle folds.
            repo: Some(problem.group.clone().unwrap_or_else(|| problem.id.clone())),
            language: Some("python".into()),
            // Turbulence's rounds: the same prompt asked again, with
            // its own seed.
            seed_offset: match problem.oracle {
                task::Oracle::Turbulence { round, .. } => Some(u64::from(round - 1)),
                _ => None,
            },
            test_prompt: tests
                .then(|| task::examples::written::test_prompt(problem))
                .flatten(),
            ..ItemFields::default()
        },
    }
}

/// The problems whose reference passes its own tests: seed 000 (§3.2.1)
/// leaves out the MBPP problems whose reference solution fails them.
fn with_passing_references(
    config: &RunConfig,
    problems: Vec<Problem>,
    on_progress: &(dyn Fn(Progress) + Sync),
) -> Result<Vec<Problem>, PipelineError> {
    let pairs: Vec<(&Problem, String)> = problems
        .iter()
        .map(|p| (p, p.reference_answer.clone()))
        .collect();
    let limits = Limits::with_wall(Duration::from_secs_f64(config.dataset.timeout_s));
    let sandbox = task::sandbox_for(&pairs, limits, config.dataset.isolation)
        .map_err(|e| failed("problems", e))?;
    let borrowed: Vec<(&Problem, &str)> = pairs.iter().map(|(p, a)| (*p, a.as_str())).collect();
    let verdicts = judge_all(&borrowed, sandbox.as_ref(), config.dataset.jobs)
        .map_err(|e| failed("problems", e))?;
    let before = problems.len();
    let kept: Vec<Problem> = problems
        .into_iter()
        .zip(&verdicts)
        .filter(|(_, verdict)| verdict.correct)
        .map(|(problem, _)| problem)
        .collect();
    on_progress(Progress::Warning(&format!(
        "problems: {} of {before} MBPP references fail their own tests and are left out",
        before - kept.len()
    )));
    Ok(kept)
}

/// The dataset's problems; Turbulence's with the run's rounds, subsets and
/// oracles.
fn read_dataset(
    config: &RunConfig,
    dataset: Dataset,
    path: &Path,
) -> Result<Vec<Problem>, PipelineError> {
    if dataset != Dataset::Turbulence {
        return dataset
            .read(path, config.dataset.seed)
            .map_err(|e| failed("problems", e));
    }
    let options = turbulence_options(config);
    let instances = task::turbulence::read_instances(path).map_err(|e| failed("problems", e))?;
    task::turbulence::problems(&instances, &options).map_err(|e| failed("problems", e))
}

/// Turbulence's options as the run's `[dataset]` sets them.
fn turbulence_options(config: &RunConfig) -> task::turbulence::Options {
    task::turbulence::Options {
        rounds: config.dataset.rounds,
        questions: config.dataset.questions.clone(),
        instances: config.dataset.instances,
        fuzz: config.dataset.fuzz,
        answer_seconds: config.dataset.answer_seconds,
        static_check: config.dataset.static_check,
        upstream: config.dataset.oracles.clone(),
        collection_errors_pass: config.dataset.collection_errors_pass,
        ..Default::default()
    }
}

/// The wall-clock limit of each sandboxed program: the run's, or for
/// Turbulence at least what the judge's own limits add up to, so that the
/// judge's verdict, not the sandbox, names what ran out.
fn wall_seconds(config: &RunConfig, dataset: Dataset) -> f64 {
    let wall = config.dataset.timeout_s;
    if dataset == Dataset::Turbulence {
        wall.max(turbulence_options(config).wall_seconds())
    } else {
        wall
    }
}

/// A seeded sample of `size` problems in dataset order, or all of them.
fn sample(problems: Vec<Problem>, size: Option<usize>, seed: u64) -> Vec<Problem> {
    use rand::SeedableRng;
    use rand::seq::index;
    let Some(size) = size.filter(|size| *size < problems.len()) else {
        return problems;
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut chosen = index::sample(&mut rng, problems.len(), size).into_vec();
    chosen.sort_unstable();
    chosen.into_iter().map(|i| problems[i].clone()).collect()
}

pub(crate) fn read_problems(path: &Path) -> Result<Vec<Problem>, PipelineError> {
    read_jsonl(path)
}

/// Answers with their problems, in the order the sandbox runs them.
type AnswerPairs<'p> = Vec<(&'p Problem, String)>;

/// Every answer of every row, main first then its samples, in one list for
/// the sandbox, each with its problem; and each row's start in that list.
/// `stage` names the stage in the error for a row with no problem.
pub(super) fn row_answers<'p>(
    stage: &str,
    dataset: Dataset,
    problems: &'p [Problem],
    rows: &[GenerationRow],
) -> Result<(AnswerPairs<'p>, Vec<usize>), PipelineError> {
    let by_id: std::collections::HashMap<&str, &Problem> =
        problems.iter().map(|p| (p.id.as_str(), p)).collect();
    let kind = dataset.task();
    let mut pairs = Vec::new();
    let mut starts = Vec::with_capacity(rows.len());
    for row in rows {
        let problem = *by_id
            .get(row.id.as_str())
            .ok_or_else(|| failed(stage, format!("no problem `{}`", row.id)))?;
        starts.push(pairs.len());
        pairs.push((problem, answer::extract(kind, &row.text)));
        for sample in row.sample_answers() {
            pairs.push((problem, answer::extract(kind, &sample.text)));
        }
    }
    Ok((pairs, starts))
}

/// The tokens of a generation row that spell its answer (seed 000 measures
/// the answer, not the chat around it), at most 500 (an empty span when the
/// row has no tokens).
fn answer_tokens(dataset: Dataset, row: &GenerationRow) -> Option<[usize; 2]> {
    let bytes = answer::measured_span(dataset.task(), &row.text);
    let range = token_range(&row.tokens, bytes);
    let end = range.end.min(range.start + answer::MAX_ANSWER_TOKENS);
    Some([range.start, end])
}

/// The answer of a row's "Open the Oyster" intrinsic reply, where it has one.
fn intrinsic_answer(dataset: Dataset, row: &GenerationRow) -> Option<String> {
    let intrinsic = row.reflective.get(Measure::OysterIntrinsic.name())?;
    // Split from the whole reply, so that generations written before
    // multi-line answers were kept whole are re-read.
    let reply = if intrinsic.reply.is_empty() {
        intrinsic.answer.clone()?
    } else {
        split_intrinsic(&intrinsic.reply).0
    };
    Some(answer::extract(dataset.task(), &reply))
}

/// Judges each generation of one backend against its problem, sandboxed.
fn verdicts(
    config: &RunConfig,
    dataset: Dataset,
    label: &str,
    books: &mut Books,
) -> Result<(), PipelineError> {
    let generations = format!("generations/{label}.jsonl");
    let inputs = vec![
        books.file_hash("problems.jsonl")?,
        books.file_hash(&generations)?,
        hash_strings(&[
            config.dataset.timeout_s.to_string(),
            config.dataset.isolation.to_string(),
        ]),
        task::judging_rules_fingerprint(),
    ];
    let output = format!("verdicts/{label}.jsonl");
    let on_progress = books.on_progress;
    books.item_stage(
        &format!("judge {label}"),
        &inputs,
        std::slice::from_ref(&output),
        0,
        |dir| {
            let problems = read_problems(&dir.join("problems.jsonl"))?;
            let by_id: std::collections::HashMap<&str, &Problem> =
                problems.iter().map(|p| (p.id.as_str(), p)).collect();
            let rows: Vec<GenerationRow> = read_jsonl(&dir.join(&generations))?;
            let mut pairs = Vec::with_capacity(rows.len());
            for row in &rows {
                let problem = *by_id.get(row.id.as_str()).ok_or_else(|| {
                    failed("judge", format!("{generations}: no problem `{}`", row.id))
                })?;
                pairs.push((problem, answer::extract(dataset.task(), &row.text)));
            }
            let spans: Vec<Option<[usize; 2]>> =
                rows.iter().map(|row| answer_tokens(dataset, row)).collect();
            // "Open the Oyster": the intrinsic reply carries an answer of its
            // own, judged beside the main one.
            let intrinsic: Vec<(usize, (&Problem, String))> = rows
                .iter()
                .zip(&pairs)
                .enumerate()
                .filter_map(|(i, (row, (problem, _)))| {
                    Some((i, (*problem, intrinsic_answer(dataset, row)?)))
                })
                .collect();
            let all: Vec<(&Problem, String)> = pairs
                .iter()
                .cloned()
                .chain(intrinsic.iter().map(|(_, pair)| pair.clone()))
                .collect();
            let limits = Limits::with_wall(Duration::from_secs_f64(wall_seconds(config, dataset)));
            if dataset == Dataset::Turbulence {
                let check = config.dataset.static_check;
                if let Some(warning) = task::turbulence::prepare_static_check(check) {
                    on_progress(Progress::Warning(&warning));
                }
            }
            let sandbox = task::sandbox_for(&all, limits, config.dataset.isolation)
                .map_err(|e| failed("judge", e))?;
            let borrowed: Vec<(&Problem, &str)> =
                all.iter().map(|(p, a)| (*p, a.as_str())).collect();
            let mut verdicts = judge_all(&borrowed, sandbox.as_ref(), config.dataset.jobs)
                .map_err(|e| failed("judge", e))?;
            let intrinsic_verdicts = verdicts.split_off(pairs.len());
            let mut rows = task::verdict_rows(&pairs, &verdicts, &spans);
            for ((i, (_, answer)), verdict) in intrinsic.into_iter().zip(intrinsic_verdicts) {
                rows[i].intrinsic = Some(JudgedAnswer { answer, verdict });
            }
            create_dir(&dir.join("verdicts"))?;
            write_atomic(&dir.join(&output), to_jsonl(&rows).as_bytes())?;
            Ok(())
        },
    )
}
