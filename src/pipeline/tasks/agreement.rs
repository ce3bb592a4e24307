//! The agreement stage of a task run: each problem's main answer and its
//! sampled answers are keyed by what they do (`task::behaviour`, in the
//! sandbox), and the keys counted into confidences
//! (`confidence::agreement`). Writes `agreement/<label>.jsonl`, one line
//! per problem, which the calibration stage reads beside the token
//! measures. Not the sampling (the generation stage's) nor the calibration.

use std::time::Duration;

use super::{read_problems, row_answers};
use crate::artifact::{create_dir, write_atomic};
use crate::confidence::agreement::{CodeAgreement, Sample};
use crate::generate::row::GenerationRow;
use crate::pipeline::artifacts::{failed, read_jsonl, to_jsonl};
use crate::pipeline::config::RunConfig;
use crate::pipeline::sampled::{AgreementLine, confidence_map, sample_tokens};
use crate::pipeline::{Books, PipelineError, hash_strings};
use crate::sandbox::Limits;
use crate::task::behaviour::{ProbeOptions, behaviour_keys, probe_source};
use crate::task::datasets::Dataset;
use crate::task::{self, Problem};

/// Characters kept of a probe's report: a digest per input.
const PROBE_MESSAGE_CHARS: usize = 2_000;

pub(super) fn probe_options(config: &RunConfig) -> ProbeOptions {
    ProbeOptions {
        seed: config.dataset.seed,
        ..ProbeOptions::default()
    }
}

pub(super) fn stage(
    config: &RunConfig,
    dataset: Dataset,
    label: &str,
    books: &mut Books,
) -> Result<(), PipelineError> {
    let generations = format!("generations/{label}.jsonl");
    let options = probe_options(config);
    let inputs = vec![
        books.file_hash("problems.jsonl")?,
        books.file_hash(&generations)?,
        hash_strings(&[
            format!("{options:?}"),
            config.dataset.isolation.to_string(),
            probe_source().to_owned(),
            include_str!("../../task/behaviour.rs").to_owned(),
            include_str!("../../confidence/agreement.rs").to_owned(),
        ]),
        task::judging_rules_fingerprint(),
    ];
    let output = format!("agreement/{label}.jsonl");
    books.item_stage(
        &format!("agreement {label}"),
        &inputs,
        std::slice::from_ref(&output),
        0,
        |dir| {
            let problems = read_problems(&dir.join("problems.jsonl"))?;
            let rows: Vec<GenerationRow> = read_jsonl(&dir.join(&generations))?;
            let lines = agreement_lines(config, dataset, &problems, &rows, &options)?;
            create_dir(&dir.join("agreement"))?;
            write_atomic(&dir.join(&output), lines.as_bytes())?;
            Ok(())
        },
    )
}

/// One JSON line per generation row: the behaviour keys of its main and
/// sampled answers, the clusters, and the agreement confidences.
fn agreement_lines(
    config: &RunConfig,
    dataset: Dataset,
    problems: &[Problem],
    rows: &[GenerationRow],
    options: &ProbeOptions,
) -> Result<String, PipelineError> {
    let (pairs, starts) = row_answers("agreement", dataset, problems, rows)?;
    let wall = Duration::from_secs_f64(options.wall_seconds());
    let limits = Limits {
        message_chars: PROBE_MESSAGE_CHARS,
        ..Limits::with_wall(wall)
    };
    let sandbox = task::sandbox_for(&pairs, limits, config.dataset.isolation)
        .map_err(|e| failed("agreement", e))?;
    let borrowed: Vec<(&Problem, &str)> = pairs.iter().map(|(p, a)| (*p, a.as_str())).collect();
    let keys = behaviour_keys(&borrowed, sandbox.as_ref(), config.dataset.jobs, options)
        .map_err(|e| failed("agreement", e))?;
    let mut lines = Vec::with_capacity(rows.len());
    for (row, start) in rows.iter().zip(starts) {
        let samples = row.sample_answers();
        let greedy = &keys[start];
        let sampled: Vec<Sample> = samples
            .iter()
            .zip(&keys[start + 1..start + 1 + samples.len()])
            .map(|(sample, key)| Sample {
                key: key.clone(),
                mean_logprob: sample.mean_logprob,
            })
            .collect();
        let agreement = CodeAgreement::of(greedy, &sampled);
        lines.push(AgreementLine {
            id: row.id.clone(),
            detail: Behaviour {
                greedy_key: greedy.clone(),
                sample_keys: sampled.iter().map(|s| s.key.clone()).collect(),
                clusters: agreement.as_ref().map(|a| a.clusters),
                entropy: agreement.as_ref().map(|a| a.entropy),
            },
            sample_tokens: sample_tokens(samples),
            confidence: confidence_map(agreement.as_ref().map(|a| a.measures())),
        });
    }
    Ok(to_jsonl(&lines))
}

/// What a code answer's agreement line records of its samples' behaviour.
#[derive(serde::Serialize, serde::Deserialize)]
struct Behaviour {
    /// The main answer's behaviour key: equal keys, equal behaviour.
    greedy_key: String,
    sample_keys: Vec<String>,
    clusters: Option<usize>,
    entropy: Option<f64>,
}
