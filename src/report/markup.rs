//! HTML escaped by construction: the one builder the run's page is written
//! with. Markup enters it only as `'static` strings from the source (which
//! carry no run data), as HTML another builder made, or as markup from a
//! renderer of `report` that escapes what it is given (the cleaned SVG
//! figures, the page's JSON data); every other string is text and is
//! escaped on the way in. Not a template language: the page's layout is
//! `html.rs`'s.

use std::fmt::Display;

/// HTML being written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Html(String);

impl Html {
    pub fn new() -> Html {
        Html(String::new())
    }

    /// Markup written in the source.
    pub fn tag(&mut self, markup: &'static str) -> &mut Html {
        self.0.push_str(markup);
        self
    }

    /// Text, escaped: safe between tags and inside a quoted attribute.
    pub fn text(&mut self, text: &str) -> &mut Html {
        escape_into(&mut self.0, text);
        self
    }

    /// A value's `Display` text (a number, an index), escaped.
    pub fn show(&mut self, value: impl Display) -> &mut Html {
        self.text(&value.to_string())
    }

    /// HTML another builder made.
    pub fn html(&mut self, html: &Html) -> &mut Html {
        self.0.push_str(&html.0);
        self
    }

    /// Markup from one of `report`'s renderers that escape what they take
    /// in (`svg_clean::clean_svg`, the page's script data); nothing outside
    /// `report` can make it.
    pub(super) fn trusted(markup: String) -> Html {
        Html(markup)
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// `text` with `&`, `<`, `>`, `"` and `'` written as entities.
fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_markup_is_kept() {
        let mut html = Html::new();
        html.tag("<td title=\"")
            .text("a\"b")
            .tag("\">")
            .text("</td><script>alert('x')</script> & more")
            .show(0.5)
            .tag("</td>");
        assert_eq!(
            html.clone().into_string(),
            "<td title=\"a&quot;b\">&lt;/td&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; more0.5</td>"
        );
    }
}
