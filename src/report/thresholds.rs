//! Renders derived thresholds: the Markdown table (the summarization seed's
//! Table II extended with the three operating points), one TOML file per
//! metric, and the ROC figure (the seed's Fig. 3).

use std::fmt::Write;

use crate::thresholds::{MetricThresholds, OperatingPoint};

/// What a thresholds file records besides the numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Provenance {
    /// The codecal command line that produced the file.
    pub command: String,
    pub ratings: String,
    pub label_rule: String,
    pub cutoff: f64,
    pub search: String,
    pub bootstrap: usize,
    pub seed: u64,
}

fn fmt_ci(ci: Option<[f64; 2]>) -> String {
    ci.map_or(String::new(), |[lo, hi]| format!(" [{lo:.3}, {hi:.3}]"))
}

fn fmt_point(point: Option<&OperatingPoint>) -> String {
    match point {
        None => "–".to_owned(),
        Some(p) => format!(
            "{:.4}{} (P {:.3}, R {:.3}, F1 {:.3}){}",
            p.threshold,
            fmt_ci(p.threshold_ci),
            p.precision,
            p.recall,
            p.f1,
            p.floor.map_or(String::new(), |f| format!(" floor {f}"))
        ),
    }
}

/// The Markdown table, one row per metric.
pub fn thresholds_markdown(metrics: &[MetricThresholds]) -> String {
    let rows: Vec<Vec<String>> = metrics
        .iter()
        .map(|m| {
            vec![
                m.metric.clone(),
                format!("{:.3}{}", m.auc, fmt_ci(m.auc_ci)),
                fmt_point(Some(&m.best_f1)),
                fmt_point(m.high_precision.as_ref()),
                fmt_point(m.high_recall.as_ref()),
            ]
        })
        .collect();
    let header = [
        "Metric",
        "AUC [95% CI]",
        "Best F1",
        "High precision",
        "High recall",
    ];
    let mut out = super::table::grid_markdown(&header, &rows);
    if let Some(m) = metrics.first() {
        let _ = writeln!(
            out,
            "\n{} items, {} positive. Thresholds: predict similar at score >= threshold; intervals are 95% bootstrap percentiles.",
            m.n, m.positives
        );
    }
    out
}

/// The model and scale a metric's values come from.
pub fn metric_origin(metric: &str) -> (&'static str, &'static str) {
    match metric {
        "sbert_cosine" => (
            "sentence-transformers/all-MiniLM-L6-v2",
            "raw cosine in [-1, 1]",
        ),
        "sbert_cosine01" => (
            "sentence-transformers/all-MiniLM-L6-v2",
            "(x+1)/2 of the raw cosine",
        ),
        m if m.starts_with("bertscore") => (
            "sentence-transformers/all-MiniLM-L6-v2",
            "greedy token cosine",
        ),
        m if m.ends_with("01") => ("precomputed column", "(x+1)/2 of the column"),
        m if m.starts_with("bleu") || m.starts_with("rouge") => ("none (lexical)", "[0, 1]"),
        _ => ("precomputed column", "as in the column"),
    }
}

/// The file a metric's thresholds are written to: the model joins the name
/// where there is one (`sbert-minilm.toml` for the (x+1)/2 cosine, the scale
/// the summarization seed's thresholds use).
pub fn threshold_file_name(metric: &str) -> String {
    let stem = match metric {
        "sbert_cosine01" => "sbert-minilm".to_owned(),
        "sbert_cosine" => "sbert-minilm-raw".to_owned(),
        m if m.starts_with("bertscore_") => {
            format!("bertscore-minilm-{}", &m["bertscore_".len()..])
        }
        m => m.replace('_', "-"),
    };
    format!("{stem}.toml")
}

/// `text` as a TOML string, quoted as `thresholds_toml` (the `toml`
/// crate) writes it: how the run report shows a thresholds file's command.
pub fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

/// The TOML file of one metric: two comment lines, then the file's fields
/// serialised by `toml` (every number rounded to 6 decimals).
pub fn thresholds_toml(m: &MetricThresholds, provenance: &Provenance) -> String {
    let (model, scale) = metric_origin(&m.metric);
    let point = |p: &OperatingPoint| PointFile {
        threshold: six(p.threshold),
        precision: six(p.precision),
        recall: six(p.recall),
        f1: six(p.f1),
        threshold_ci: p.threshold_ci.map(|ci| ci.map(six)),
        floor: p.floor,
    };
    let file = ThresholdsFile {
        command: &provenance.command,
        metric: &m.metric,
        model,
        scale,
        ratings: &provenance.ratings,
        label_rule: &provenance.label_rule,
        cutoff: provenance.cutoff,
        search: &provenance.search,
        bootstrap: provenance.bootstrap,
        seed: provenance.seed,
        n: m.n,
        positives: m.positives,
        auc: six(m.auc),
        auc_ci: m.auc_ci.map(|ci| ci.map(six)),
        best_f1: point(&m.best_f1),
        high_precision: m.high_precision.as_ref().map(point),
        high_recall: m.high_recall.as_ref().map(point),
    };
    // Serialising plain strings and numbers cannot fail.
    let body = toml::to_string(&file).unwrap_or_default();
    format!(
        "# Thresholds on {} chosen against human ratings by codecal {}.\n# Reproduce with `command`.\n{body}",
        m.metric,
        env!("CARGO_PKG_VERSION")
    )
}

/// A thresholds file as `thresholds_toml` writes it and
/// `thresholds::file` reads it back.
#[derive(serde::Serialize)]
struct ThresholdsFile<'a> {
    command: &'a str,
    metric: &'a str,
    model: &'a str,
    scale: &'a str,
    ratings: &'a str,
    label_rule: &'a str,
    cutoff: f64,
    search: &'a str,
    bootstrap: usize,
    seed: u64,
    n: usize,
    positives: usize,
    auc: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    auc_ci: Option<[f64; 2]>,
    #[serde(rename = "best-f1")]
    best_f1: PointFile,
    #[serde(rename = "high-precision", skip_serializing_if = "Option::is_none")]
    high_precision: Option<PointFile>,
    #[serde(rename = "high-recall", skip_serializing_if = "Option::is_none")]
    high_recall: Option<PointFile>,
}

#[derive(serde::Serialize)]
struct PointFile {
    threshold: f64,
    precision: f64,
    recall: f64,
    f1: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    threshold_ci: Option<[f64; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    floor: Option<f64>,
}

/// `x` rounded to 6 decimals, as the files have always held their numbers.
fn six(x: f64) -> f64 {
    if x.is_finite() {
        (x * 1e6).round() / 1e6
    } else {
        x
    }
}

/// ROC curves of all metrics in one SVG, with each AUC in the legend.
pub fn roc_svg(metrics: &[MetricThresholds]) -> String {
    const SIZE: f64 = 360.0;
    const LEFT: f64 = 60.0;
    const TOP: f64 = 30.0;
    let colors = [
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    ];
    let height = TOP + SIZE + 60.0 + 16.0 * metrics.len() as f64;
    let plot = super::svg::UnitSquare {
        left: LEFT,
        top: TOP,
        size: SIZE,
    };
    let mut svg = super::svg::Svg::new(LEFT + SIZE + 40.0, height);
    plot.diagonal(&mut svg, "#999");
    plot.axes(&mut svg, "false positive rate", "true positive rate");
    for (i, m) in metrics.iter().enumerate() {
        let color = colors[i % colors.len()];
        let points: Vec<String> = m
            .roc
            .iter()
            .map(|[f, t]| format!("{:.2},{:.2}", plot.x(*f), plot.y(*t)))
            .collect();
        svg.shape(&format!(
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\"/>",
            points.join(" ")
        ));
        svg.text(
            LEFT,
            TOP + SIZE + 54.0 + 16.0 * i as f64,
            &format!("fill=\"{color}\""),
            &format!("{} (AUC {:.3})", m.metric, m.auc),
        );
    }
    svg.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thresholds::file::{OperatingPointName, read_summary, read_threshold};

    fn point(threshold: f64) -> OperatingPoint {
        OperatingPoint {
            threshold,
            precision: 0.5,
            recall: 1.0 / 3.0,
            f1: 0.4,
            threshold_ci: Some([threshold - 0.1, threshold + 0.1]),
            floor: None,
        }
    }

    #[test]
    fn the_toml_file_is_serialised_and_reads_back() {
        let metric = MetricThresholds {
            metric: "sbert_cosine01".into(),
            n: 210,
            positives: 48,
            auc: 0.915_509_4,
            auc_ci: Some([0.870_230_1, 0.949_012]),
            best_f1: point(0.887_591_2),
            high_precision: None,
            high_recall: Some(point(0.814_585)),
            roc: Vec::new(),
            pr: Vec::new(),
        };
        let provenance = Provenance {
            command: "codecal thresholds --ratings \"a b.csv\" --out t".into(),
            ratings: "a b.csv".into(),
            label_rule: "baseline-mean".into(),
            cutoff: 3.0,
            search: "exact".into(),
            bootstrap: 1000,
            seed: 0,
        };
        let text = thresholds_toml(&metric, &provenance);
        assert!(text.starts_with("# Thresholds on sbert_cosine01"), "{text}");
        // Numbers to 6 decimals; an absent point leaves no section.
        assert!(text.contains("auc = 0.915509\n"), "{text}");
        assert!(text.contains("recall = 0.333333\n"), "{text}");
        assert!(!text.contains("[high-precision]"), "{text}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.toml");
        std::fs::write(&path, &text).unwrap();
        let best = read_threshold(&path, OperatingPointName::BestF1).unwrap();
        assert_eq!(
            (best.metric.as_str(), best.threshold),
            ("sbert_cosine01", 0.887591)
        );
        let summary = read_summary(&path).unwrap();
        assert_eq!(summary.auc_ci, Some([0.87023, 0.949012]));
        // A command with quotes survives the round trip.
        assert_eq!(
            summary.command.as_deref(),
            Some(provenance.command.as_str())
        );
        assert!(read_threshold(&path, OperatingPointName::HighPrecision).is_err());
    }
}
