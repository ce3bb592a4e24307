//! The smooth reliability diagram (Błasiok and Nakkiran 2024): the
//! kernel-smoothed success rate against confidence, raw and rescaled side by
//! side, each over a band whose height follows the density of confidences,
//! so that the curve is read where there are items. The curve is relplot's
//! without its unseeded bagging (`calibrate::smooth::smooth_curve`).

use super::svg::{Svg, UnitSquare};
use crate::calibrate::CalibrationReport;
use crate::calibrate::smooth::SmoothPoint;

const PANEL_WIDTH: f64 = 420.0;
const LEFT: f64 = 60.0;
const TOP: f64 = 50.0;
const SIZE: f64 = 300.0;
const HEIGHT: f64 = 410.0;
/// The density band's height at the densest confidence.
const BAND: f64 = 60.0;

/// The figure as an SVG document; `None` when smooth ECE was not computed.
pub fn smooth_reliability_svg(report: &CalibrationReport) -> Option<String> {
    let curves = &report.smooth_reliability;
    if curves.raw.is_empty() {
        return None;
    }
    let mut panels = vec![(
        "Raw confidence (smoothed)".to_owned(),
        &curves.raw,
        report.raw.metrics.smooth_ece,
    )];
    if let (Some(curve), Some(rescaled)) = (&curves.rescaled, &report.rescaled)
        && !curve.is_empty()
    {
        panels.push((
            "Rescaled (smoothed)".to_owned(),
            curve,
            rescaled.metrics.smooth_ece,
        ));
    }
    let mut svg = Svg::new(PANEL_WIDTH * panels.len() as f64, HEIGHT);
    for (i, (title, curve, value)) in panels.iter().enumerate() {
        let plot = UnitSquare {
            left: i as f64 * PANEL_WIDTH + LEFT,
            top: TOP,
            size: SIZE,
        };
        panel(&mut svg, plot, title, curve, *value);
    }
    Some(svg.finish())
}

fn panel(svg: &mut Svg, plot: UnitSquare, title: &str, curve: &[SmoothPoint], value: f64) {
    let (x, y) = (|p: f64| plot.x(p), |a: f64| plot.y(a));
    let densest = curve
        .iter()
        .map(|p| p.density)
        .fold(0.0, f64::max)
        .max(1e-12);
    // The density band along the bottom, then the curve and the diagonal.
    let mut band = vec![format!("{:.2},{:.2}", x(0.0), y(0.0))];
    band.extend(curve.iter().map(|p| {
        format!(
            "{:.2},{:.2}",
            x(p.confidence),
            y(0.0) - p.density / densest * BAND
        )
    }));
    band.push(format!("{:.2},{:.2}", x(1.0), y(0.0)));
    let line: Vec<String> = curve
        .iter()
        .map(|p| {
            format!(
                "{:.2},{:.2}",
                x(p.confidence),
                y(p.accuracy.clamp(0.0, 1.0))
            )
        })
        .collect();
    plot.title(svg, title);
    svg.shape(&format!(
        "<polygon points=\"{}\" fill=\"#9e9e9e\" fill-opacity=\"0.5\"/>",
        band.join(" ")
    ));
    plot.diagonal(svg, "black");
    svg.shape(&format!(
        "<polyline points=\"{}\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2.5\"/>",
        line.join(" ")
    ));
    plot.axes(svg, "confidence", "smoothed accuracy");
    svg.text(x(0.03), TOP + 18.0, "", &format!("smooth ECE = {value:.4}"));
    svg.text(
        x(0.03),
        TOP + 34.0,
        "font-size=\"10\"",
        "grey: density of confidences",
    );
}
