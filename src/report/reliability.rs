//! The reliability diagram in the layout of the summarization seed's Fig. 4
//! and 5: raw and rescaled side by side; in each, bars of accuracy per
//! confidence bin against the diagonal, under a histogram of confidences.
//! The SVG is the one drawing; the PNG is that SVG rendered by resvg.

use std::fmt::Write;

use super::svg::{svg_open, unit_ticks, xml_escape};
use crate::calibrate::{Bin, CalibrationReport};

const PANEL_WIDTH: f64 = 420.0;
const PLOT_LEFT: f64 = 60.0;
const PLOT_SIZE: f64 = 300.0;
const HIST_TOP: f64 = 50.0;
const HIST_HEIGHT: f64 = 70.0;
const PLOT_TOP: f64 = 140.0;
const HEIGHT: f64 = 500.0;

/// The diagram as an SVG document.
pub fn reliability_svg(report: &CalibrationReport) -> String {
    let mut panels = vec![(
        "raw",
        "Raw confidence".to_owned(),
        &report.reliability.raw,
        report.raw.metrics.ece,
    )];
    if let (Some(bins), Some(rescaled)) = (&report.reliability.rescaled, &report.rescaled) {
        panels.push((
            "rescaled",
            format!(
                "Rescaled: {}, CV {}",
                super::method_name(report.method),
                super::cv_name(report.cv)
            ),
            bins,
            rescaled.metrics.ece,
        ));
    }
    let width = PANEL_WIDTH * panels.len() as f64;
    let mut svg = svg_open(width, HEIGHT);
    for (i, (name, title, bins, ece)) in panels.iter().enumerate() {
        let _ = writeln!(svg, "<g data-panel=\"{name}\">");
        draw_panel(&mut svg, i as f64 * PANEL_WIDTH, title, bins, *ece);
        svg.push_str("</g>\n");
    }
    svg.push_str("</svg>\n");
    svg
}

fn draw_panel(svg: &mut String, left: f64, title: &str, bins: &[Bin], ece: f64) {
    let x = |p: f64| left + PLOT_LEFT + p * PLOT_SIZE;
    let y = |a: f64| PLOT_TOP + (1.0 - a) * PLOT_SIZE;
    let bottom = PLOT_TOP + PLOT_SIZE;
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">{}</text>",
        x(0.5),
        xml_escape(title)
    );
    // Histogram of confidences over the same bins.
    let most = bins.iter().map(|b| b.count).fold(0.0, f64::max).max(1.0);
    for b in bins {
        let h = b.count / most * HIST_HEIGHT;
        let _ = writeln!(
            svg,
            "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{h:.2}\" fill=\"#9e9e9e\" stroke=\"white\"/>",
            x(b.lo),
            HIST_TOP + HIST_HEIGHT - h,
            bar_width(b)
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">count</text>\n\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"10\">{}</text>",
        x(0.0) - 6.0,
        HIST_TOP + HIST_HEIGHT / 2.0,
        x(0.0) - 6.0,
        HIST_TOP + 10.0,
        most
    );
    // Accuracy bars, the gap to each bin's mean confidence, and the diagonal.
    for b in bins {
        let _ = writeln!(
            svg,
            "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\" fill=\"#1f77b4\" stroke=\"white\"/>\n\
             <line x1=\"{:.2}\" y1=\"{:.2}\" x2=\"{:.2}\" y2=\"{:.2}\" stroke=\"#d62728\" stroke-width=\"2\"/>",
            x(b.lo),
            y(b.accuracy),
            bar_width(b),
            b.accuracy * PLOT_SIZE,
            x(b.lo),
            y(b.mean_confidence),
            x(b.lo) + bar_width(b),
            y(b.mean_confidence)
        );
    }
    // Clopper–Pearson 95% intervals on each bar.
    for b in bins {
        if let Some([low, high]) = b.accuracy_interval {
            let centre = x(b.lo) + bar_width(b) / 2.0;
            let _ = writeln!(
                svg,
                "<line x1=\"{centre:.2}\" y1=\"{:.2}\" x2=\"{centre:.2}\" y2=\"{:.2}\" stroke=\"black\" stroke-width=\"1\"/>\n\
                 <line x1=\"{:.2}\" y1=\"{:.2}\" x2=\"{:.2}\" y2=\"{:.2}\" stroke=\"black\"/>\n\
                 <line x1=\"{:.2}\" y1=\"{:.2}\" x2=\"{:.2}\" y2=\"{:.2}\" stroke=\"black\"/>",
                y(low),
                y(high),
                centre - 3.0,
                y(low),
                centre + 3.0,
                y(low),
                centre - 3.0,
                y(high),
                centre + 3.0,
                y(high)
            );
        }
    }
    let _ = writeln!(
        svg,
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\" stroke-dasharray=\"5,4\"/>\n\
         <rect x=\"{}\" y=\"{PLOT_TOP}\" width=\"{PLOT_SIZE}\" height=\"{PLOT_SIZE}\" fill=\"none\" stroke=\"black\"/>",
        x(0.0),
        y(0.0),
        x(1.0),
        y(1.0),
        x(0.0)
    );
    unit_ticks(svg, x, y);
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">confidence</text>\n\
         <text x=\"{}\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 {} {})\">accuracy</text>\n\
         <text x=\"{}\" y=\"{}\">ECE = {ece:.4}</text>\n\
         <text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#d62728\">red: mean confidence in bin; whiskers: 95% Clopper-Pearson</text>",
        x(0.5),
        bottom + 36.0,
        left + 20.0,
        y(0.5),
        left + 20.0,
        y(0.5),
        x(0.03),
        PLOT_TOP + 18.0,
        x(0.03),
        PLOT_TOP + 34.0
    );
    // One transparent column per bar, on top, over histogram and plot: what
    // report.html's drill-down listens to (a bar of accuracy 0 has no height).
    for (k, b) in bins.iter().enumerate() {
        let _ = writeln!(
            svg,
            "<rect data-bar=\"{k}\" data-lo=\"{}\" data-hi=\"{}\" x=\"{:.2}\" y=\"{HIST_TOP}\" width=\"{:.2}\" \
             height=\"{:.2}\" fill=\"#ff9800\" fill-opacity=\"0\"><title>{} items, confidence {:.3}-{:.3}, accuracy {:.3}</title></rect>",
            b.lo,
            b.hi,
            x(b.lo),
            bar_width(b),
            bottom - HIST_TOP,
            b.count,
            b.lo,
            b.hi,
            b.accuracy
        );
    }
}

fn bar_width(bin: &Bin) -> f64 {
    ((bin.hi - bin.lo) * PLOT_SIZE).max(2.0)
}

/// The SVG could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum PngError {
    #[error("cannot render the reliability diagram: {0}")]
    Svg(String),
}

/// Renders an SVG document to PNG bytes. Text needs a system font; without one the
/// PNG has no text and a warning says so.
pub fn render_png(svg: &str) -> Result<(Vec<u8>, Vec<String>), PngError> {
    use resvg::{tiny_skia, usvg};
    let mut options = usvg::Options::default();
    options.fontdb_mut().load_system_fonts();
    let mut warnings = Vec::new();
    if options.fontdb.is_empty() {
        warnings.push("no system fonts found: the PNG has no text (the SVG does)".to_owned());
    }
    let tree = usvg::Tree::from_str(svg, &options).map_err(|e| PngError::Svg(e.to_string()))?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| PngError::Svg("empty image".to_owned()))?;
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    let png = pixmap
        .encode_png()
        .map_err(|e| PngError::Svg(e.to_string()))?;
    Ok((png, warnings))
}
