//! The smooth reliability diagram (Błasiok and Nakkiran 2024): the
//! kernel-smoothed success rate against confidence, raw and rescaled side by
//! side, each over a band whose height follows the density of confidences,
//! so that the curve is read where there are items. The curve is relplot's
//! without its unseeded bagging (`calibrate::smooth::smooth_curve`).

use std::fmt::Write;

use super::svg::{svg_open, unit_ticks};
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
    let width = PANEL_WIDTH * panels.len() as f64;
    let mut svg = svg_open(width, HEIGHT);
    for (i, (title, curve, value)) in panels.iter().enumerate() {
        panel(&mut svg, i as f64 * PANEL_WIDTH, title, curve, *value);
    }
    svg.push_str("</svg>\n");
    Some(svg)
}

fn panel(svg: &mut String, left: f64, title: &str, curve: &[SmoothPoint], value: f64) {
    let x = |p: f64| left + LEFT + p * SIZE;
    let y = |a: f64| TOP + (1.0 - a) * SIZE;
    let densest = curve
        .iter()
        .map(|p| p.density)
        .fold(0.0, f64::max)
        .max(1e-12);
    // The density band along the bottom, then the curve and the diagonal.
    let mut band = format!("{:.2},{:.2}", x(0.0), y(0.0));
    for p in curve {
        let _ = write!(
            band,
            " {:.2},{:.2}",
            x(p.confidence),
            y(0.0) - p.density / densest * BAND
        );
    }
    let _ = write!(band, " {:.2},{:.2}", x(1.0), y(0.0));
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
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">{title}</text>\n\
         <polygon points=\"{band}\" fill=\"#9e9e9e\" fill-opacity=\"0.5\"/>\n\
         <line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\" stroke-dasharray=\"5,4\"/>\n\
         <polyline points=\"{}\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2.5\"/>\n\
         <rect x=\"{}\" y=\"{TOP}\" width=\"{SIZE}\" height=\"{SIZE}\" fill=\"none\" stroke=\"black\"/>\n\
         <text x=\"{}\" y=\"{}\">smooth ECE = {value:.4}</text>\n\
         <text x=\"{}\" y=\"{}\" font-size=\"10\">grey: density of confidences</text>",
        x(0.5),
        x(0.0),
        y(0.0),
        x(1.0),
        y(1.0),
        line.join(" "),
        x(0.0),
        x(0.03),
        TOP + 18.0,
        x(0.03),
        TOP + 34.0
    );
    unit_ticks(svg, x, y);
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">confidence</text>\n\
         <text x=\"{}\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 {} {})\">smoothed accuracy</text>",
        x(0.5),
        TOP + SIZE + 36.0,
        left + 20.0,
        y(0.5),
        left + 20.0,
        y(0.5)
    );
}
