//! The `codecal` command line: one subcommand per stage, each a thin shell
//! over a library function. The only place that uses `anyhow`.

use std::process::ExitCode;

mod commands;

use clap::{Parser, Subcommand};

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
    Calibrate(commands::calibrate::CalibrateArgs),
    /// Apply a saved calibrator (`calibrate --save`) to new items: each gets
    /// its calibrated confidence and a decision (accept, review or reject).
    Apply(commands::apply::ApplyArgs),
    /// Check new labelled items, in arrival order, against a saved
    /// calibrator's accept rule: an anytime-valid test that raises an alarm
    /// (exit code 3) when the precision among accepted items falls below its
    /// target.
    Monitor(commands::monitor::MonitorArgs),
    /// Score candidate summaries against references: SentenceBERT cosine,
    /// BERTScore, BLEU and ROUGE. Installs the model on first use.
    Score(commands::score::ScoreArgs),
    /// Choose similarity thresholds against human ratings: ROC, AUC and three
    /// operating points (best F1, high precision, high recall) per metric.
    Thresholds(commands::thresholds::ThresholdsArgs),
    /// Build corpora: mine documented functions from a source tree, or sample one.
    #[command(subcommand)]
    Corpus(commands::corpus::CorpusCommand),
    /// Retrieve BM25 few-shot exemplars for each query and build its prompt.
    Retrieve(commands::retrieve::RetrieveArgs),
    /// Generate with a language model (a local GGUF model, SmolLM2 or
    /// Qwen2.5-Coder, or an OpenAI-compatible server), with token log-probabilities and confidence measures; every
    /// answer is cached, so a rerun or a resumed run asks for nothing twice.
    Generate(commands::generate::GenerateArgs),
    /// Run the whole pipeline (corpus, retrieval, generation, scoring,
    /// labels, calibration, report) from a TOML config, resumably; with no
    /// --config, the embedded default on the local Python standard library.
    Run(commands::run::RunArgs),
    /// Join the shards of one run (`run --shard i/n`, any machines, any
    /// order) into the run directory the run writes in one piece, then
    /// calibrate and report there; refuses a gap, an overlap or a shard of
    /// another config, naming it.
    Merge(commands::merge::MergeArgs),
    /// Judge answers to HumanEval, MBPP or CRUXEval problems by running
    /// them, sandboxed, against the dataset's tests; one verdict per answer.
    Judge(commands::judge::JudgeArgs),
    /// Summarise the functions of your own source tree, each with a calibrated
    /// confidence and a decision (accept, review, reject) from a saved calibrator.
    Summarize(commands::summarize::SummarizeArgs),
    /// Rebuild a finished run's report.md and report.html (one self-contained
    /// page: tables, figures, decisions and the items behind them) from its
    /// report.json, without re-running any stage; --open shows the page.
    Report(commands::report::ReportArgs),
    /// Install the models codecal uses (all-MiniLM-L6-v2 with ONNX Runtime, and
    /// SmolLM2-135M-Instruct) and the HumanEval data into CODECAL_HOME
    /// (default ~/.cache/codecal), and bubblewrap for the sandbox (as root,
    /// with apt-get). Other subcommands do it on first use.
    Setup(commands::setup::SetupArgs),
}

/// glibc serves each allocation above its mmap threshold (128 KiB at
/// first) with fresh pages and unmaps them when freed, and trims the heap
/// once its free top exceeds the trim threshold. A bootstrap allocates and
/// frees item-sized vectors (weights, tie runs, grids) on every resample, so
/// every resample paid page faults: 1.4 million of them, 1.4 s of system
/// time, for 100,000 items × 1,000 resamples. Fixing both thresholds high
/// keeps freed memory for reuse (12,000 faults; the process's peak memory
/// is unchanged, it is only returned at exit).
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets two allocator parameters; it is called
    // before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}

fn main() -> ExitCode {
    // A closed stdout (`codecal ... | head -1`) ends the program quietly, as
    // Unix tools do, instead of a "Broken pipe" panic in `println!`.
    // SAFETY: restoring the default disposition of one signal, before any
    // thread starts, touches no Rust state.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    exit_on_write_errors();
    keep_freed_memory();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return clap_exit(&err),
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("codecal: error: {}", one_line(&err));
            ExitCode::FAILURE
        }
    }
}

/// Prints clap's help, version or usage error as clap would, but checks the
/// write: `codecal --help > /dev/full` fails with status 1, as every other
/// failed write does.
fn clap_exit(err: &clap::Error) -> ExitCode {
    use std::io::Write;
    let text = err.render().to_string();
    if err.use_stderr() {
        let _ = write!(std::io::stderr(), "{text}");
        return ExitCode::from(2);
    }
    let mut stdout = std::io::stdout();
    match write!(stdout, "{text}").and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("codecal: error: cannot write to standard output: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A full or failing stdout or stderr (`codecal ... > /dev/full`) ends the
/// program with a one-line message and exit status 1 instead of the panic
/// `println!` raises; other panics keep the default report.
fn exit_on_write_errors() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        for stream in ["stdout", "stderr"] {
            if let Some(why) = message.strip_prefix(&format!("failed printing to {stream}: ")) {
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "codecal: error: cannot write to standard {}: {why}",
                    if stream == "stdout" {
                        "output"
                    } else {
                        "error"
                    }
                );
                std::process::exit(1);
            }
        }
        default(info);
    }));
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
        Command::Calibrate(args) => commands::calibrate::run(args),
        Command::Apply(args) => commands::apply::run(args),
        Command::Monitor(args) => commands::monitor::run(args),
        Command::Report(args) => commands::report::run(args),
        Command::Score(args) => commands::score::run(args),
        Command::Thresholds(args) => commands::thresholds::run(args),
        Command::Retrieve(args) => commands::retrieve::run(args),
        Command::Corpus(command) => commands::corpus::run(command),
        Command::Generate(args) => commands::generate::run(args),
        Command::Run(args) => commands::run::run(args),
        Command::Merge(args) => commands::merge::run(args),
        Command::Judge(args) => commands::judge::run(args),
        Command::Summarize(args) => commands::summarize::run(args),
        Command::Setup(args) => commands::setup::run(args),
    }
}
