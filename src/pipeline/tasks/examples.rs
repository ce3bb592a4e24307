//! The examples stage of a synthesis run: each main answer (and each sample,
//! where the run samples) runs on the examples its prompt shows, and on the
//! tests the model wrote where the run asked for them, in the sandbox under
//! the judge's limits (`task::examples`); the results become the
//! `spec_examples` and `model_tests` measures. Writes
//! `examples/<label>.jsonl`, one line per problem, which the calibration
//! reads beside the token measures. Not the parsing of examples or tests
//! (`task::examples`), nor the asking for tests (the generation stage), nor
//! the calibration.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{read_problems, row_answers};
use crate::artifact::{create_dir, write_atomic};
use crate::generate::row::GenerationRow;
use crate::pipeline::artifacts::{failed, read_jsonl, to_jsonl};
use crate::pipeline::config::RunConfig;
use crate::pipeline::sampled::lines_in_step;
use crate::pipeline::{Books, PipelineError, Progress, hash_strings};
use crate::sandbox::Limits;
use crate::task::datasets::Dataset;
use crate::task::examples::written::{
    DUAL_AGREEMENT, MODEL_TESTS, WRITTEN_MEASURES, WrittenTests, dual_agreement, read_tests,
};
use crate::task::examples::{
    Example, ExampleOutcome, SPEC_EXAMPLES, SPEC_EXAMPLES_ALL, SPEC_EXAMPLES_SAMPLES,
    SPEC_MEASURES, run_checks, run_examples, shown_examples,
};
use crate::task::{self, Problem};

/// Whether the run calibrates or combines a measure of the shown examples
/// or of the model-written tests.
pub(super) fn wanted(config: &RunConfig) -> bool {
    let c = &config.calibration;
    c.confidence.iter().chain(&c.combine).any(|m| {
        let m = m.as_str();
        SPEC_MEASURES.contains(&m) || WRITTEN_MEASURES.contains(&m)
    })
}

/// One line of `examples/<label>.jsonl`.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct ExamplesLine {
    pub id: String,
    /// The main answer on the prompt's examples.
    pub main: ExampleOutcome,
    /// Each sample's, in the row's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<ExampleOutcome>,
    /// Sandbox seconds for the main answer and the samples together.
    pub sandbox_seconds: f64,
    /// The tests the model wrote and the answers' outcomes on them, where
    /// the run asked for tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written: Option<WrittenLine>,
    pub confidence: BTreeMap<String, Option<f64>>,
}

/// What a row's model-written tests found.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct WrittenLine {
    #[serde(flatten)]
    pub read: WrittenTests,
    /// The main answer's outcome, then each sample's.
    pub outcomes: Vec<ExampleOutcome>,
}

impl WrittenLine {
    /// Sandbox seconds for the main answer and for all answers.
    fn seconds(&self) -> (f64, f64) {
        let main = self.outcomes.first().map_or(0.0, |o| o.seconds);
        (main, self.outcomes.iter().map(|o| o.seconds).sum())
    }
}

pub(super) fn stage(
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
            include_str!("../../task/examples.rs").to_owned(),
            include_str!("../../task/examples/run.rs").to_owned(),
            include_str!("../../task/python_text.rs").to_owned(),
            task::examples::EXAMPLE_CHECK.to_owned(),
            include_str!("../../task/examples/written.rs").to_owned(),
            config.generation.tests.to_string(),
        ]),
        task::judging_rules_fingerprint(),
    ];
    let output = format!("examples/{label}.jsonl");
    let on_progress = books.on_progress;
    books.item_stage(
        &format!("examples {label}"),
        &inputs,
        std::slice::from_ref(&output),
        0,
        |dir| {
            let problems = read_problems(&dir.join("problems.jsonl"))?;
            let rows: Vec<GenerationRow> = read_jsonl(&dir.join(&generations))?;
            on_progress(Progress::Warning(&shown_summary(&problems)));
            let lines = example_lines(config, dataset, &problems, &rows)?;
            if config.generation.tests > 0 {
                on_progress(Progress::Warning(&written_summary(&lines)));
            }
            create_dir(&dir.join("examples"))?;
            write_atomic(&dir.join(&output), to_jsonl(&lines).as_bytes())?;
            Ok(())
        },
    )
}

/// How many problems show examples, how many show none (their measures are
/// missing and count at 0: review), and the example-like lines skipped.
fn shown_summary(problems: &[Problem]) -> String {
    let shown: Vec<_> = problems.iter().map(shown_examples).collect();
    let with = shown.iter().filter(|s| !s.examples.is_empty()).count();
    let calls: usize = shown.iter().map(|s| s.examples.len()).sum();
    let skipped: usize = shown.iter().map(|s| s.skipped.len()).sum();
    let skipping = shown.iter().filter(|s| !s.skipped.is_empty()).count();
    format!(
        "examples: {with} of {} prompts show examples ({calls} in all); {} show none, so their \
         spec_examples measures are missing and count at 0 (review); {skipped} example-like \
         lines in {skipping} prompts could not be read and were skipped, not guessed",
        problems.len(),
        problems.len() - with
    )
}

/// How many problems got model-written tests, how many tests in all, and
/// the assertion lines that could not be read.
fn written_summary(lines: &[ExamplesLine]) -> String {
    let read: Vec<&WrittenTests> = lines
        .iter()
        .filter_map(|l| l.written.as_ref().map(|w| &w.read))
        .collect();
    let with = read.iter().filter(|r| !r.tests.is_empty()).count();
    let tests: usize = read.iter().map(|r| r.tests.len()).sum();
    let unread: usize = read.iter().map(|r| r.unread).sum();
    format!(
        "model-written tests: {with} of {} problems got tests ({tests} in all, copies of the \
         prompt's examples dropped); {} got none, so their model_tests measures are missing \
         and count at 0 (review); {unread} assertion lines could not be read and were skipped",
        lines.len(),
        lines.len() - with
    )
}

/// One line per generation row: its answers' outcomes on the shown examples
/// (and on the tests the model wrote) and the measures read from them.
fn example_lines(
    config: &RunConfig,
    dataset: Dataset,
    problems: &[Problem],
    rows: &[GenerationRow],
) -> Result<Vec<ExamplesLine>, PipelineError> {
    let (pairs, starts) = row_answers("examples", dataset, problems, rows)?;
    let limits = Limits::with_wall(Duration::from_secs_f64(config.dataset.timeout_s));
    let sandbox = task::sandbox_for(&pairs, limits, config.dataset.isolation)
        .map_err(|e| failed("examples", e))?;
    let borrowed: Vec<(&Problem, &str)> = pairs.iter().map(|(p, a)| (*p, a.as_str())).collect();
    let jobs = config.dataset.jobs;
    let outcomes =
        run_examples(&borrowed, sandbox.as_ref(), jobs).map_err(|e| failed("examples", e))?;
    let mut written = if config.generation.tests > 0 {
        let read: Vec<WrittenTests> = rows
            .iter()
            .zip(&starts)
            .map(|(row, &start)| row_tests(row, pairs[start].0, config.generation.tests))
            .collect();
        let on_written = run_written(&borrowed, &starts, &read, sandbox.as_ref(), jobs)?;
        Some(read.into_iter().zip(on_written))
    } else {
        None
    };
    let ends = starts.iter().skip(1).copied().chain([outcomes.len()]);
    Ok(rows
        .iter()
        .zip(starts.iter().copied().zip(ends))
        .map(|(row, (start, end))| {
            let mut line = line(&row.id, &outcomes[start..end]);
            if let Some((read, outcomes)) = written.as_mut().and_then(Iterator::next) {
                line.add_written(WrittenLine { read, outcomes });
            }
            line
        })
        .collect())
}

/// The tests read from a row's test reply (none where it has no reply).
fn row_tests(row: &GenerationRow, problem: &Problem, k: usize) -> WrittenTests {
    row.tests_reply
        .as_ref()
        .map_or_else(WrittenTests::default, |reply| {
            let cut = reply.finish_reason.as_deref() == Some("length");
            read_tests(problem, &reply.text, cut, k)
        })
}

/// Every answer (main and samples, as `row_answers` lists them) run on its
/// row's written tests; each row's outcomes in the answers' order.
fn run_written(
    answers: &[(&Problem, &str)],
    starts: &[usize],
    tests: &[WrittenTests],
    sandbox: Option<&crate::sandbox::Sandbox>,
    jobs: usize,
) -> Result<Vec<Vec<ExampleOutcome>>, PipelineError> {
    let row_of = |answer: usize| starts.partition_point(|&start| start <= answer) - 1;
    let checks: Vec<(&Problem, &str, &[Example])> = answers
        .iter()
        .enumerate()
        .map(|(i, &(problem, answer))| (problem, answer, tests[row_of(i)].tests.as_slice()))
        .collect();
    let outcomes = run_checks(&checks, sandbox, jobs).map_err(|e| failed("examples", e))?;
    let mut by_row = vec![Vec::new(); starts.len()];
    for (i, outcome) in outcomes.into_iter().enumerate() {
        by_row[row_of(i)].push(outcome);
    }
    Ok(by_row)
}

impl ExamplesLine {
    /// The written tests' outcomes and the measures read from them.
    fn add_written(&mut self, written: WrittenLine) {
        let main = written.outcomes.first().and_then(ExampleOutcome::share);
        let passes: Vec<Vec<bool>> = written.outcomes.iter().map(|o| o.passes.clone()).collect();
        self.confidence.insert(MODEL_TESTS.to_owned(), main);
        self.confidence
            .insert(DUAL_AGREEMENT.to_owned(), dual_agreement(&passes));
        self.written = Some(written);
    }
}

/// A row's line from its main answer's outcome (first) and its samples'.
pub(crate) fn line(id: &str, outcomes: &[ExampleOutcome]) -> ExamplesLine {
    let (main, samples) = outcomes
        .split_first()
        .expect("every row has its main answer");
    let samples_all = (!samples.is_empty() && main.shown > 0).then(|| {
        samples.iter().filter(|s| s.passed == s.shown).count() as f64 / samples.len() as f64
    });
    let confidence = [
        (SPEC_EXAMPLES, main.share()),
        (SPEC_EXAMPLES_ALL, main.all_passed()),
        (SPEC_EXAMPLES_SAMPLES, samples_all),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_owned(), value))
    .collect();
    ExamplesLine {
        id: id.to_owned(),
        main: main.clone(),
        samples: samples.to_vec(),
        sandbox_seconds: outcomes.iter().map(|o| o.seconds).sum(),
        written: None,
        confidence,
    }
}

/// The measures of `examples/<label>.jsonl` put into each row's
/// `confidence`, and their sandbox seconds into `sandbox_seconds`; nothing
/// when the run has no examples stage.
pub(super) fn merge_examples(
    dir: &std::path::Path,
    label: &str,
    generations: &mut [GenerationRow],
) -> Result<(), PipelineError> {
    let path = dir.join(format!("examples/{label}.jsonl"));
    let Some(lines) = lines_in_step(&path, generations, |l: &ExamplesLine| &l.id)? else {
        return Ok(());
    };
    for (generation, line) in generations.iter_mut().zip(lines) {
        generation.confidence.extend(line.confidence);
        for measure in [SPEC_EXAMPLES, SPEC_EXAMPLES_ALL] {
            generation
                .sandbox_seconds
                .insert(measure.to_owned(), line.main.seconds);
        }
        if !line.samples.is_empty() {
            generation
                .sandbox_seconds
                .insert(SPEC_EXAMPLES_SAMPLES.to_owned(), line.sandbox_seconds);
        }
        if let Some(written) = &line.written {
            let (main, all) = written.seconds();
            let seconds = &mut generation.sandbox_seconds;
            seconds.insert(MODEL_TESTS.to_owned(), main);
            seconds.insert(DUAL_AGREEMENT.to_owned(), all);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(shown: usize, passed: usize) -> ExampleOutcome {
        ExampleOutcome {
            shown,
            passed,
            passes: (0..shown).map(|i| i < passed).collect(),
            seconds: 0.5,
            first_failure: None,
        }
    }

    #[test]
    fn a_row_s_measures_come_from_its_main_answer_and_its_samples() {
        let line = line("p", &[outcome(4, 3), outcome(4, 4), outcome(4, 1)]);
        let get = |m: &str| line.confidence[m];
        assert_eq!(get(SPEC_EXAMPLES), Some(0.75));
        assert_eq!(get(SPEC_EXAMPLES_ALL), Some(0.0));
        // One sample of two passes every example.
        assert_eq!(get(SPEC_EXAMPLES_SAMPLES), Some(0.5));
        assert_eq!(line.sandbox_seconds, 1.5);
        // A prompt with no example leaves every measure missing.
        let none = super::line("q", &[outcome(0, 0), outcome(0, 0)]);
        assert!(
            none.confidence.values().all(Option::is_none),
            "{:?}",
            none.confidence
        );
    }
}
