//! The frame every figure of `report` shares: the SVG document (`Svg`: its
//! opening, its text, always escaped, and its close), the unit-square plot
//! (`UnitSquare`: the mapping of [0, 1]² to pixels, its box, tick labels and
//! axis titles), and the one XML escape. What is drawn inside a plot is each
//! figure's own; `tests/tidy.rs` keeps `<svg` and `<text` in this file, so no
//! figure writes text that skips the escape.
//!
//! The figures stay hand-drawn rather than plotters: DESIGN.md ("Figures")
//! gives the measured reason.

use std::fmt::Write as _;

/// An SVG document being drawn. Text goes in through `text`, which escapes
/// it; shapes, which carry only numbers and colours, through `shape`.
pub(super) struct Svg {
    document: String,
}

impl Svg {
    /// A document of `width` × `height` pixels: its font and a white background.
    pub(super) fn new(width: f64, height: f64) -> Svg {
        Svg {
            document: format!(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
                 viewBox=\"0 0 {width} {height}\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n\
                 <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
            ),
        }
    }

    /// `content` as a text element at (`x`, `y`); `style` is further
    /// attributes (anchor, size, fill), written by the figure, never data.
    pub(super) fn text(&mut self, x: f64, y: f64, style: &str, content: &str) {
        let space = if style.is_empty() { "" } else { " " };
        let _ = writeln!(
            self.document,
            "<text x=\"{}\" y=\"{}\"{space}{style}>{}</text>",
            Coordinate(x),
            Coordinate(y),
            xml_escape(content)
        );
    }

    /// A text element turned a quarter left about its anchor: a y-axis title.
    pub(super) fn vertical_text(&mut self, x: f64, y: f64, content: &str) {
        let (x, y) = (Coordinate(x), Coordinate(y));
        let _ = writeln!(
            self.document,
            "<text x=\"{x}\" y=\"{y}\" text-anchor=\"middle\" transform=\"rotate(-90 {x} {y})\">{}</text>",
            xml_escape(content)
        );
    }

    /// A shape (rect, line, polyline, circle, group tag) as the figure wrote
    /// it; it must hold no text from data.
    pub(super) fn shape(&mut self, element: &str) {
        self.document.push_str(element);
        self.document.push('\n');
    }

    /// The finished document.
    pub(super) fn finish(mut self) -> String {
        self.document.push_str("</svg>\n");
        self.document
    }
}

/// A coordinate as the figures print it: at most two decimals, no trailing
/// zeros, so `60` stays `60` and `60.125` becomes `60.13`.
struct Coordinate(f64);

impl std::fmt::Display for Coordinate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rounded = (self.0 * 100.0).round() / 100.0;
        write!(f, "{rounded}")
    }
}

/// The unit square [0, 1]² drawn `size` pixels wide with its top-left corner
/// at (`left`, `top`).
#[derive(Clone, Copy, Debug)]
pub(super) struct UnitSquare {
    pub(super) left: f64,
    pub(super) top: f64,
    pub(super) size: f64,
}

impl UnitSquare {
    pub(super) fn x(self, value: f64) -> f64 {
        self.left + value * self.size
    }

    pub(super) fn y(self, value: f64) -> f64 {
        self.top + (1.0 - value) * self.size
    }

    /// The plot's bottom edge in pixels.
    pub(super) fn bottom(self) -> f64 {
        self.top + self.size
    }

    /// A title centred over the plot, in the band above it.
    pub(super) fn title(self, svg: &mut Svg, title: &str) {
        svg.text(
            self.x(0.5),
            28.0,
            "text-anchor=\"middle\" font-size=\"15\"",
            title,
        );
    }

    /// The dashed diagonal y = x in `colour`.
    pub(super) fn diagonal(self, svg: &mut Svg, colour: &str) {
        svg.shape(&format!(
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{colour}\" stroke-dasharray=\"5,4\"/>",
            self.x(0.0),
            self.y(0.0),
            self.x(1.0),
            self.y(1.0)
        ));
    }

    /// The box, tick labels 0.0, 0.2, …, 1.0 on both axes, and the two axis
    /// titles: every unit-square figure's axes.
    pub(super) fn axes(self, svg: &mut Svg, x_title: &str, y_title: &str) {
        svg.shape(&format!(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>",
            self.left, self.top, self.size, self.size
        ));
        for tick in 0..=5 {
            let t = tick as f64 / 5.0;
            let label = format!("{t:.1}");
            svg.text(
                self.x(t),
                self.bottom() + 16.0,
                "text-anchor=\"middle\"",
                &label,
            );
            svg.text(
                self.left - 6.0,
                self.y(t) + 4.0,
                "text-anchor=\"end\"",
                &label,
            );
        }
        svg.text(
            self.x(0.5),
            self.bottom() + 36.0,
            "text-anchor=\"middle\"",
            x_title,
        );
        svg.vertical_text(self.left - 40.0, self.y(0.5), y_title);
    }
}

/// Text or an attribute value as XML: `&`, `<`, `>`, `"` and `'` escaped, so
/// the result is safe between tags and inside either kind of quotes.
pub(super) fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_the_document_is_closed() {
        let mut svg = Svg::new(10.0, 20.0);
        svg.text(1.0, 2.5, "", "a<b & 'c' \"d\"");
        svg.vertical_text(3.0, 4.0, "</text><script>");
        let document = svg.finish();
        assert!(document.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\""));
        assert!(
            document
                .contains("<text x=\"1\" y=\"2.5\">a&lt;b &amp; &#39;c&#39; &quot;d&quot;</text>")
        );
        assert!(document.contains("&lt;/text&gt;&lt;script&gt;"));
        assert!(!document.contains("<script"));
        assert!(document.ends_with("</svg>\n"));
    }

    #[test]
    fn the_unit_square_maps_corners_and_draws_six_ticks_per_axis() {
        let square = UnitSquare {
            left: 60.0,
            top: 50.0,
            size: 300.0,
        };
        assert_eq!((square.x(0.0), square.y(0.0)), (60.0, 350.0));
        assert_eq!((square.x(1.0), square.y(1.0)), (360.0, 50.0));
        let mut svg = Svg::new(400.0, 400.0);
        square.axes(&mut svg, "confidence", "accuracy");
        let document = svg.finish();
        assert_eq!(document.matches(">0.4</text>").count(), 2);
        assert_eq!(document.matches("<text").count(), 14);
        assert!(document.contains("rotate(-90 20 200)\">accuracy</text>"));
    }

    #[test]
    fn coordinates_keep_two_decimals_at_most() {
        assert_eq!(Coordinate(60.0).to_string(), "60");
        assert_eq!(Coordinate(60.126).to_string(), "60.13");
        assert_eq!(Coordinate(-3.5).to_string(), "-3.5");
    }
}
