//! The `codecal` command line: one subcommand per stage, each a thin shell
//! over a library function. The only place that uses `anyhow`.

use std::path::PathBuf;
use std::process::ExitCode;

mod commands;

use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};

use codecal::calibrate::{
    BinSpec, Binning, CalibrateOptions, CalibrationData, ColumnSpec, CvStrategy, LabelSource,
    Method, calibrate,
};
use codecal::corpus::mine::{Language as MineLanguage, MineOptions, mine_tree, python_stdlib};
use codecal::corpus::{Record, dedupe, read_codexglue, to_jsonl};
use codecal::models::ModelHome;
use codecal::prompt::{PromptStyle, Template};
use codecal::report;
use codecal::retrieve::{Exclude, ExemplarSearch, PromptOptions, RetrieveMode};
use codecal::score::{Device, EmbedOptions, OnnxEmbedder, Pair, Scorer, Tokenization};
use codecal::table::{Format, Table};
use codecal::thresholds::file::{OperatingPointName, read_threshold};
use codecal::thresholds::{self, LabelRule, Search, ThresholdOptions};

/// How far to trust what an LLM wrote about code.
#[derive(Parser)]
#[command(name = "codecal", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measure how well confidences predict correctness, raw and rescaled.
    Calibrate(CalibrateArgs),
    /// Score candidate summaries against references: SentenceBERT cosine,
    /// BERTScore, BLEU and ROUGE. Installs the model on first use.
    Score(ScoreArgs),
    /// Choose similarity thresholds against human ratings: ROC, AUC and three
    /// operating points (best F1, high precision, high recall) per metric.
    Thresholds(ThresholdsArgs),
    /// Build corpora: mine documented functions from a source tree, or sample one.
    #[command(subcommand)]
    Corpus(CorpusCommand),
    /// Retrieve BM25 few-shot exemplars for each query and build its prompt.
    Retrieve(RetrieveArgs),
    /// Generate with a language model (local SmolLM2 or an OpenAI-compatible
    /// server), with token log-probabilities and confidence measures; every
    /// answer is cached, so a rerun or a resumed run asks for nothing twice.
    Generate(commands::generate::GenerateArgs),
    /// Run the whole pipeline (corpus, retrieval, generation, scoring,
    /// labels, calibration, report) from a TOML config, resumably; with no
    /// --config, the embedded default on the local Python standard library.
    Run(commands::run::RunArgs),
    /// Judge answers to HumanEval, MBPP or CRUXEval problems by running
    /// them, sandboxed, against the dataset's tests; one verdict per answer.
    Judge(commands::judge::JudgeArgs),
    /// Install the models codecal uses (all-MiniLM-L6-v2 with ONNX Runtime, and
    /// SmolLM2-135M-Instruct) and the HumanEval data into CODECAL_HOME
    /// (default ~/.cache/codecal), and bubblewrap for the sandbox (as root,
    /// with apt-get). Other subcommands do it on first use.
    Setup,
}

/// The columns of a (reference, candidate) pair file.
#[derive(Args)]
struct PairColumns {
    /// Column naming each pair.
    #[arg(long, default_value = "id")]
    id: String,
    /// Column holding the reference summary (the developer's comment).
    #[arg(long, default_value = "reference")]
    reference: String,
    /// Column holding the candidate summary (the model's).
    #[arg(long, default_value = "candidate")]
    candidate: String,
}

#[derive(Args)]
struct ScoreArgs {
    /// Input file of pairs, one row each (CSV with a header, or JSONL).
    input: PathBuf,
    /// Input format; by default taken from the extension (.csv, .jsonl).
    #[arg(long, value_enum)]
    format: Option<Format>,
    #[command(flatten)]
    columns: PairColumns,
    /// Tokenization for BLEU and ROUGE: codexglue lower-cases and splits punctuation
    /// like the CodeXGLUE evaluator; whitespace splits on whitespace only, as the
    /// Haque et al. metric columns were computed.
    #[arg(long = "tokenize", value_enum, default_value_t = Tokenization::Codexglue)]
    tokenization: Tokenization,
    /// Where the embedding model runs: auto, cpu or cuda.
    #[arg(long, value_enum, default_value_t = Device::Auto)]
    device: Device,
    /// Texts per inference batch (texts are sorted by length first).
    #[arg(long, default_value_t = 32)]
    batch_size: usize,
    /// CPU threads in all (up to 4 batches run at once); 0 uses every core.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Write the scores as CSV to this file (atomically) instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args)]
struct CalibrateArgs {
    /// Input file of items, one row each (CSV with a header, or JSONL).
    input: PathBuf,
    /// Input format; by default taken from the extension (.csv, .jsonl).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Column holding the model's confidence, a probability in [0, 1].
    #[arg(long, default_value = "confidence")]
    confidence: String,
    /// Column holding correctness as 0/1 or true/false. Default "correct",
    /// unless --score is given.
    #[arg(long, conflicts_with = "score")]
    correct: Option<String>,
    /// Column holding a quality score; an item is correct when score >= --threshold.
    #[arg(long)]
    score: Option<String>,
    /// Threshold on --score at and above which an item counts as correct.
    #[arg(long, requires = "score", conflicts_with = "thresholds")]
    threshold: Option<f64>,
    /// Instead of --threshold: a file written by `codecal thresholds` (e.g.
    /// thresholds/sbert-minilm.toml), read at --operating-point.
    #[arg(long, requires = "score")]
    thresholds: Option<PathBuf>,
    /// Which threshold of --thresholds: best-f1, high-precision or high-recall.
    #[arg(long, value_enum, default_value_t = OperatingPointName::BestF1)]
    operating_point: OperatingPointName,
    /// Column naming each item's group (e.g. repository) for group CV and group bootstrap.
    #[arg(long)]
    group: Option<String>,
    /// Column with a continuous quality value; adds Spearman's rho against confidence.
    #[arg(long)]
    target: Option<String>,
    /// Rescaling method. platt: logistic regression on logit(p) with scikit-learn's
    /// default L2 penalty (C = 1, intercept free); platt-ln: the same on ln(p);
    /// temperature: slope only; isotonic: pool-adjacent-violators; histogram: success
    /// rate per bin; none: raw metrics only.
    #[arg(long, value_enum, default_value_t = Method::Platt)]
    method: Method,
    /// Fit the logistic rescalers without the L2 penalty (maximum likelihood).
    #[arg(long)]
    no_penalty: bool,
    /// Cross-validation for the rescaler; default: group with --group, else kfold.
    #[arg(long, value_enum)]
    cv: Option<CvStrategy>,
    /// Number of cross-validation folds.
    #[arg(long, default_value_t = 5)]
    folds: usize,
    /// Number of confidence bins for ECE, MCE, histogram binning and the diagram.
    #[arg(long, default_value_t = 10)]
    bins: usize,
    /// How bins are cut: equal-width (i/N, (i+1)/N] or equal-mass (equal item counts).
    #[arg(long, value_enum, default_value_t = Binning::EqualWidth)]
    binning: Binning,
    /// Bootstrap resamples for 95% percentile intervals; 0 turns them off.
    #[arg(long, default_value_t = 1000)]
    bootstrap: usize,
    /// Resample whole groups (from --group) instead of items.
    #[arg(long)]
    bootstrap_by_group: bool,
    /// Seed for fold shuffles and bootstrap draws.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print one JSON object instead of the Markdown table.
    #[arg(long)]
    json: bool,
    /// Also write metrics.json, metrics.csv, table.md, table.tex, reliability.svg
    /// and reliability.png into this directory.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args)]
struct ThresholdsArgs {
    /// Ratings file: the Haque et al. final_megafile.csv layout (detected by its
    /// columns function_id, source, similarity, text, text.1) or a generic one.
    #[arg(long)]
    ratings: PathBuf,
    /// Input format; by default taken from the extension (.csv, .jsonl).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Generic layout only (rows with the same id pool their ratings).
    #[command(flatten)]
    columns: PairColumns,
    /// Generic layout: a column of human ratings (repeat for several raters).
    #[arg(long = "rating")]
    ratings_columns: Vec<String>,
    /// Generic layout: lowest value of the rating scale.
    #[arg(long, default_value_t = 1.0)]
    scale_min: f64,
    /// Generic layout: highest value of the rating scale.
    #[arg(long, default_value_t = 5.0)]
    scale_max: f64,
    /// Which ratings decide the label: baseline-mean (ratings of the candidate, as the
    /// summarization seed) or all-mean (every rating of the item).
    #[arg(long, value_enum, default_value_t = LabelRule::BaselineMean)]
    label_rule: LabelRule,
    /// An item is positive when the mean rating is at least this (3 = "agree" on Haque's 1-4 scale).
    #[arg(long, default_value_t = 3.0)]
    cutoff: f64,
    /// A precomputed numeric metric column to evaluate too (repeatable).
    #[arg(long)]
    column: Vec<String>,
    /// A precomputed cosine column: evaluated as is and as NAME01 = (x+1)/2 (repeatable).
    #[arg(long)]
    cosine_column: Vec<String>,
    /// Only the precomputed columns; do not score the texts.
    #[arg(long)]
    no_text_metrics: bool,
    /// Score the texts with the lexical metrics only (no SentenceBERT, no model set-up).
    #[arg(long)]
    no_model: bool,
    /// Tokenization for BLEU and ROUGE on the texts (whitespace for Haque's tokenized texts).
    #[arg(long = "tokenize", value_enum, default_value_t = Tokenization::Codexglue)]
    tokenization: Tokenization,
    /// Report and write only these metrics (repeatable); default all.
    #[arg(long)]
    metric: Vec<String>,
    /// Search thresholds on multiples of this step in [0, 1] instead of every score value.
    #[arg(long)]
    grid: Option<f64>,
    /// Bootstrap resamples of items for the AUC and threshold intervals; 0 turns them off.
    #[arg(long, default_value_t = 1000)]
    bootstrap: usize,
    /// Seed for the bootstrap.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print JSON instead of the Markdown table.
    #[arg(long)]
    json: bool,
    /// Write one TOML file per metric, roc.svg and roc.png into this directory.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Subcommand)]
enum CorpusCommand {
    /// Mine documented functions (Python docstrings, Javadoc) from a source tree into
    /// record JSONL; without DIR, the local Python 3 standard library.
    Mine(MineArgs),
    /// Split records into a seeded random query set and a retrieval pool.
    Sample(SampleArgs),
}

#[derive(Args)]
struct MineArgs {
    /// Source tree to mine; default: the standard library of the local python3.
    dir: Option<PathBuf>,
    /// Language of the files to mine.
    #[arg(long = "lang", value_enum, default_value_t = MineLanguage::Python)]
    language: MineLanguage,
    /// A record's repo is this many leading path components under DIR.
    #[arg(long, default_value_t = 1)]
    repo_depth: usize,
    /// Output record JSONL.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args)]
struct SampleArgs {
    /// Records: CodeXGLUE JSONL or codecal's record JSONL (.gz accepted).
    input: PathBuf,
    /// How many records to draw as queries (the summarization seed used 5,000).
    #[arg(long, default_value_t = 5000)]
    queries: usize,
    /// Seed of the draw.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// With same-repo, pool records from the queries' repositories are dropped.
    #[arg(long, value_enum, default_value_t = Exclude::SelfOnly)]
    pool_exclude: Exclude,
    /// Make a malformed input line an error instead of skipping it.
    #[arg(long)]
    strict: bool,
    /// Output JSONL of the queries.
    #[arg(long)]
    out_queries: PathBuf,
    /// Output JSONL of the pool.
    #[arg(long)]
    out_pool: PathBuf,
}

#[derive(Args)]
struct RetrieveArgs {
    /// Pool of exemplars: CodeXGLUE / CodeSearchNet JSONL (.jsonl or .jsonl.gz).
    #[arg(long)]
    pool: PathBuf,
    /// Queries, in the same format; may be the pool file itself (each query is then
    /// scored against the pool without it).
    #[arg(long)]
    queries: PathBuf,
    /// Retrieval: rank-bm25 reproduces the summarization seed's rank_bm25 BM25Okapi
    /// exactly (code split on single spaces, in memory); tantivy builds a persistent
    /// index with a code tokenizer, for large pools.
    #[arg(long, value_enum, default_value_t = RetrieveMode::RankBm25)]
    mode: RetrieveMode,
    /// tantivy mode: the index directory; default under CODECAL_HOME/indexes. It is
    /// reused while the pool file is unchanged and rebuilt when it changes.
    #[arg(long)]
    index: Option<PathBuf>,
    /// Exemplars per query.
    #[arg(long, default_value_t = 3)]
    k: usize,
    /// Besides the query itself, also exclude its repository's records (same-repo).
    #[arg(long, value_enum, default_value_t = Exclude::SelfOnly)]
    exclude: Exclude,
    /// Prompt template file with [exemplar] and [query] blocks; default: the seed's.
    #[arg(long)]
    template: Option<PathBuf>,
    /// Prompt for a completion endpoint (one string) or a chat one (messages).
    #[arg(long, value_enum, default_value_t = PromptStyle::Completion)]
    prompt_style: PromptStyle,
    /// Cut exemplar code (then query code) so the prompt stays within this many
    /// estimated tokens (characters / 4); the query is never dropped.
    #[arg(long)]
    max_prompt_tokens: Option<usize>,
    /// Make a malformed input line an error instead of skipping it.
    #[arg(long)]
    strict: bool,
    /// Output JSONL, one line per query: id, reference, exemplars (id, score), prompt.
    #[arg(long)]
    out: PathBuf,
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("codecal: error: {}", one_line(&err));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line, each cause only where the message
/// above it does not already quote it (our errors often include their source).
fn one_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if !line.contains(&text) {
            if !line.is_empty() {
                line += ": ";
            }
            line += &text;
        }
    }
    line
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Calibrate(args) => run_calibrate(args),
        Command::Score(args) => run_score(args),
        Command::Thresholds(args) => run_thresholds(args),
        Command::Retrieve(args) => run_retrieve(args),
        Command::Corpus(CorpusCommand::Mine(args)) => run_mine(args),
        Command::Corpus(CorpusCommand::Sample(args)) => run_sample(args),
        Command::Generate(args) => commands::generate::run(args),
        Command::Run(args) => commands::run::run(args),
        Command::Judge(args) => commands::judge::run(args),
        Command::Setup => {
            let home = ModelHome::from_env()?;
            let files = home.ensure_minilm_on(Device::Auto)?;
            println!("all-MiniLM-L6-v2: {}", files.onnx.display());
            println!("ONNX Runtime: {}", files.onnxruntime.display());
            match &files.cuda {
                Some(cuda) => println!("ONNX Runtime for CUDA: {}", cuda.dir.display()),
                None => println!("ONNX Runtime for CUDA: not installed (no NVIDIA GPU here)"),
            }
            println!(
                "SmolLM2-135M-Instruct: {}",
                home.ensure_smollm2()?.display()
            );
            println!("HumanEval: {}", home.ensure_humaneval()?.display());
            // The sandbox is needed only by tasks that run generated code,
            // so a machine without it can still do everything else.
            match codecal::sandbox::ensure_bubblewrap() {
                Ok(version) => println!("sandbox: {version}"),
                Err(why) => eprintln!("codecal setup: warning: {why}"),
            }
            Ok(())
        }
    }
}

fn run_calibrate(args: CalibrateArgs) -> anyhow::Result<()> {
    let table = Table::read(&args.input, args.format)?;
    let label = match &args.score {
        Some(column) => LabelSource::Threshold {
            column: column.clone(),
            threshold: score_threshold(&args)?,
        },
        None => LabelSource::Column(args.correct.clone().unwrap_or_else(|| "correct".into())),
    };
    let spec = ColumnSpec {
        confidence: args.confidence.clone(),
        label,
        group: args.group.clone(),
        target: args.target.clone(),
    };
    let data = CalibrationData::from_table(&table, &spec)?;
    let default_cv = if args.group.is_some() {
        CvStrategy::Group
    } else {
        CvStrategy::Kfold
    };
    let options = CalibrateOptions {
        method: args.method,
        penalty: !args.no_penalty,
        cv: args.cv.unwrap_or(default_cv),
        folds: args.folds,
        bins: BinSpec {
            count: args.bins,
            binning: args.binning,
        },
        bootstrap: args.bootstrap,
        bootstrap_by_group: args.bootstrap_by_group,
        seed: args.seed,
    };
    let report = calibrate(&data, &options)
        .with_context(|| format!("{}: cannot calibrate", args.input.display()))?;
    for warning in &report.warnings {
        eprintln!("codecal: warning: {warning}");
    }
    if let Some(dir) = &args.out {
        for warning in report::write_calibration_dir(dir, &report)? {
            eprintln!("codecal: warning: {warning}");
        }
    }
    if args.json {
        print!("{}", report::json(&report));
    } else {
        print!("{}", report::markdown(&report));
    }
    Ok(())
}

/// The threshold on --score: given, or read from a thresholds file.
fn score_threshold(args: &CalibrateArgs) -> anyhow::Result<f64> {
    if let Some(threshold) = args.threshold {
        return Ok(threshold);
    }
    let Some(path) = &args.thresholds else {
        anyhow::bail!("--score needs --threshold or --thresholds");
    };
    let found = read_threshold(path, args.operating_point)?;
    eprintln!(
        "codecal: correct = {} >= {} ({} of {}, derived for metric {})",
        args.score.as_deref().unwrap_or(""),
        found.threshold,
        args.operating_point.section(),
        path.display(),
        found.metric
    );
    Ok(found.threshold)
}

fn run_score(args: ScoreArgs) -> anyhow::Result<()> {
    let table = Table::read(&args.input, args.format)?;
    let (id, reference, candidate) = (
        table.column(&args.columns.id)?,
        table.column(&args.columns.reference)?,
        table.column(&args.columns.candidate)?,
    );
    // Empty summaries are valid input: the model embeds them as it does any text.
    let text = |column: &codecal::table::Column, row| column.text(row).unwrap_or("").to_owned();
    let pairs = (0..table.len())
        .map(|row| {
            Ok(Pair {
                id: id.text(row)?.to_owned(),
                reference: text(&reference, row),
                candidate: text(&candidate, row),
            })
        })
        .collect::<Result<Vec<_>, codecal::table::TableError>>()?;
    let files = ModelHome::from_env()?.ensure_minilm_on(args.device)?;
    let options = EmbedOptions {
        batch_size: args.batch_size,
        threads: args.threads,
        device: args.device,
    };
    let mut scorer = Scorer::new(OnnxEmbedder::new(&files, &options)?, args.tokenization);
    let started = std::time::Instant::now();
    let mut shown = false;
    let scores = scorer.score(&pairs, |done, total| {
        // Only long inputs get a progress line; short ones finish before it helps.
        if total > 2048 {
            let rate = done as f64 / started.elapsed().as_secs_f64().max(1e-9);
            let eta = (total - done) as f64 / rate.max(1e-9);
            eprint!(
                "\rcodecal: embedded {done}/{total} distinct texts, {rate:.0}/s, ETA {eta:.0} s "
            );
            shown = true;
        }
    })?;
    if shown {
        eprintln!();
    }
    if scorer.truncated() > 0 {
        eprintln!(
            "codecal: warning: {} texts were longer than {} tokens and truncated",
            scorer.truncated(),
            codecal::score::embed::MAX_TOKENS
        );
    }
    let csv = report::scores_csv(&scores);
    match &args.out {
        Some(path) => codecal::artifact::write_atomic(path, csv.as_bytes())?,
        None => print!("{csv}"),
    }
    Ok(())
}

fn run_thresholds(args: ThresholdsArgs) -> anyhow::Result<()> {
    let table = Table::read(&args.ratings, args.format)?;
    let mut columns = args.column.clone();
    columns.extend(args.cosine_column.iter().cloned());
    let items = if thresholds::ratings::is_haque(&table) {
        thresholds::ratings::read_haque(&table, &columns)?
    } else {
        let layout = thresholds::GenericColumns {
            id: args.columns.id.clone(),
            reference: args.columns.reference.clone(),
            candidate: args.columns.candidate.clone(),
            ratings: args.ratings_columns.clone(),
        };
        anyhow::ensure!(
            !layout.ratings.is_empty(),
            "--rating: name at least one rating column"
        );
        let scale = thresholds::Scale {
            min: args.scale_min,
            max: args.scale_max,
        };
        thresholds::ratings::read_generic(&table, &layout, scale, &columns)?
    };
    let labels = thresholds::ratings::labels(&items, args.label_rule, args.cutoff);
    let text_metrics = !args.no_text_metrics;
    let values = if text_metrics && !args.no_model {
        let files = ModelHome::from_env()?.ensure_minilm_on(Device::Auto)?;
        let embedder = OnnxEmbedder::new(&files, &EmbedOptions::default())?;
        let mut scorer = Scorer::new(embedder, args.tokenization);
        thresholds::metric_values(
            &items,
            Some(&mut scorer),
            args.tokenization,
            true,
            &args.cosine_column,
        )?
    } else {
        thresholds::metric_values::<OnnxEmbedder>(
            &items,
            None,
            args.tokenization,
            text_metrics,
            &args.cosine_column,
        )?
    };
    let options = ThresholdOptions {
        search: args.grid.map_or(Search::Exact, Search::Grid),
        bootstrap: args.bootstrap,
        seed: args.seed,
    };
    let derived = thresholds::derive_selected(&values, &args.metric, &labels, &options)?;
    if let Some(dir) = &args.out {
        write_thresholds_dir(dir, &derived, &args)?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&derived)?);
    } else {
        print!("{}", report::thresholds_markdown(&derived));
    }
    Ok(())
}

fn write_thresholds_dir(
    dir: &std::path::Path,
    derived: &[thresholds::MetricThresholds],
    args: &ThresholdsArgs,
) -> anyhow::Result<()> {
    codecal::artifact::create_dir(dir)?;
    let provenance = report::Provenance {
        command: command_line(),
        ratings: args.ratings.display().to_string(),
        label_rule: args
            .label_rule
            .to_possible_value()
            .map_or(String::new(), |v| v.get_name().to_owned()),
        cutoff: args.cutoff,
        search: args
            .grid
            .map_or("exact".to_owned(), |g| format!("grid {g}")),
        bootstrap: args.bootstrap,
        seed: args.seed,
    };
    for m in derived {
        let path = dir.join(report::threshold_file_name(&m.metric));
        codecal::artifact::write_atomic(&path, report::thresholds_toml(m, &provenance).as_bytes())?;
    }
    let svg = report::roc_svg(derived);
    codecal::artifact::write_atomic(&dir.join("roc.svg"), svg.as_bytes())?;
    let (png, warnings) = report::render_png(&svg)?;
    codecal::artifact::write_atomic(&dir.join("roc.png"), &png)?;
    for warning in warnings {
        eprintln!("codecal: warning: {warning}");
    }
    Ok(())
}

/// This invocation as a shell command, starting with `codecal`.
fn command_line() -> String {
    let quote = |arg: String| {
        if arg.is_empty() || arg.contains(|c: char| c.is_whitespace() || "'\"$\\".contains(c)) {
            format!("'{}'", arg.replace('\'', "'\\''"))
        } else {
            arg
        }
    };
    std::iter::once("codecal".to_owned())
        .chain(std::env::args().skip(1).map(quote))
        .collect::<Vec<_>>()
        .join(" ")
}

fn run_retrieve(args: RetrieveArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.k > 0, "--k must be at least 1");
    let template = match &args.template {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("{}: cannot read", path.display()))?;
            Template::parse(&text, &path.display().to_string())?
        }
        None => Template::seed(),
    };
    let pool = read_records(&args.pool, args.strict)?;
    let same_file = std::fs::canonicalize(&args.pool)? == std::fs::canonicalize(&args.queries)?;
    let queries = if same_file {
        pool.clone()
    } else {
        read_records(&args.queries, args.strict)?
    };
    let index = match args.mode {
        RetrieveMode::RankBm25 => None,
        RetrieveMode::Tantivy => {
            let fingerprint = codecal::retrieve::index::pool_fingerprint(&args.pool)
                .with_context(|| format!("{}: cannot read", args.pool.display()))?;
            let dir = match &args.index {
                Some(dir) => dir.clone(),
                None => codecal::retrieve::index::default_index_dir(
                    ModelHome::from_env()?.root(),
                    &args.pool,
                    &fingerprint,
                ),
            };
            Some((dir, fingerprint))
        }
    };
    let search = ExemplarSearch {
        mode: args.mode,
        k: args.k,
        exclude: args.exclude,
        same_file,
        index,
    };
    let hits = codecal::retrieve::find_exemplars(&pool, &queries, &search)?;
    let prompts = PromptOptions {
        template: &template,
        style: args.prompt_style,
        budget: args.max_prompt_tokens,
    };
    let out = codecal::retrieve::prompts_jsonl(&pool, &queries, &hits, &prompts);
    codecal::artifact::write_atomic(&args.out, out.as_bytes())?;
    eprintln!(
        "codecal: {} queries, pool of {}, {} exemplars each, written to {}",
        queries.len(),
        pool.len(),
        args.k,
        args.out.display()
    );
    Ok(())
}

/// Records of a CodeXGLUE file, deduplicated by id; what was skipped goes to stderr.
fn read_records(path: &std::path::Path, strict: bool) -> anyhow::Result<Vec<Record>> {
    let (mut records, report) = read_codexglue(path, strict)?;
    for (reason, count) in &report.skipped {
        eprintln!(
            "codecal: {}: skipped {count} lines: {reason}",
            path.display()
        );
    }
    let duplicates = dedupe(&mut records);
    if duplicates > 0 {
        eprintln!(
            "codecal: {}: dropped {duplicates} records repeating an id",
            path.display()
        );
    }
    anyhow::ensure!(!records.is_empty(), "{}: no records", path.display());
    Ok(records)
}

fn run_mine(args: MineArgs) -> anyhow::Result<()> {
    let dir = match args.dir {
        Some(dir) => dir,
        None => python_stdlib()?,
    };
    let options = MineOptions {
        language: args.language,
        repo_depth: args.repo_depth,
    };
    let (records, report) = mine_tree(&dir, options)?;
    for (reason, count) in &report.skipped {
        eprintln!("codecal: skipped {count} ({reason})");
    }
    codecal::artifact::write_atomic(&args.out, to_jsonl(&records).as_bytes())?;
    eprintln!(
        "codecal: mined {} records from {} into {}",
        records.len(),
        dir.display(),
        args.out.display()
    );
    Ok(())
}

fn run_sample(args: SampleArgs) -> anyhow::Result<()> {
    let records = read_records(&args.input, args.strict)?;
    let exclude_repos = args.pool_exclude == Exclude::SameRepo;
    let (queries, pool) = codecal::corpus::sample(&records, args.queries, args.seed, exclude_repos);
    codecal::artifact::write_atomic(&args.out_queries, to_jsonl(&queries).as_bytes())?;
    codecal::artifact::write_atomic(&args.out_pool, to_jsonl(&pool).as_bytes())?;
    eprintln!(
        "codecal: {} queries, {} pool records",
        queries.len(),
        pool.len()
    );
    Ok(())
}
