//! `codecal calibrate`: read a table of confidences and labels, measure how
//! well the confidences predict correctness (raw and rescaled), and print or
//! write the report. The metrics, rescalers and bootstrap are the library's
//! (`codecal::calibrate`); this is only flag mapping and output.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use codecal::choice::Choice;

use codecal::artifact::refuse_unsafe_outputs;
use codecal::calibrate::calibrator::LabelDefinition;
use codecal::calibrate::grouped::{GroupColumn, GroupedParams, calibrate_grouped};
use codecal::calibrate::multical::MulticalibrationParams;
use codecal::calibrate::{
    BinSpec, Binning, CalibrateOptions, CalibrationData, Calibrator, ColumnSpec, CutoffParams,
    CvStrategy, LabelSource, Method, MethodChoice, Procedure, Provenance,
};
use codecal::report;
use codecal::table::{Format, Table};
use codecal::thresholds::file::{OperatingPointName, read_threshold};

#[derive(Args)]
pub struct CalibrateArgs {
    /// Input file of items, one row each (CSV with a header, or JSONL).
    input: PathBuf,
    /// Input format; by default taken from the extension (.csv, .jsonl).
    #[arg(long, value_parser = super::choice::<Format>())]
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
    #[arg(long, requires = "score", conflicts_with = "thresholds", value_parser = super::finite)]
    threshold: Option<f64>,
    /// Instead of --threshold: a file written by `codecal thresholds` (e.g.
    /// thresholds/sbert-minilm.toml), read at --operating-point.
    #[arg(long, requires = "score")]
    thresholds: Option<PathBuf>,
    /// Which threshold of --thresholds: best-f1, high-precision or high-recall.
    #[arg(long, value_parser = super::choice::<OperatingPointName>(), default_value_t = OperatingPointName::BestF1)]
    operating_point: OperatingPointName,
    /// The metric the --score column holds, where its name is not the
    /// metric's (default: the column's name). A thresholds file derived for
    /// another metric is refused.
    #[arg(long, requires = "thresholds")]
    score_metric: Option<String>,
    /// Column naming each item's group (e.g. repository) for group CV and group bootstrap.
    #[arg(long)]
    group: Option<String>,
    /// Column with a continuous quality value; adds Spearman's rho against confidence.
    #[arg(long)]
    target: Option<String>,
    /// Rescaling method. platt: logistic regression on logit(p) with scikit-learn's
    /// default L2 penalty (C = 1, intercept free); platt-ln: the same on ln(p);
    /// platt-p: the same on p itself ("Open the Oyster", Eq. 4); temperature: slope
    /// only; isotonic: pool-adjacent-violators; histogram: success rate per bin;
    /// none: raw metrics only; multicalibration: --base, then patches that
    /// calibrate every group of --group-features (Hébert-Johnson et al. 2018).
    #[arg(long, default_value = "platt", value_parser = method_choice)]
    method: MethodChoice,
    /// With --method multicalibration: the base rescaler fitted first.
    #[arg(long, value_parser = super::choice::<Method>(), default_value_t = Method::Platt)]
    base: Method,
    /// Columns whose values define groups for --method multicalibration:
    /// text columns as given, numeric columns in quantile bins.
    #[arg(long, value_delimiter = ',')]
    group_features: Vec<String>,
    /// Multicalibration: the gap a group-and-bin cell may keep.
    #[arg(long, default_value_t = 0.02, value_parser = super::finite)]
    mc_alpha: f64,
    /// Multicalibration: fewest training items in a cell for it to be corrected.
    #[arg(long, default_value_t = 50)]
    mc_min_items: usize,
    /// Multicalibration: most group features intersected in one group (1 to 4).
    #[arg(long, default_value_t = 2)]
    mc_depth: usize,
    /// Multicalibration: quantile bins of a numeric group feature (2 to 100).
    #[arg(long, default_value_t = 4)]
    mc_quantiles: usize,
    /// Multicalibration: most patches.
    #[arg(long, default_value_t = 500)]
    mc_rounds: usize,
    /// Fit the logistic rescalers without the L2 penalty (maximum likelihood).
    #[arg(long)]
    no_penalty: bool,
    /// Cross-validation for the rescaler; default: group with --group, else kfold.
    #[arg(long, value_parser = super::choice::<CvStrategy>())]
    cv: Option<CvStrategy>,
    /// Number of cross-validation folds (2 to 100).
    #[arg(long, default_value_t = 5, value_parser = super::count_in(2..=100))]
    folds: usize,
    /// Number of confidence bins for ECE, MCE, histogram binning and the diagram
    /// (1 to 1000).
    #[arg(long, default_value_t = 10, value_parser = super::count_in(1..=1000))]
    bins: usize,
    /// How bins are cut: equal-width (i/N, (i+1)/N] or equal-mass (equal item counts).
    #[arg(long, value_parser = super::choice::<Binning>(), default_value_t = Binning::EqualWidth)]
    binning: Binning,
    /// Bootstrap resamples for 95% percentile intervals (at most 100000); 0 turns
    /// them off.
    #[arg(long, default_value_t = 1000, value_parser = super::count_in(0..=100_000))]
    bootstrap: usize,
    /// Resample whole groups (from --group) instead of items.
    #[arg(long)]
    bootstrap_by_group: bool,
    /// Give intervals only to these metrics (comma-separated names as in the
    /// JSON, e.g. brier,auroc,smooth_ece); every metric by default.
    #[arg(long, value_delimiter = ',')]
    bootstrap_metrics: Option<Vec<String>>,
    /// Seed for fold shuffles and bootstrap draws.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print one JSON object instead of the Markdown table.
    #[arg(long)]
    json: bool,
    /// Also write metrics.json, metrics.csv, table.md, table.tex, reliability.svg,
    /// reliability.png, risk_coverage.svg and risk_coverage.png into this directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Save the calibrator (final fit on every item, cutoffs, metrics) as JSON
    /// for `codecal apply`.
    #[arg(long)]
    save: Option<PathBuf>,
    /// Precision among accepted items that an accept cutoff must guarantee
    /// (repeatable; default 0.8, 0.9 and 0.95). Chosen by Learn-then-Test on the
    /// raw confidences, the ones `apply` compares; with --by, also per group of
    /// the first --by column, each with its own guarantee (with multicalibration,
    /// on the multicalibrated out-of-fold confidences, which `apply` then compares).
    #[arg(long, value_parser = super::finite)]
    target_precision: Vec<f64>,
    /// Also report calibration per group of this column (repeatable): n, success
    /// rate, ECE, smooth ECE and skill score, raw and rescaled, and the worst group.
    #[arg(long = "by")]
    by: Vec<String>,
    /// Also fit one rescaler per group of this column, with the same method and
    /// cross-validation, and show each group's result beside the single rescaler's.
    #[arg(long)]
    rescale_by: Option<String>,
    /// The chance the cutoffs' guarantee may fail.
    #[arg(long, default_value_t = 0.1, value_parser = super::finite)]
    delta: f64,
    /// Also choose a reject cutoff: below it, at least this fraction of items is
    /// wrong, with the same guarantee.
    #[arg(long, value_parser = super::finite)]
    reject_precision: Option<f64>,
    /// How the candidate cutoffs are tested (each controls the chance of any
    /// wrong guarantee at δ).
    #[arg(long, value_parser = super::choice::<Procedure>(), default_value_t = Procedure::FixedSequence)]
    procedure: Procedure,
    /// An accept cutoff must also accept at least this share of items (a lower
    /// bound at δ), or the rule says it cannot.
    #[arg(long, value_parser = super::finite)]
    min_coverage: Option<f64>,
}

pub fn run(args: CalibrateArgs) -> anyhow::Result<()> {
    let outputs: Vec<&std::path::Path> = args.save.iter().map(PathBuf::as_path).collect();
    refuse_unsafe_outputs(&outputs, &[&args.input])?;
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
        label: label.clone(),
        group: args.group.clone(),
        target: args.target.clone(),
    };
    let mut data = CalibrationData::from_table(&table, &spec)?;
    let multicalibration = multicalibration_params(&args)?;
    if multicalibration.is_some() {
        data.read_features(&table, &args.group_features)?;
    }
    let default_cv = if args.group.is_some() {
        CvStrategy::Group
    } else {
        CvStrategy::Kfold
    };
    let options = CalibrateOptions {
        method: args.method.base(args.base),
        multicalibration,
        penalty: !args.no_penalty,
        cv: args.cv.unwrap_or(default_cv),
        folds: args.folds,
        bins: BinSpec {
            count: args.bins,
            binning: args.binning,
        },
        bootstrap: args.bootstrap,
        bootstrap_by_group: args.bootstrap_by_group,
        bootstrap_metrics: args.bootstrap_metrics.clone(),
        seed: args.seed,
        cutoffs: cutoff_params(&args),
        smooth_ece: true,
    };
    let grouped = grouped_params(&args, &table)?;
    let report = calibrate_grouped(&data, &options, &grouped)
        .with_context(|| format!("{}: cannot calibrate", args.input.display()))?;
    for warning in &report.warnings {
        eprintln!("codecal: warning: {warning}");
    }
    if let Some(dir) = &args.out {
        for warning in report::write_calibration_dir(dir, &report)? {
            eprintln!("codecal: warning: {warning}");
        }
    }
    if let Some(path) = &args.save {
        Calibrator::from_report(&report, provenance(&args, &label)).save(path)?;
    }
    if args.json {
        print!("{}", report::json(&report));
    } else {
        print!("{}", report::markdown(&report));
    }
    Ok(())
}

/// `--method`: a rescaler, or multicalibration on top of `--base`.
fn method_choice(text: &str) -> Result<MethodChoice, String> {
    MethodChoice::from_name(text).ok_or_else(|| {
        format!(
            "no method {text:?}; use {} or multicalibration",
            Method::names().join(", ")
        )
    })
}

/// The multicalibration settings of `--method multicalibration`, checked.
fn multicalibration_params(args: &CalibrateArgs) -> anyhow::Result<Option<MulticalibrationParams>> {
    anyhow::ensure!(
        args.group_features
            .iter()
            .all(|name| !name.trim().is_empty()),
        "--group-features {:?}: a feature name is empty",
        args.group_features.join(",")
    );
    if args.method != MethodChoice::Multicalibration {
        anyhow::ensure!(
            args.group_features.is_empty(),
            "--group-features needs --method multicalibration"
        );
        return Ok(None);
    }
    anyhow::ensure!(
        !args.group_features.is_empty(),
        "--method multicalibration needs --group-features COLUMN,..."
    );
    let params = MulticalibrationParams {
        alpha: args.mc_alpha,
        min_items: args.mc_min_items,
        depth: args.mc_depth,
        quantiles: args.mc_quantiles,
        max_rounds: args.mc_rounds,
        ..MulticalibrationParams::default()
    };
    params.check()?;
    Ok(Some(params))
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
    let column = args.score.as_deref().unwrap_or("");
    let holds = args.score_metric.as_deref().unwrap_or(column);
    anyhow::ensure!(
        found.metric == holds,
        "{}: derived for metric {:?}, but --score {column:?} holds {holds:?}; pass \
         --score-metric {:?} if that column holds {:?} scores",
        path.display(),
        found.metric,
        found.metric,
        found.metric
    );
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

fn cutoff_params(args: &CalibrateArgs) -> CutoffParams {
    let defaults = CutoffParams::default();
    CutoffParams {
        target_precisions: if args.target_precision.is_empty() {
            defaults.target_precisions
        } else {
            args.target_precision.clone()
        },
        delta: args.delta,
        reject_precision: args.reject_precision,
        procedure: args.procedure,
        min_coverage: args.min_coverage,
        ..defaults
    }
}

/// What the saved calibrator records about its items: where the labels
/// came from, as `run` already resolved them (the thresholds file is read once).
fn provenance(args: &CalibrateArgs, label: &LabelSource) -> Provenance {
    let label = match label {
        LabelSource::Threshold { column, threshold } => LabelDefinition {
            column: column.clone(),
            threshold: Some(*threshold),
            thresholds_file: args.thresholds.as_ref().map(|p| p.display().to_string()),
            operating_point: args
                .thresholds
                .as_ref()
                .map(|_| args.operating_point.section().to_owned()),
            metric: None,
        },
        LabelSource::Column(column) => LabelDefinition {
            column: column.clone(),
            ..LabelDefinition::default()
        },
    };
    Provenance {
        measure: args.confidence.clone(),
        label,
        generator: None,
    }
}

/// Each item's group in `column`; an empty cell is refused naming its line.
fn group_labels(table: &Table, name: &str) -> anyhow::Result<Vec<String>> {
    let column = table.column(name)?;
    (0..table.len())
        .map(|row| {
            let text = column.text(row)?;
            anyhow::ensure!(
                !text.trim().is_empty(),
                "{}:{}: {name} is empty; every item needs a group for --by {name} with \
                 --target-precision",
                table.path().display(),
                column.location(row).line
            );
            Ok(text.to_owned())
        })
        .collect()
}

/// The `--by` and `--rescale-by` columns, read; with `--target-precision`,
/// the first `--by` column also gets cutoffs per group, so its groups must
/// not be empty.
fn grouped_params(args: &CalibrateArgs, table: &Table) -> anyhow::Result<GroupedParams> {
    let mut names = args.by.clone();
    if let Some(name) = &args.rescale_by
        && !names.contains(name)
    {
        names.push(name.clone());
    }
    let cutoffs_by_first = !args.by.is_empty() && !args.target_precision.is_empty();
    let by = names
        .iter()
        .enumerate()
        .map(|(index, name)| {
            let values = match index == 0 && cutoffs_by_first {
                true => group_labels(table, name)?,
                false => table.column(name)?.texts()?,
            };
            Ok(GroupColumn {
                name: name.clone(),
                values,
            })
        })
        .collect::<anyhow::Result<_>>()?;
    Ok(GroupedParams {
        by,
        rescale_by: args.rescale_by.clone(),
        cutoffs_by_first,
    })
}
