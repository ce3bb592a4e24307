//! The frame every figure of `report` shares: the SVG document's opening
//! (size, font, white background), the unit-square tick labels, and the one
//! XML escape for text and attribute values. What is drawn is each figure's.

use std::fmt::Write as _;

/// An SVG document's opening: size, font and a white background. Every
/// figure starts this way; the caller appends the drawing and `</svg>`.
pub(super) fn svg_open(width: f64, height: f64) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    )
}

/// Tick labels 0.0, 0.2, ..., 1.0 under the x axis and left of the y axis of a
/// unit square plotted by `x` and `y`.
pub(super) fn unit_ticks(svg: &mut String, x: impl Fn(f64) -> f64, y: impl Fn(f64) -> f64) {
    for tick in 0..=5 {
        let t = tick as f64 / 5.0;
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{t:.1}</text>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{t:.1}</text>",
            x(t),
            y(0.0) + 16.0,
            x(0.0) - 6.0,
            y(t) + 4.0
        );
    }
}

/// Text or an attribute value as XML: `&`, `<`, `>` and `"` escaped.
pub(super) fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
