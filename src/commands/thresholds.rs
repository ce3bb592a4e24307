//! `codecal thresholds`: read human ratings, score the texts, and choose
//! similarity thresholds per metric; print them, or write one TOML file per
//! metric and the ROC plot. ROC, AUC and the operating points are the
//! library's (`codecal::thresholds`); this is only flag mapping and output.

use std::path::PathBuf;

use clap::Args;

use codecal::models::ModelHome;
use codecal::report;
use codecal::score::{Device, EmbedOptions, OnnxEmbedder, Scorer, Tokenization};
use codecal::table::{Format, Table};
use codecal::thresholds::{self, LabelRule, Search, ThresholdOptions};

use super::PairColumns;

#[derive(Args)]
pub struct ThresholdsArgs {
    /// Ratings file: the Haque et al. final_megafile.csv layout (detected by its
    /// columns function_id, source, similarity, text, text.1) or a generic one.
    #[arg(long)]
    ratings: PathBuf,
    /// Input format; by default taken from the extension (.csv, .jsonl).
    #[arg(long, value_parser = super::choice::<Format>())]
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
    #[arg(long, value_parser = super::choice::<LabelRule>(), default_value_t = LabelRule::BaselineMean)]
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
    #[arg(long = "tokenize", value_parser = super::choice::<Tokenization>(), default_value_t = Tokenization::Codexglue)]
    tokenization: Tokenization,
    /// Report and write only these metrics (repeatable); default all.
    #[arg(long)]
    metric: Vec<String>,
    /// Search thresholds on multiples of this step in [0, 1] instead of every score
    /// value (a step from 0.000001 to 1).
    #[arg(long, value_parser = super::grid_step)]
    grid: Option<f64>,
    /// Bootstrap resamples of items for the AUC and threshold intervals (at most
    /// 100000); 0 turns them off.
    #[arg(long, default_value_t = 1000, value_parser = super::count_in(0..=100_000))]
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

pub fn run(args: ThresholdsArgs) -> anyhow::Result<()> {
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
        label_rule: args.label_rule.to_string(),
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
