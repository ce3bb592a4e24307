//! The reliability diagram in the layout of the summarization seed's Fig. 4
//! and 5: raw and rescaled side by side; in each, bars of accuracy per
//! confidence bin against the diagonal, under a histogram of confidences.
//! The SVG is the one drawing; the PNG is that SVG rendered by resvg.

use super::svg::{Svg, UnitSquare};
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
    let mut svg = Svg::new(PANEL_WIDTH * panels.len() as f64, HEIGHT);
    for (i, (name, title, bins, ece)) in panels.iter().enumerate() {
        svg.shape(&format!("<g data-panel=\"{name}\">"));
        let plot = UnitSquare {
            left: i as f64 * PANEL_WIDTH + PLOT_LEFT,
            top: PLOT_TOP,
            size: PLOT_SIZE,
        };
        draw_panel(&mut svg, plot, title, bins, *ece);
        svg.shape("</g>");
    }
    svg.finish()
}

fn draw_panel(svg: &mut Svg, plot: UnitSquare, title: &str, bins: &[Bin], ece: f64) {
    let (x, y) = (|p: f64| plot.x(p), |a: f64| plot.y(a));
    plot.title(svg, title);
    // Histogram of confidences over the same bins.
    let most = bins.iter().map(|b| b.count).fold(0.0, f64::max).max(1.0);
    for b in bins {
        let h = b.count / most * HIST_HEIGHT;
        svg.shape(&format!(
            "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{h:.2}\" fill=\"#9e9e9e\" stroke=\"white\"/>",
            x(b.lo),
            HIST_TOP + HIST_HEIGHT - h,
            bar_width(b)
        ));
    }
    svg.text(
        x(0.0) - 6.0,
        HIST_TOP + HIST_HEIGHT / 2.0,
        "text-anchor=\"end\"",
        "count",
    );
    svg.text(
        x(0.0) - 6.0,
        HIST_TOP + 10.0,
        "text-anchor=\"end\" font-size=\"10\"",
        &most.to_string(),
    );
    // Accuracy bars, the gap to each bin's mean confidence, and the diagonal.
    for b in bins {
        svg.shape(&format!(
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
        ));
    }
    // Clopper–Pearson 95% intervals on each bar.
    for b in bins {
        if let Some([low, high]) = b.accuracy_interval {
            let centre = x(b.lo) + bar_width(b) / 2.0;
            svg.shape(&format!(
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
            ));
        }
    }
    plot.diagonal(svg, "black");
    plot.axes(svg, "confidence", "accuracy");
    svg.text(x(0.03), PLOT_TOP + 18.0, "", &format!("ECE = {ece:.4}"));
    // Two short lines: one line of legend ran past the frame's right edge.
    for (line, legend) in [
        "red: mean confidence in bin",
        "whiskers: 95% Clopper-Pearson",
    ]
    .into_iter()
    .enumerate()
    {
        svg.text(
            x(0.03),
            PLOT_TOP + 32.0 + 12.0 * line as f64,
            "font-size=\"10\" fill=\"#d62728\"",
            legend,
        );
    }
    // One transparent column per bar, on top, over histogram and plot: what
    // report.html's drill-down listens to (a bar of accuracy 0 has no height).
    for (k, b) in bins.iter().enumerate() {
        svg.shape(&format!(
            "<rect data-bar=\"{k}\" data-lo=\"{}\" data-hi=\"{}\" x=\"{:.2}\" y=\"{HIST_TOP}\" width=\"{:.2}\" \
             height=\"{:.2}\" fill=\"#ff9800\" fill-opacity=\"0\"><title>{} items, confidence {:.3}-{:.3}, accuracy {:.3}</title></rect>",
            b.lo,
            b.hi,
            x(b.lo),
            bar_width(b),
            plot.bottom() - HIST_TOP,
            b.count,
            b.lo,
            b.hi,
            b.accuracy
        ));
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
