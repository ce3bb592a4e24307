//! The risk–coverage figure: selective risk (the error rate among accepted
//! items) against coverage (the fraction accepted), raw and rescaled
//! confidence on one plot, with each accept cutoff codecal chose marked
//! against its target. The numbers behind it are `calibrate::selective`'s.

use super::svg::{Svg, UnitSquare};
use crate::calibrate::CalibrationReport;
use crate::calibrate::selective::CurvePoint;

const WIDTH: f64 = 480.0;
const HEIGHT: f64 = 484.0;
const LEFT: f64 = 70.0;
const TOP: f64 = 50.0;
const SIZE: f64 = 300.0;
/// The squares of the procedures not chosen.
const OTHER_COLOURS: [(&str, &str); 2] = [("#9467bd", "purple"), ("#8c564b", "brown")];

/// The figure as an SVG document.
pub fn risk_coverage_svg(report: &CalibrationReport) -> String {
    let plot = UnitSquare {
        left: LEFT,
        top: TOP,
        size: SIZE,
    };
    let (x, y) = (|c: f64| plot.x(c), |r: f64| plot.y(r));
    let mut svg = Svg::new(WIDTH, HEIGHT);
    plot.title(&mut svg, "Risk-coverage");
    let mut legend = vec![("raw", "#1f77b4", "")];
    polyline(&mut svg, &report.risk_coverage.raw, "#1f77b4", "", plot);
    if let Some(rescaled) = &report.risk_coverage.rescaled {
        polyline(&mut svg, rescaled, "#ff7f0e", "6,3", plot);
        legend.push(("rescaled (out of fold)", "#ff7f0e", "6,3"));
    }
    // Each target's risk α as a faint line, and the chosen cutoff on it.
    for cutoff in &report.cutoffs.accept {
        let alpha = 1.0 - cutoff.target_precision;
        svg.shape(&format!(
            "<line x1=\"{}\" y1=\"{:.2}\" x2=\"{}\" y2=\"{:.2}\" stroke=\"#bbbbbb\" stroke-dasharray=\"2,3\"/>",
            x(0.0),
            y(alpha),
            x(1.0),
            y(alpha)
        ));
        svg.text(
            x(1.0) + 4.0,
            y(alpha) + 3.0,
            "font-size=\"10\" fill=\"#777777\"",
            &format!("precision {}", cutoff.target_precision),
        );
        if let (Some(_), Some(precision)) = (cutoff.cutoff, cutoff.realised_precision) {
            svg.shape(&format!(
                "<circle cx=\"{:.2}\" cy=\"{:.2}\" r=\"4\" fill=\"#2ca02c\"/>",
                x(cutoff.coverage),
                y(1.0 - precision)
            ));
        }
    }
    // The other procedures' cutoffs on the same items, as open squares.
    for (others, (colour, _)) in report.other_procedures.iter().zip(OTHER_COLOURS) {
        for cutoff in &others.accept {
            if let (Some(_), Some(precision)) = (cutoff.cutoff, cutoff.realised_precision) {
                svg.shape(&format!(
                    "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"7\" height=\"7\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\"/>",
                    x(cutoff.coverage) - 3.5,
                    y(1.0 - precision) - 3.5
                ));
            }
        }
    }
    plot.axes(
        &mut svg,
        "coverage (fraction accepted)",
        "risk (error rate among accepted)",
    );
    for (i, (label, colour, dash)) in legend.iter().enumerate() {
        let row = plot.bottom() + 56.0 + 16.0 * i as f64;
        svg.shape(&format!(
            "<line x1=\"{LEFT}\" y1=\"{row}\" x2=\"{}\" y2=\"{row}\" stroke=\"{colour}\" stroke-width=\"2\" stroke-dasharray=\"{dash}\"/>",
            LEFT + 24.0
        ));
        svg.text(LEFT + 30.0, row + 4.0, "", label);
    }
    let marks = report.cutoffs.accept.iter().any(|c| c.cutoff.is_some());
    let note = if marks {
        format!(
            "green: accept cutoffs ({})",
            report.cutoffs.procedure.as_str()
        )
    } else {
        "no accept cutoff meets any target".to_owned()
    };
    let others: Vec<String> = report
        .other_procedures
        .iter()
        .zip(OTHER_COLOURS)
        .map(|(o, (_, name))| format!("{name} squares: {}", o.procedure.as_str()))
        .collect();
    let row = plot.bottom() + 60.0 + 16.0 * legend.len() as f64;
    svg.text(
        LEFT,
        row,
        "font-size=\"10\"",
        &format!("{note} (cutoffs on {} confidences)", report.cutoffs_on),
    );
    if !others.is_empty() {
        svg.text(LEFT, row + 14.0, "font-size=\"10\"", &others.join("; "));
    }
    svg.finish()
}

fn polyline(svg: &mut Svg, curve: &[CurvePoint], colour: &str, dash: &str, plot: UnitSquare) {
    let points: Vec<String> = curve
        .iter()
        .map(|p| format!("{:.2},{:.2}", plot.x(p.coverage), plot.y(p.risk)))
        .collect();
    svg.shape(&format!(
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" stroke-dasharray=\"{dash}\"/>",
        points.join(" ")
    ));
}
