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

/// `text` as a TOML basic string: how a thresholds file holds its strings,
/// and how the run report quotes the file's command.
pub fn toml_string(text: &str) -> String {
    let escaped = toml::Value::String(text.to_owned()).to_string();
    // The toml crate picks a literal string for text with quotes; a basic
    // string keeps the files' one style.
    if escaped.starts_with('"') {
        escaped
    } else {
        format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// The TOML file of one metric.
pub fn thresholds_toml(m: &MetricThresholds, provenance: &Provenance) -> String {
    let quote = toml_string;
    let array = |ci: Option<[f64; 2]>| ci.map(|[lo, hi]| format!("[{lo:.6}, {hi:.6}]"));
    let (model, scale) = metric_origin(&m.metric);
    let mut out = format!(
        "# Thresholds on {} chosen against human ratings by codecal {}.\n# Reproduce with `command`.\n",
        m.metric,
        env!("CARGO_PKG_VERSION")
    );
    let mut line = |key: &str, value: String| {
        let _ = writeln!(out, "{key} = {value}");
    };
    line("command", quote(&provenance.command));
    line("metric", quote(&m.metric));
    line("model", quote(model));
    line("scale", quote(scale));
    line("ratings", quote(&provenance.ratings));
    line("label_rule", quote(&provenance.label_rule));
    line("cutoff", format!("{:?}", provenance.cutoff));
    line("search", quote(&provenance.search));
    line("bootstrap", provenance.bootstrap.to_string());
    line("seed", provenance.seed.to_string());
    line("n", m.n.to_string());
    line("positives", m.positives.to_string());
    line("auc", format!("{:.6}", m.auc));
    if let Some(ci) = array(m.auc_ci) {
        line("auc_ci", ci);
    }
    let points = [
        ("best-f1", Some(&m.best_f1)),
        ("high-precision", m.high_precision.as_ref()),
        ("high-recall", m.high_recall.as_ref()),
    ];
    for (name, point) in points {
        let Some(p) = point else { continue };
        let _ = write!(
            out,
            "\n[{name}]\nthreshold = {:.6}\nprecision = {:.6}\nrecall = {:.6}\nf1 = {:.6}\n",
            p.threshold, p.precision, p.recall, p.f1
        );
        if let Some(ci) = array(p.threshold_ci) {
            let _ = writeln!(out, "threshold_ci = {ci}");
        }
        if let Some(floor) = p.floor {
            let _ = writeln!(out, "floor = {floor:?}");
        }
    }
    out
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
    let width = LEFT + SIZE + 40.0;
    let x = |v: f64| LEFT + v * SIZE;
    let y = |v: f64| TOP + (1.0 - v) * SIZE;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" \
         font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{SIZE}\" height=\"{SIZE}\" fill=\"none\" stroke=\"black\"/>\n\
         <line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#999\" stroke-dasharray=\"5,4\"/>\n",
        x(0.0),
        y(0.0),
        x(1.0),
        y(1.0)
    );
    super::svg::unit_ticks(&mut svg, x, y);
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">false positive rate</text>\
         <text x=\"16\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {})\">true positive rate</text>",
        x(0.5),
        TOP + SIZE + 34.0,
        y(0.5),
        y(0.5)
    );
    for (i, m) in metrics.iter().enumerate() {
        let color = colors[i % colors.len()];
        let points: Vec<String> = m
            .roc
            .iter()
            .map(|[f, t]| format!("{:.2},{:.2}", x(*f), y(*t)))
            .collect();
        let _ = writeln!(
            svg,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\"/>\n\
             <text x=\"{}\" y=\"{:.1}\" fill=\"{color}\">{} (AUC {:.3})</text>",
            points.join(" "),
            LEFT,
            TOP + SIZE + 54.0 + 16.0 * i as f64,
            m.metric,
            m.auc
        );
    }
    svg.push_str("</svg>\n");
    svg
}
