//! `codecal corpus mine` and `codecal corpus sample`: build record JSONL from
//! a source tree, or split records into queries and a retrieval pool. Mining,
//! reading and sampling are the library's (`codecal::corpus`); this is only
//! flag mapping, the skip counts on stderr, and writing the files.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use codecal::corpus::mine::{Language as MineLanguage, MineOptions, mine_tree, python_stdlib};
use codecal::corpus::{Record, dedupe, read_codexglue, to_jsonl};
use codecal::retrieve::Exclude;

#[derive(Subcommand)]
pub enum CorpusCommand {
    /// Mine documented functions (Python docstrings, Javadoc) from a source tree into
    /// record JSONL; without DIR, the local Python 3 standard library.
    Mine(MineArgs),
    /// Split records into a seeded random query set and a retrieval pool.
    Sample(SampleArgs),
}

#[derive(Args)]
pub struct MineArgs {
    /// Source tree to mine; default: the standard library of the local python3.
    dir: Option<PathBuf>,
    /// Language of the files to mine.
    #[arg(long = "lang", value_parser = super::choice::<MineLanguage>(), default_value_t = MineLanguage::Python)]
    language: MineLanguage,
    /// A record's repo is this many leading path components under DIR.
    #[arg(long, default_value_t = 1)]
    repo_depth: usize,
    /// Output record JSONL.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args)]
pub struct SampleArgs {
    /// Records: CodeXGLUE JSONL or codecal's record JSONL (.gz accepted).
    input: PathBuf,
    /// How many records to draw as queries (the summarization seed used 5,000).
    #[arg(long, default_value_t = 5000)]
    queries: usize,
    /// Seed of the draw.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// With same-repo, pool records from the queries' repositories are dropped.
    #[arg(long, value_parser = super::choice::<Exclude>(), default_value_t = Exclude::SelfOnly)]
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

pub fn run(command: CorpusCommand) -> anyhow::Result<()> {
    match command {
        CorpusCommand::Mine(args) => run_mine(args),
        CorpusCommand::Sample(args) => run_sample(args),
    }
}

/// Records of a CodeXGLUE file, deduplicated by id; what was skipped goes to stderr.
pub fn read_records(path: &std::path::Path, strict: bool) -> anyhow::Result<Vec<Record>> {
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
        undocumented: false,
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
    codecal::artifact::refuse_unsafe_outputs(&[&args.out_queries, &args.out_pool], &[&args.input])?;
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
