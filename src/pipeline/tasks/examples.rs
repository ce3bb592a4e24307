//! The examples stage of a synthesis run: each main answer (and each sample,
//! where the run samples) runs on the examples its prompt shows, in the
//! sandbox under the judge's limits (`task::examples`), and the results
//! become the `spec_examples` measures. Writes `examples/<label>.jsonl`, one
//! line per problem, which the calibration reads beside the token measures.
//! Not the parsing of examples (`task::examples`) nor the calibration.

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
use crate::task::examples::{
    ExampleOutcome, SPEC_EXAMPLES, SPEC_EXAMPLES_ALL, SPEC_EXAMPLES_SAMPLES, SPEC_MEASURES,
    run_examples, shown_examples,
};
use crate::task::{self, Problem};

/// Whether the run calibrates or combines a measure of the shown examples.
pub(super) fn wanted(config: &RunConfig) -> bool {
    let c = &config.calibration;
    c.confidence
        .iter()
        .chain(&c.combine)
        .any(|m| SPEC_MEASURES.contains(&m.as_str()))
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
    pub confidence: BTreeMap<String, Option<f64>>,
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

/// One line per generation row: its answers' outcomes on the shown examples
/// and the measures read from them.
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
    let outcomes = run_examples(&borrowed, sandbox.as_ref(), config.dataset.jobs)
        .map_err(|e| failed("examples", e))?;
    let ends = starts.iter().skip(1).copied().chain([outcomes.len()]);
    Ok(rows
        .iter()
        .zip(starts.iter().copied().zip(ends))
        .map(|(row, (start, end))| line(&row.id, &outcomes[start..end]))
        .collect())
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
