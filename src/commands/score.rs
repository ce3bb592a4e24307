//! `codecal score`: read (reference, candidate) pairs and write their
//! similarity scores as CSV. The metrics and the embedding model are the
//! library's (`codecal::score`); this is only flag mapping, progress and output.

use std::path::PathBuf;

use clap::Args;

use codecal::models::ModelHome;
use codecal::report;
use codecal::score::{Device, EmbedOptions, OnnxEmbedder, Pair, Scorer, Tokenization};
use codecal::table::{Format, Table};

use super::PairColumns;

#[derive(Args)]
pub struct ScoreArgs {
    /// Input file of pairs, one row each (CSV with a header, or JSONL).
    input: PathBuf,
    /// Input format; by default taken from the extension (.csv, .jsonl).
    #[arg(long, value_parser = super::choice::<Format>())]
    format: Option<Format>,
    #[command(flatten)]
    columns: PairColumns,
    /// Tokenization for BLEU and ROUGE: codexglue lower-cases and splits punctuation
    /// like the CodeXGLUE evaluator; whitespace splits on whitespace only, as the
    /// Haque et al. metric columns were computed.
    #[arg(long = "tokenize", value_parser = super::choice::<Tokenization>(), default_value_t = Tokenization::Codexglue)]
    tokenization: Tokenization,
    /// Where the embedding model runs: auto, cpu or cuda.
    #[arg(long, value_parser = super::choice::<Device>(), default_value_t = Device::Auto)]
    device: Device,
    /// Texts per inference batch (texts are sorted by length first; 1 to 4096).
    #[arg(long, default_value_t = 32, value_parser = super::count_in(1..=4096))]
    batch_size: usize,
    /// CPU threads in all (up to 4 batches run at once; at most 256); 0 uses every
    /// core.
    #[arg(long, default_value_t = 0, value_parser = super::count_in(0..=256))]
    threads: usize,
    /// Write the scores as CSV to this file (atomically) instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(args: ScoreArgs) -> anyhow::Result<()> {
    if let Some(out) = &args.out {
        codecal::artifact::refuse_unsafe_outputs(&[out], &[&args.input])?;
    }
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
        threads: match args.threads {
            0 => 0,
            n => super::workers_for_machine("--threads", n),
        },
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
