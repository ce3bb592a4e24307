//! `codecal retrieve`: find BM25 few-shot exemplars for each query and write
//! its prompt, one JSON line per query. Ranking, indexing and prompt building
//! are the library's (`codecal::retrieve`, `codecal::prompt`); this is only
//! flag mapping and file handling.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use codecal::models::ModelHome;
use codecal::prompt::{PromptStyle, Template};
use codecal::retrieve::{Exclude, ExemplarSearch, PromptOptions, RetrieveMode};

use super::corpus::read_records;

#[derive(Args)]
pub struct RetrieveArgs {
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
    #[arg(long, value_parser = super::choice::<RetrieveMode>(), default_value_t = RetrieveMode::RankBm25)]
    mode: RetrieveMode,
    /// tantivy mode: the index directory; default under CODECAL_HOME/indexes. It is
    /// reused while the pool file is unchanged and rebuilt when it changes.
    #[arg(long)]
    index: Option<PathBuf>,
    /// Exemplars per query.
    #[arg(long, default_value_t = 3)]
    k: usize,
    /// Besides the query itself, also exclude its repository's records (same-repo).
    #[arg(long, value_parser = super::choice::<Exclude>(), default_value_t = Exclude::SelfOnly)]
    exclude: Exclude,
    /// Prompt template file with [exemplar] and [query] blocks; default: the seed's.
    #[arg(long)]
    template: Option<PathBuf>,
    /// Prompt for a completion endpoint (one string) or a chat one (messages).
    #[arg(long, value_parser = super::choice::<PromptStyle>(), default_value_t = PromptStyle::Completion)]
    prompt_style: PromptStyle,
    /// Cut exemplar code (then query code) so the prompt stays within this many
    /// estimated tokens (characters / 4); the query is never dropped.
    #[arg(long)]
    max_prompt_tokens: Option<usize>,
    /// Follow each exemplar's and the query's code with ASAP's facts
    /// (seed 001, Table V): repository, path, identifiers tagged with kind
    /// and scope, and data flow (Java and Python, by tree-sitter).
    #[arg(long)]
    asap: bool,
    /// Make a malformed input line an error instead of skipping it.
    #[arg(long)]
    strict: bool,
    /// Output JSONL, one line per query: id, reference, exemplars (id, score), prompt.
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: RetrieveArgs) -> anyhow::Result<()> {
    codecal::artifact::refuse_unsafe_outputs(&[&args.out], &[&args.pool, &args.queries])?;
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
        asap: args.asap,
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
