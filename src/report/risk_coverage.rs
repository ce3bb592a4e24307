//! The risk–coverage figure: selective risk (the error rate among accepted
//! items) against coverage (the fraction accepted), raw and rescaled
//! confidence on one plot, with each accept cutoff codecal chose marked
//! against its target. The numbers behind it are `calibrate::selective`'s.

use std::fmt::Write;

use super::svg::{svg_open, unit_ticks};
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
    let x = |coverage: f64| LEFT + coverage * SIZE;
    let y = |risk: f64| TOP + (1.0 - risk) * SIZE;
    let mut svg = svg_open(WIDTH, HEIGHT);
    let _ = write!(
        svg,
        "<text x=\"{}\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">Risk-coverage</text>\n\
         <rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{SIZE}\" height=\"{SIZE}\" fill=\"none\" stroke=\"black\"/>\n",
        x(0.5)
    );
    let mut legend = vec![("raw", "#1f77b4", "")];
    polyline(&mut svg, &report.risk_coverage.raw, "#1f77b4", "", x, y);
    if let Some(rescaled) = &report.risk_coverage.rescaled {
        polyline(&mut svg, rescaled, "#ff7f0e", "6,3", x, y);
        legend.push(("rescaled (out of fold)", "#ff7f0e", "6,3"));
    }
    // Each target's risk α as a faint line, and the chosen cutoff on it.
    for cutoff in &report.cutoffs.accept {
        let alpha = 1.0 - cutoff.target_precision;
        let _ = writeln!(
            svg,
            "<line x1=\"{}\" y1=\"{:.2}\" x2=\"{}\" y2=\"{:.2}\" stroke=\"#bbbbbb\" stroke-dasharray=\"2,3\"/>\n\
             <text x=\"{}\" y=\"{:.2}\" font-size=\"10\" fill=\"#777777\">precision {}</text>",
            x(0.0),
            y(alpha),
            x(1.0),
            y(alpha),
            x(1.0) + 4.0,
            y(alpha) + 3.0,
            cutoff.target_precision
        );
        if let (Some(_), Some(precision)) = (cutoff.cutoff, cutoff.realised_precision) {
            let _ = writeln!(
                svg,
                "<circle cx=\"{:.2}\" cy=\"{:.2}\" r=\"4\" fill=\"#2ca02c\"/>",
                x(cutoff.coverage),
                y(1.0 - precision)
            );
        }
    }
    // The other procedures' cutoffs on the same items, as open squares.
    for (others, (colour, _)) in report.other_procedures.iter().zip(OTHER_COLOURS) {
        for cutoff in &others.accept {
            if let (Some(_), Some(precision)) = (cutoff.cutoff, cutoff.realised_precision) {
                let _ = writeln!(
                    svg,
                    "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"7\" height=\"7\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\"/>",
                    x(cutoff.coverage) - 3.5,
                    y(1.0 - precision) - 3.5
                );
            }
        }
    }
    unit_ticks(&mut svg, x, y);
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">coverage (fraction accepted)</text>\n\
         <text x=\"20\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 20 {})\">risk (error rate among accepted)</text>",
        x(0.5),
        TOP + SIZE + 36.0,
        y(0.5),
        y(0.5)
    );
    for (i, (label, colour, dash)) in legend.iter().enumerate() {
        let row = TOP + SIZE + 56.0 + 16.0 * i as f64;
        let _ = writeln!(
            svg,
            "<line x1=\"{LEFT}\" y1=\"{row}\" x2=\"{}\" y2=\"{row}\" stroke=\"{colour}\" stroke-width=\"2\" stroke-dasharray=\"{dash}\"/>\n\
             <text x=\"{}\" y=\"{}\">{label}</text>",
            LEFT + 24.0,
            LEFT + 30.0,
            row + 4.0
        );
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
    let row = TOP + SIZE + 60.0 + 16.0 * legend.len() as f64;
    let _ = writeln!(
        svg,
        "<text x=\"{LEFT}\" y=\"{row}\" font-size=\"10\">{note} (cutoffs on {} confidences)</text>",
        report.cutoffs_on
    );
    if !others.is_empty() {
        let _ = writeln!(
            svg,
            "<text x=\"{LEFT}\" y=\"{}\" font-size=\"10\">{}</text>",
            row + 14.0,
            others.join("; ")
        );
    }
    svg.push_str("</svg>\n");
    svg
}

fn polyline(
    svg: &mut String,
    curve: &[CurvePoint],
    colour: &str,
    dash: &str,
    x: impl Fn(f64) -> f64,
    y: impl Fn(f64) -> f64,
) {
    let points: Vec<String> = curve
        .iter()
        .map(|p| format!("{:.2},{:.2}", x(p.coverage), y(p.risk)))
        .collect();
    let _ = writeln!(
        svg,
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" stroke-dasharray=\"{dash}\"/>",
        points.join(" ")
    );
}
