//! Renders a [`CalibrationReport`] as tables (Markdown, CSV, LaTeX, JSON) and
//! reliability diagrams (SVG, PNG), and writes them to an output directory;
//! renders per-pair similarity scores as CSV; and renders a run's report
//! data ([`run::RunReport`]) as `report.md` and a self-contained
//! `report.html`.
//! No metric is computed here; every number comes from the report.

mod bar_chart;
mod decisions;
mod html;
mod markup;
mod multicalibration;
pub mod paper;
mod reliability;
mod risk_coverage;
pub mod run;
mod smooth_reliability;
mod svg;
mod svg_clean;
pub mod table;
mod thresholds;

pub use decisions::decision_markdown;

use std::path::Path;

use crate::artifact::{WriteError, write_dir_atomic};
use crate::calibrate::metrics::METRIC_NAMES;
use crate::calibrate::{CalibrationReport, CvStrategy, Evaluation, Method};
use crate::score::PairScores;

pub use bar_chart::bar_chart_svg;
pub use html::{LIST_LENGTH, least_confident_right, most_confident_wrong};
pub use reliability::{PngError, reliability_svg, render_png};
pub use risk_coverage::risk_coverage_svg;
pub use smooth_reliability::smooth_reliability_svg;
pub use thresholds::{
    Provenance, metric_origin, roc_svg, threshold_file_name, thresholds_markdown, thresholds_toml,
    toml_string,
};

/// The label a metric carries in the tables.
fn metric_label(name: &str) -> &'static str {
    match name {
        "base_rate" => "Success rate",
        "ece" => "ECE",
        "ece_equal_mass" => "ECE, equal-mass bins",
        "smooth_ece" => "Smooth ECE (Blasiok and Nakkiran)",
        "debiased_l2_ce" => "Debiased L2 calibration error",
        "corp_mcb" => "CORP miscalibration (MCB)",
        "corp_dsc" => "CORP discrimination (DSC)",
        "corp_unc" => "CORP uncertainty (UNC)",
        "murphy_rel" => "Murphy reliability (binned)",
        "murphy_res" => "Murphy resolution (binned)",
        "spiegelhalter_z" => "Spiegelhalter Z",
        "spiegelhalter_p" => "Spiegelhalter p (calibrated?)",
        "mce" => "MCE",
        "brier" => "Brier",
        "brier_ref" => "Brier of base rate, p(1-p)",
        "skill_score" => "Skill score",
        "oyster_ece" => "Unbinned ECE (Open the Oyster)",
        "performance_score" => "Performance Score (Open the Oyster)",
        "auroc" => "AUROC",
        "log_loss" => "Log loss",
        "spearman" => "Spearman's rho",
        "aurc" => "AURC (risk-coverage)",
        "e_aurc" => "E-AURC",
        "augrc" => "AUGRC",
        "coverage_at_p80" => "Coverage at precision 0.8",
        "coverage_at_p90" => "Coverage at precision 0.9",
        "coverage_at_p95" => "Coverage at precision 0.95",
        _ => "?",
    }
}

/// One table row: a metric's value and interval, raw and rescaled.
struct Row {
    name: &'static str,
    raw: Option<f64>,
    raw_ci: Option<[f64; 2]>,
    rescaled: Option<f64>,
    rescaled_ci: Option<[f64; 2]>,
}

fn rows(report: &CalibrationReport) -> Vec<Row> {
    let values = |e: Option<&Evaluation>| e.map(|e| e.metrics.values());
    let (raw, rescaled) = (values(Some(&report.raw)), values(report.rescaled.as_ref()));
    let ci = |e: Option<&Evaluation>, name: &str| e.and_then(|e| e.ci.get(name).copied().flatten());
    METRIC_NAMES
        .iter()
        .enumerate()
        .filter(|(m, _)| {
            raw.is_some_and(|r| r[*m].is_some()) || rescaled.is_some_and(|r| r[*m].is_some())
        })
        .map(|(m, &name)| Row {
            name,
            raw: raw.and_then(|r| r[m]),
            raw_ci: ci(Some(&report.raw), name),
            rescaled: rescaled.and_then(|r| r[m]),
            rescaled_ci: ci(report.rescaled.as_ref(), name),
        })
        .collect()
}

pub(crate) fn method_name(method: Method) -> &'static str {
    match method {
        Method::Platt => "Platt",
        Method::PlattLn => "Platt on ln(p)",
        Method::PlattP => "Platt on p",
        Method::Temperature => "temperature",
        Method::Isotonic => "isotonic",
        Method::Histogram => "histogram binning",
        Method::None => "none",
    }
}

pub(crate) fn cv_name(cv: CvStrategy) -> &'static str {
    match cv {
        CvStrategy::Kfold => "k-fold",
        CvStrategy::Stratified => "stratified k-fold",
        CvStrategy::Group => "group k-fold",
        CvStrategy::SeedBalanced => "seed-balanced group folds",
        CvStrategy::None => "none (in-sample)",
    }
}

/// One sentence on how the rescaled column was made.
fn setup_line(report: &CalibrationReport) -> String {
    let mut line = format!(
        "n = {}; rescaler: {}",
        report.raw.metrics.n,
        method_name(report.method)
    );
    if report.method != Method::None {
        line += &format!(
            "{}; CV: {}, {} folds",
            if report.penalty { "" } else { " (no penalty)" },
            cv_name(report.cv),
            report.folds
        );
    }
    if report.untested_items > 0 {
        line += &format!("; {} items in no test fold", report.untested_items);
    }
    line += &format!(
        "; ECE over {} {} bins",
        report.bins,
        match report.binning {
            crate::calibrate::Binning::EqualWidth => "equal-width",
            crate::calibrate::Binning::EqualMass => "equal-mass",
        }
    );
    if report.bootstrap > 0 {
        line += &format!(
            "; 95% intervals from {} bootstrap resamples of {} (seed {})",
            report.bootstrap,
            if report.bootstrap_by_group {
                "groups"
            } else {
                "items"
            },
            report.seed
        );
    }
    line
}

fn fmt_value(value: Option<f64>) -> String {
    value.map_or("–".to_owned(), |v| format!("{v:.4}"))
}

fn fmt_interval(ci: Option<[f64; 2]>) -> String {
    ci.map_or(String::new(), |[lo, hi]| format!("[{lo:.4}, {hi:.4}]"))
}

/// The label of `row`, marked when bucket collapse makes the rescaled ECE meaningless.
fn row_label(report: &CalibrationReport, row: &Row, mark: &str) -> String {
    let label = metric_label(row.name);
    if report.bucket_collapse && row.name == "ece" {
        format!("{label}{mark}")
    } else {
        label.to_owned()
    }
}

const COLLAPSE_NOTE: &str = "bucket collapse: the rescaled skill score is below 0.05, so the rescaled confidences barely separate items and the rescaled ECE is not meaningful.";

/// The Markdown table printed by default.
pub fn markdown(report: &CalibrationReport) -> String {
    let with_ci = report.bootstrap > 0;
    let has_rescaled = report.rescaled.is_some();
    let mut header = vec!["Metric", "Raw"];
    if with_ci {
        header.push("Raw 95% CI");
    }
    if has_rescaled {
        header.push("Rescaled");
        if with_ci {
            header.push("Rescaled 95% CI");
        }
    }
    let mut out = format!("{}\n\n", setup_line(report));
    let cells: Vec<Vec<String>> = rows(report)
        .iter()
        .map(|row| {
            let mut cells = vec![row_label(report, row, " ‡"), fmt_value(row.raw)];
            if with_ci {
                cells.push(fmt_interval(row.raw_ci));
            }
            if has_rescaled {
                cells.push(fmt_value(row.rescaled));
                if with_ci {
                    cells.push(fmt_interval(row.rescaled_ci));
                }
            }
            cells
        })
        .collect();
    out += &table::grid_markdown(&header, &cells);
    if report.bucket_collapse {
        out += &format!("\n‡ {COLLAPSE_NOTE}\n");
    }
    for warning in &report.warnings {
        if !warning.starts_with("bucket collapse") {
            out += &format!("\nWarning: {warning}\n");
        }
    }
    out += "\n";
    out += &decision_markdown(report);
    if let Some(mc) = &report.multicalibration {
        out += "\n";
        out += &multicalibration::multicalibration_markdown(mc, method_name(report.method));
    }
    for groups in &report.subgroups {
        out += "\n";
        out += &subgroups_markdown(groups);
    }
    out
}

/// One grouping column's table: per group, raw and rescaled ECE, smooth
/// ECE and skill score, and the per-group rescaler's where it was fitted.
pub fn subgroups_markdown(groups: &crate::calibrate::subgroups::Subgroups) -> String {
    let per_group = groups
        .rows
        .iter()
        .any(|r| r.per_group.is_some() || r.note.is_some());
    let cell = |m: Option<crate::calibrate::subgroups::GroupMetrics>| {
        m.map_or("-".to_owned(), |m| {
            format!(
                "{:.4} / {:.4} / {}",
                m.ece,
                m.smooth_ece,
                m.skill_score.map_or("-".to_owned(), |s| format!("{s:.4}"))
            )
        })
    };
    let mut header = vec![
        groups.column.as_str(),
        "n",
        "success rate",
        "raw",
        "rescaled",
    ];
    if per_group {
        header.push("rescaled within the group");
    }
    let rows: Vec<Vec<String>> = groups
        .rows
        .iter()
        .map(|row| {
            let mut cells = vec![
                row.group.replace('|', "\\|"),
                row.n.to_string(),
                format!("{:.4}", row.base_rate),
                cell(Some(row.raw)),
                cell(row.rescaled),
            ];
            if per_group {
                cells.push(row.note.clone().unwrap_or_else(|| cell(row.per_group)));
            }
            cells
        })
        .collect();
    let mut out = format!(
        "Calibration by {} (ECE / smooth ECE / skill score):\n\n{}",
        groups.column,
        table::grid_markdown(&header, &rows)
    );
    if let Some(worst) = &groups.worst {
        out += &format!(
            "\nWorst {}: {worst} (largest smooth ECE after the single rescaler).\n",
            groups.column
        );
    }
    out
}

/// The same table as CSV, at full precision.
pub fn csv(report: &CalibrationReport) -> String {
    let header = [
        "metric",
        "raw",
        "raw_low",
        "raw_high",
        "rescaled",
        "rescaled_low",
        "rescaled_high",
    ]
    .map(String::from);
    let num = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    let bounds = |ci: Option<[f64; 2]>| ci.map_or([None, None], |[l, h]| [Some(l), Some(h)]);
    let cells: Vec<Vec<String>> = rows(report)
        .iter()
        .map(|row| {
            let [rl, rh] = bounds(row.raw_ci);
            let [sl, sh] = bounds(row.rescaled_ci);
            vec![
                row.name.to_string(),
                num(row.raw),
                num(rl),
                num(rh),
                num(row.rescaled),
                num(sl),
                num(sh),
            ]
        })
        .collect();
    table::grid_csv(&header, &cells)
}

/// The same table as a LaTeX `tabular` (`report::table::grid_latex`, the
/// one LaTeX renderer), the set-up line as its title.
pub fn latex(report: &CalibrationReport) -> String {
    let has_rescaled = report.rescaled.is_some();
    let cell = |v: Option<f64>, ci: Option<[f64; 2]>| match (v, ci) {
        (Some(v), Some([lo, hi])) => format!("{v:.3} [{lo:.3}, {hi:.3}]"),
        (Some(v), None) => format!("{v:.3}"),
        _ => "--".to_owned(),
    };
    let mut header = vec!["Metric".to_owned(), "Raw".to_owned()];
    if has_rescaled {
        header.push("Rescaled".to_owned());
    }
    let cells: Vec<Vec<String>> = rows(report)
        .iter()
        .map(|row| {
            let mut cells = vec![row_label(report, row, "‡"), cell(row.raw, row.raw_ci)];
            if has_rescaled {
                cells.push(cell(row.rescaled, row.rescaled_ci));
            }
            cells
        })
        .collect();
    let mut out = table::grid_latex(&setup_line(report), &header, &cells);
    if report.bucket_collapse {
        out += &format!("% $^\\ddagger$ {COLLAPSE_NOTE}\n");
    }
    out
}

/// The report as pretty JSON with stable snake_case keys.
pub fn json(report: &CalibrationReport) -> String {
    // Serializing plain data with string keys cannot fail.
    serde_json::to_string_pretty(report).unwrap_or_default() + "\n"
}

/// Per-pair similarity scores as CSV, one row per pair, full precision.
pub fn scores_csv(scores: &[PairScores]) -> String {
    let names = scores
        .first()
        .map(PairScores::named_values)
        .unwrap_or_default();
    let header: Vec<String> = std::iter::once("id".to_owned())
        .chain(names.iter().map(|(name, _)| name.to_string()))
        .collect();
    let rows: Vec<Vec<String>> = scores
        .iter()
        .map(|s| {
            std::iter::once(s.id.clone())
                .chain(s.named_values().iter().map(|(_, value)| value.to_string()))
                .collect()
        })
        .collect();
    table::grid_csv(&header, &rows)
}

/// What writing an output directory can go wrong with.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(transparent)]
    Png(#[from] PngError),
}

/// Writes metrics.json, metrics.csv, table.md, table.tex and the figures
/// (reliability, risk_coverage, smooth_reliability; SVG and PNG) into `dir`. Returns warnings (e.g. no fonts for the PNG).
pub fn write_calibration_dir(
    dir: &Path,
    report: &CalibrationReport,
) -> Result<Vec<String>, ReportError> {
    let mut files: Vec<(String, Vec<u8>)> = vec![
        ("metrics.json".into(), json(report).into_bytes()),
        ("metrics.csv".into(), csv(report).into_bytes()),
        ("table.md".into(), markdown(report).into_bytes()),
        ("table.tex".into(), latex(report).into_bytes()),
    ];
    let mut warnings = Vec::new();
    let figures = [
        ("reliability", Some(reliability_svg(report))),
        ("risk_coverage", Some(risk_coverage_svg(report))),
        ("smooth_reliability", smooth_reliability_svg(report)),
    ];
    for (name, svg) in figures
        .into_iter()
        .filter_map(|(name, svg)| svg.map(|s| (name, s)))
    {
        let (png, png_warnings) = render_png(&svg)?;
        files.push((format!("{name}.svg"), svg.into_bytes()));
        files.push((format!("{name}.png"), png));
        for warning in png_warnings {
            if !warnings.contains(&warning) {
                warnings.push(warning);
            }
        }
    }
    let listed: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(name, bytes)| (name.as_str(), bytes.as_slice()))
        .collect();
    write_dir_atomic(dir, &listed, &CALIBRATION_FILES)?;
    Ok(warnings)
}

/// Every file `write_calibration_dir` may write: an existing directory of
/// only these is a previous output and may be replaced.
const CALIBRATION_FILES: [&str; 10] = [
    "metrics.json",
    "metrics.csv",
    "table.md",
    "table.tex",
    "reliability.svg",
    "reliability.png",
    "risk_coverage.svg",
    "risk_coverage.png",
    "smooth_reliability.svg",
    "smooth_reliability.png",
];
