//! An allow-list sanitiser for the SVG figures that `report.html` inlines.
//! The figures are read back from the run directory, where anything could
//! have replaced them; inlined SVG is live markup, so only the elements and
//! attributes codecal's own figures use survive, with every value escaped
//! again. Whatever else is in the file (script, foreignObject, event
//! handlers, links, comments, processing instructions) is dropped, with the
//! content of a dropped element. Inline (not an `<img>`) so the page's
//! script can still find the reliability bars for the drill-down.
//!
//! Not here: drawing the figures (`reliability`, `risk_coverage`, ...).

use super::svg::xml_escape;

/// Elements kept (with their content).
const ELEMENTS: &[&str] = &[
    "svg", "g", "rect", "line", "polyline", "polygon", "path", "circle", "text", "tspan", "title",
];

/// Attributes kept on any kept element, besides `data-*`.
const ATTRIBUTES: &[&str] = &[
    "x",
    "y",
    "x1",
    "y1",
    "x2",
    "y2",
    "cx",
    "cy",
    "r",
    "width",
    "height",
    "viewBox",
    "xmlns",
    "points",
    "d",
    "fill",
    "fill-opacity",
    "stroke",
    "stroke-width",
    "stroke-dasharray",
    "stroke-opacity",
    "opacity",
    "text-anchor",
    "font-size",
    "font-family",
    "font-weight",
    "transform",
    "class",
];

/// The figure with only allowed elements and attributes, re-escaped.
pub fn clean_svg(svg: &str) -> String {
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg;
    // Names of kept elements still open, and whether we are inside a
    // dropped element (its name and depth of same-named nesting).
    let mut dropping: Option<(String, usize)> = None;
    while let Some(start) = rest.find('<') {
        let (text, after) = rest.split_at(start);
        if dropping.is_none() {
            out.push_str(&escape_text(text));
        }
        let Some(end) = tag_end(after) else {
            // An unterminated tag: drop the rest.
            return out;
        };
        let tag = &after[1..end];
        rest = &after[end + 1..];
        if tag.starts_with('!') || tag.starts_with('?') {
            continue;
        }
        let closing = tag.starts_with('/');
        let body = tag.trim_start_matches('/').trim_end_matches('/');
        let self_closing = tag.ends_with('/');
        let name: String = body.chars().take_while(|c| !c.is_whitespace()).collect();
        if let Some((dropped, depth)) = &mut dropping {
            if name == *dropped && !self_closing {
                if closing {
                    *depth -= 1;
                    if *depth == 0 {
                        dropping = None;
                    }
                } else {
                    *depth += 1;
                }
            }
            continue;
        }
        if !ELEMENTS.contains(&name.as_str()) {
            if !closing && !self_closing {
                dropping = Some((name, 1));
            }
            continue;
        }
        if closing {
            out.push_str(&format!("</{name}>"));
            continue;
        }
        out.push('<');
        out.push_str(&name);
        for (key, value) in attributes(&body[name.len()..]) {
            if allowed_attribute(&key, &value) {
                out.push_str(&format!(" {key}=\"{}\"", xml_escape(&value)));
            }
        }
        out.push_str(if self_closing { "/>" } else { ">" });
    }
    if dropping.is_none() {
        out.push_str(&escape_text(rest));
    }
    out
}

/// The index of the `>` that ends the tag opening at `text[0] == '<'`,
/// skipping `>` inside quoted attribute values.
fn tag_end(text: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in text.char_indices().skip(1) {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return Some(i),
            _ => {}
        }
    }
    None
}

/// `key="value"` pairs (either quote), values with the five XML entities
/// decoded; anything malformed is skipped.
fn attributes(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while let Some(eq) = rest.find('=') {
        let key = rest[..eq].trim().to_owned();
        let after = rest[eq + 1..].trim_start();
        let Some(quote) = after.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            break;
        };
        let Some(close) = after[1..].find(quote) else {
            break;
        };
        out.push((key, decode_entities(&after[1..1 + close])));
        rest = after[close + 2..].trim_start();
    }
    out
}

fn allowed_attribute(key: &str, value: &str) -> bool {
    let known = ATTRIBUTES.contains(&key)
        || (key.starts_with("data-")
            && key.len() > 5
            && key[5..].chars().all(|c| c.is_ascii_lowercase() || c == '-'));
    // No value of ours names a URL or a script; `url(#id)` paint is not used.
    let lowered = value.to_ascii_lowercase();
    let harmless = !lowered.contains("javascript:")
        && !lowered.contains("url(")
        && !lowered.contains("expression(");
    known && harmless
}

fn decode_entities(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Text between tags, entities decoded and escaped again.
fn escape_text(text: &str) -> String {
    xml_escape(&decode_entities(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_own_figures_pass_through_unchanged_in_meaning() {
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\" viewBox=\"0 0 10 10\">\n\
                   <g data-panel=\"raw\"><rect x=\"1\" y=\"2\" width=\"3\" height=\"4\" fill=\"#1f77b4\" data-bar=\"0\" data-lo=\"0.1\" data-hi=\"0.2\"><title>bin 0.1–0.2: 3 &amp; 4</title></rect></g>\n\
                   <text x=\"5\" y=\"5\" transform=\"rotate(-90 5 5)\">risk &lt; 1</text></svg>";
        assert_eq!(clean_svg(svg), svg);
    }

    #[test]
    fn scripts_handlers_links_and_foreign_content_are_dropped() {
        let svg = "<?xml version=\"1.0\"?><!-- c --><svg onload=\"alert(1)\" width=\"1\">\
                   <script>window.x = '<rect/>';</script>\
                   <foreignObject><div xmlns=\"http://www.w3.org/1999/xhtml\"><img src=x onerror=alert(2)></div></foreignObject>\
                   <a href=\"javascript:alert(3)\"><text x=\"1\">t</text></a>\
                   <rect x=\"1\" onclick=\"alert(4)\" fill=\"url(javascript:alert(5))\" style=\"x\" y='2'/>\
                   <text x=\"1\">&lt;script&gt;</text></svg>";
        let clean = clean_svg(svg);
        assert_eq!(
            clean,
            "<svg width=\"1\"><rect x=\"1\" y=\"2\"/><text x=\"1\">&lt;script&gt;</text></svg>"
        );
    }

    #[test]
    fn a_quote_or_bracket_in_a_value_cannot_break_out() {
        let clean = clean_svg("<svg><text x='1\"><script>alert(1)</script>'>a</text></svg>");
        assert!(!clean.contains("<script"), "{clean}");
        assert!(clean.contains("x=\"1&quot;&gt;&lt;script&gt;"), "{clean}");
    }
}
