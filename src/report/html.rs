//! `report.html`: one self-contained page per run, rendered from a
//! [`RunReport`]. CSS and JS are inline and the figures are inline SVG, so
//! the page opens offline and asks the network for nothing. Without JS it
//! shows the header, every table, each cell's figures and its two lists
//! ("most confident and wrong", "least confident and right") and every
//! item; the script adds sorting, filtering, highlighting and the
//! drill-down from a reliability bar to its items.
//!
//! Not for: choosing what a run reports ([`RunReport`] is that) or drawing
//! the figures (the calibration directory's SVGs are inlined as written).

use super::markup::Html;
use super::run::{CellItem, CellView, ItemView, RunReport};

const STYLE: &str = include_str!("page/report.css");
const SCRIPT: &str = include_str!("page/report.js");

/// How many items each of a cell's two lists shows.
pub const LIST_LENGTH: usize = 20;

/// The figures inlined per cell, in order, with their captions.
const FIGURES: [(&str, &str); 3] = [
    (
        "reliability.svg",
        "Reliability: raw and rescaled, with the confidence histograms. Click a bar to list its items.",
    ),
    (
        "smooth_reliability.svg",
        "Smoothed reliability (smooth ECE's kernel curve)",
    ),
    (
        "risk_coverage.svg",
        "Risk against coverage: accept the most confident first",
    ),
];

/// The page. `figure` reads a file relative to the run directory (`None`
/// where it is missing, and the page says so).
pub fn page(report: &RunReport, figure: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = Html::new();
    out.tag(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n<title>",
    )
    .text(&report.title)
    .tag("</title>\n<style>\n")
    .tag(STYLE)
    .tag("</style>\n</head>\n<body>\n");
    header(&mut out, report);
    contents(&mut out, report);
    out.tag("<main>\n");
    tables(&mut out, report);
    notes_and_sections(&mut out, report);
    cells(&mut out, report, figure);
    items(&mut out, report);
    out.tag("</main>\n<script type=\"application/json\" id=\"report-data\">")
        .html(&script_data(report))
        .tag("</script>\n<script>\n")
        .tag(SCRIPT)
        .tag("</script>\n</body>\n</html>\n");
    out.into_string()
}

fn header(out: &mut Html, report: &RunReport) {
    let h = &report.header;
    out.tag("<header>\n<h1>")
        .text(&report.title)
        .tag("</h1>\n<p>")
        .html(&inline_markdown(&report.intro))
        .tag("</p>\n<dl class=\"run\">\n");
    let mut facts = vec![
        ("config", h.name.clone()),
        ("task", h.task.clone()),
        ("models", h.models.join(", ")),
        ("data", h.data.join(", ")),
        ("items", h.items.to_string()),
        ("made", h.created.clone()),
        ("codecal", h.codecal_version.clone()),
    ];
    facts.retain(|(_, v)| !v.is_empty());
    for (name, value) in facts {
        out.tag("<dt>")
            .tag(name)
            .tag("</dt><dd>")
            .text(&value)
            .tag("</dd>\n");
    }
    out.tag("</dl>\n");
    if !h.hashes.is_empty() {
        out.tag("<details class=\"hashes\"><summary>Hashes (config, stage inputs, model files)</summary>\n<table>\n");
        for (name, hash) in &h.hashes {
            out.tag("<tr><td>")
                .text(name)
                .tag("</td><td><code>")
                .text(hash)
                .tag("</code></td></tr>\n");
        }
        out.tag("</table></details>\n");
    }
    out.tag("</header>\n");
}

fn contents(out: &mut Html, report: &RunReport) {
    out.tag("<nav>\n<h2>Contents</h2>\n<ol>\n<li><a href=\"#tables\">Tables</a><ol>\n");
    for (t, table) in report.tables.iter().enumerate() {
        out.tag("<li><a href=\"#table-")
            .show(t)
            .tag("\">")
            .text(&table.title)
            .tag("</a></li>\n");
    }
    out.tag("</ol></li>\n<li><a href=\"#cells\">Cells: figures and items</a><ol>\n");
    for (c, cell) in report.cells.iter().enumerate() {
        out.tag("<li><a href=\"#cell-")
            .show(c)
            .tag("\">")
            .text(&cell.key.join(" · "))
            .tag("</a></li>\n");
    }
    out.tag("</ol></li>\n<li><a href=\"#items\">Items</a></li>\n</ol>\n</nav>\n");
}

fn tables(out: &mut Html, report: &RunReport) {
    out.tag("<section id=\"tables\">\n<h2>Tables</h2>\n");
    for (t, table) in report.tables.iter().enumerate() {
        out.tag("<section class=\"report-table\" id=\"table-")
            .show(t)
            .tag("\" data-file=\"")
            .text(&table.file)
            .tag("\">\n<h3>")
            .text(&table.title)
            .tag("</h3>\n");
        if table.rows.is_empty() {
            out.tag("<p>(nothing in this run)</p>\n</section>\n");
            continue;
        }
        out.tag("<div class=\"scroll\"><table class=\"sortable\">\n<thead><tr>");
        for name in &table.header {
            out.tag("<th>").text(name).tag("</th>");
        }
        out.tag("</tr></thead>\n<tbody>\n");
        for row in &table.rows {
            out.tag("<tr>");
            for value in row {
                out.tag("<td>").text(value).tag("</td>");
            }
            out.tag("</tr>\n");
        }
        out.tag("</tbody>\n</table></div>\n</section>\n");
    }
    out.tag("</section>\n");
}

fn notes_and_sections(out: &mut Html, report: &RunReport) {
    if !report.notes.is_empty() {
        out.tag("<section id=\"notes\">\n<h2>Notes</h2>\n<ul>\n");
        for note in &report.notes {
            out.tag("<li>").html(&inline_markdown(note)).tag("</li>\n");
        }
        out.tag("</ul>\n</section>\n");
    }
    for section in &report.sections {
        out.tag("<section class=\"closing\">\n<h2>")
            .text(&section.heading)
            .tag("</h2>\n")
            .html(&block_markdown(&section.body))
            .tag("</section>\n");
    }
}

fn cells(out: &mut Html, report: &RunReport, figure: &dyn Fn(&str) -> Option<String>) {
    out.tag(
        "<section id=\"cells\">\n<h2>Cells: figures and items</h2>\n\
            <p>Each cell is one calibration. The lists rank items by their raw confidence \
            (the measure's own value); \"rescaled\" is the out-of-fold confidence of a \
            rescaler that never saw the item.</p>\n",
    );
    for (c, cell) in report.cells.iter().enumerate() {
        out.tag("<section class=\"cell\" id=\"cell-")
            .show(c)
            .tag("\" data-cell=\"")
            .show(c)
            .tag("\">\n<h3>")
            .html(&cell_title(cell))
            .tag("</h3>\n<div class=\"figures\">\n");
        // The reliability diagram, then its drill-down right under it, then
        // the other figures.
        figure_html(out, figure, &cell.figures, FIGURES[0]);
        out.tag("</div>\n<form class=\"range\" hidden>\n<label>List the items with \
                <select name=\"which\"><option value=\"raw\">raw</option>\
                <option value=\"rescaled\">rescaled</option></select> confidence from \
                <input name=\"low\" type=\"number\" min=\"0\" max=\"1\" step=\"0.01\" value=\"0.9\"> to \
                <input name=\"high\" type=\"number\" min=\"0\" max=\"1\" step=\"0.01\" value=\"1\"></label> \
                <button type=\"submit\">List</button>\n</form>\n\
                <div class=\"drill\" hidden></div>\n<div class=\"figures\">\n");
        for spec in &FIGURES[1..] {
            figure_html(out, figure, &cell.figures, *spec);
        }
        out.tag("</div>\n");
        let wrong = most_confident_wrong(report, cell);
        let right = least_confident_right(report, cell);
        item_list(out, report, "wrong", "Most confident and wrong", &wrong);
        item_list(out, report, "right", "Least confident and right", &right);
        out.tag("</section>\n");
    }
    out.tag("</section>\n");
}

/// One of a cell's figures, inlined from `dir`, or a line saying it is missing.
fn figure_html(
    out: &mut Html,
    figure: &dyn Fn(&str) -> Option<String>,
    dir: &str,
    (file, caption): (&'static str, &'static str),
) {
    let path = format!("{dir}/{file}");
    match figure(&path) {
        Some(svg) => {
            out.tag("<figure class=\"")
                .text(file.trim_end_matches(".svg"))
                .tag("\">")
                .html(&Html::trusted(super::svg_clean::clean_svg(&svg)))
                .tag("<figcaption>")
                .tag(caption)
                .tag("</figcaption></figure>\n");
        }
        // The smoothed curve is absent where smooth ECE was off.
        None if file == "smooth_reliability.svg" => {}
        None => {
            out.tag("<p class=\"missing\">")
                .text(&path)
                .tag(" is missing.</p>\n");
        }
    }
}

fn cell_title(cell: &CellView) -> Html {
    let mut out = Html::new();
    for (i, (name, value)) in cell.key_names.iter().zip(&cell.key).enumerate() {
        if i > 0 {
            out.tag(" · ");
        }
        out.text(name).tag(": <b>").text(value).tag("</b>");
    }
    out
}

/// The cell's wrong items, surest first (ties by item id), at most [`LIST_LENGTH`].
pub fn most_confident_wrong<'c>(report: &RunReport, cell: &'c CellView) -> Vec<&'c CellItem> {
    ranked(report, cell, false, |a, b| b.raw.total_cmp(&a.raw))
}

/// The cell's right items, least sure first (ties by item id), at most [`LIST_LENGTH`].
pub fn least_confident_right<'c>(report: &RunReport, cell: &'c CellView) -> Vec<&'c CellItem> {
    ranked(report, cell, true, |a, b| a.raw.total_cmp(&b.raw))
}

fn ranked<'c>(
    report: &RunReport,
    cell: &'c CellView,
    correct: bool,
    order: impl Fn(&CellItem, &CellItem) -> std::cmp::Ordering,
) -> Vec<&'c CellItem> {
    let mut chosen: Vec<&CellItem> = cell.items.iter().filter(|i| i.correct == correct).collect();
    chosen.sort_by(|a, b| {
        order(a, b).then_with(|| report.items[a.item].id.cmp(&report.items[b.item].id))
    });
    chosen.truncate(LIST_LENGTH);
    chosen
}

fn item_list(
    out: &mut Html,
    report: &RunReport,
    class: &'static str,
    title: &'static str,
    list: &[&CellItem],
) {
    out.tag("<h4>").tag(title).tag("</h4>\n");
    if list.is_empty() {
        out.tag("<p>None.</p>\n");
        return;
    }
    let first = &report.items[list[0].item];
    let numbers: Vec<&str> = first.numbers.iter().map(|(n, _)| n.as_str()).collect();
    let labels: Vec<&str> = first.labels.iter().map(|(n, _)| n.as_str()).collect();
    out.tag("<div class=\"scroll\"><table class=\"items sortable ")
        .tag(class)
        .tag("\">\n<thead><tr><th>#</th><th>item</th><th>raw</th><th>rescaled</th>");
    for name in numbers.iter().chain(&labels) {
        out.tag("<th>").text(name).tag("</th>");
    }
    out.tag("<th>answer</th></tr></thead>\n<tbody>\n");
    for (rank, entry) in list.iter().enumerate() {
        item_row(out, report, rank + 1, entry);
    }
    out.tag("</tbody>\n</table></div>\n");
}

/// One row of an item list; the drill-down's rows are built by the script
/// in the same shape.
fn item_row(out: &mut Html, report: &RunReport, rank: usize, entry: &CellItem) {
    let item = &report.items[entry.item];
    out.tag("<tr data-id=\"")
        .text(&item.id)
        .tag("\" data-item=\"")
        .show(entry.item)
        .tag("\"><td>")
        .show(rank)
        .tag("</td><td><a href=\"#item-")
        .show(entry.item)
        .tag("\">")
        .text(&item.id)
        .tag("</a></td><td>")
        .text(&format!("{:.3}", entry.raw))
        .tag("</td><td>")
        .text(&entry.rescaled.map_or("-".into(), |r| format!("{r:.3}")))
        .tag("</td>");
    for (_, value) in &item.numbers {
        out.tag("<td>").text(&format!("{value:.3}")).tag("</td>");
    }
    for (_, text) in &item.labels {
        out.tag("<td>").text(text).tag("</td>");
    }
    out.tag("<td class=\"headline\">")
        .text(&shorten(&item.headline, 300))
        .tag("</td></tr>\n");
}

fn items(out: &mut Html, report: &RunReport) {
    out.tag(
        "<section id=\"items\">\n<h2>Items</h2>\n\
            <p class=\"filter\" hidden><label>Filter items: <input type=\"search\" \
            placeholder=\"id, code or text\"></label></p>\n",
    );
    for (i, item) in report.items.iter().enumerate() {
        item_details(out, i, item);
    }
    out.tag("</section>\n");
}

fn item_details(out: &mut Html, index: usize, item: &ItemView) {
    out.tag("<details class=\"item\" id=\"item-")
        .show(index)
        .tag("\"><summary><code>")
        .text(&item.id)
        .tag("</code> · ")
        .text(&item.model)
        .tag(" · ")
        .text(&item.group)
        .tag("</summary>\n");
    if !item.numbers.is_empty() || !item.labels.is_empty() {
        out.tag("<p class=\"numbers\">");
        for (name, value) in &item.numbers {
            out.text(name)
                .tag(": ")
                .text(&format!("{value:.4}"))
                .tag(" ");
        }
        for (name, text) in &item.labels {
            out.text(name).tag(": ").text(text).tag(" ");
        }
        out.tag("</p>\n");
    }
    for text in &item.texts {
        out.tag("<h5>").text(&text.label).tag("</h5>\n");
        if text.code {
            out.tag("<pre class=\"code\"><code>")
                .text(&text.text)
                .tag("</code></pre>\n");
        } else {
            out.tag("<p class=\"text\">").text(&text.text).tag("</p>\n");
        }
    }
    out.tag("</details>\n");
}

/// What the script needs and the markup does not hold: each cell's items
/// with their bars, and each item's list fields. Compact: one array per item.
fn script_data(report: &RunReport) -> Html {
    let cells: Vec<serde_json::Value> = report
        .cells
        .iter()
        .map(|cell| {
            let items: Vec<serde_json::Value> = cell
                .items
                .iter()
                .map(|i| {
                    serde_json::json!([
                        i.item,
                        i.raw,
                        i.rescaled,
                        u8::from(i.correct),
                        i.raw_bar,
                        i.rescaled_bar
                    ])
                })
                .collect();
            serde_json::json!({ "items": items })
        })
        .collect();
    let items: Vec<serde_json::Value> = report
        .items
        .iter()
        .map(|item| {
            let numbers: Vec<f64> = item.numbers.iter().map(|(_, v)| round(*v)).collect();
            let labels: Vec<&str> = item.labels.iter().map(|(_, t)| t.as_str()).collect();
            serde_json::json!([item.id, shorten(&item.headline, 300), numbers, labels])
        })
        .collect();
    // Every item of a run carries the same named numbers and labels.
    let first = report.items.first();
    let names = |pairs: fn(&ItemView) -> Vec<&str>| first.map(pairs).unwrap_or_default();
    let number_names = names(|i| i.numbers.iter().map(|(n, _)| n.as_str()).collect());
    let label_names = names(|i| i.labels.iter().map(|(n, _)| n.as_str()).collect());
    Html::trusted(script_json(&serde_json::json!({
        "cells": cells,
        "items": items,
        "number_names": number_names,
        "label_names": label_names,
    })))
}

/// JSON that can sit inside a `<script>` element: with `<`, `>` and `&`
/// written as `\u003c`, `\u003e` and `\u0026` (they occur only inside
/// strings), no item text can close the element (`</script`) or open an
/// HTML comment (`<!--`) that would swallow the page's code.
fn script_json(value: &serde_json::Value) -> String {
    value
        .to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// Six decimals for the numbers the lists only show; confidences stay
/// exact, since the drill-down sorts by them.
fn round(value: f64) -> f64 {
    (value * 1e6).round() / 1e6
}

fn shorten(text: &str, chars: usize) -> String {
    let trimmed = text.trim();
    match trimmed.char_indices().nth(chars) {
        Some((cut, _)) => format!("{}…", &trimmed[..cut]),
        None => trimmed.to_owned(),
    }
}

/// `code` spans and `[text](target)` links of one line of Markdown, escaped.
fn inline_markdown(text: &str) -> Html {
    let mut out = Html::new();
    let mut rest = text;
    while !rest.is_empty() {
        let next = rest.find(['`', '[']).unwrap_or(rest.len());
        out.text(&rest[..next]);
        rest = &rest[next..];
        if let Some(after) = rest.strip_prefix('`') {
            match after.find('`') {
                Some(end) => {
                    out.tag("<code>").text(&after[..end]).tag("</code>");
                    rest = &after[end + 1..];
                }
                None => {
                    out.text("`");
                    rest = after;
                }
            }
        } else if let Some(after) = rest.strip_prefix('[') {
            let link = after.find("](").and_then(|close| {
                let target = &after[close + 2..];
                target
                    .find(')')
                    .map(|end| (&after[..close], &target[..end], close + 2 + end + 1))
            });
            match link {
                Some((label, target, used)) => {
                    out.tag("<a href=\"")
                        .text(target)
                        .tag("\">")
                        .text(label)
                        .tag("</a>");
                    rest = &after[used..];
                }
                None => {
                    out.text("[");
                    rest = after;
                }
            }
        }
    }
    out
}

/// Paragraphs and "- " lists.
fn block_markdown(text: &str) -> Html {
    let mut out = Html::new();
    for block in text.split("\n\n").map(str::trim).filter(|b| !b.is_empty()) {
        if block.lines().all(|l| l.starts_with("- ")) {
            out.tag("<ul>\n");
            for line in block.lines() {
                out.tag("<li>")
                    .html(&inline_markdown(&line[2..]))
                    .tag("</li>\n");
            }
            out.tag("</ul>\n");
        } else {
            out.tag("<p>").html(&inline_markdown(block)).tag("</p>\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_spans_and_links_become_html_and_text_is_escaped() {
        assert_eq!(
            inline_markdown("a `x<y` and [f](dir/a b.svg) <b> [not a link").into_string(),
            "a <code>x&lt;y</code> and <a href=\"dir/a b.svg\">f</a> &lt;b&gt; [not a link"
        );
        assert_eq!(
            inline_markdown("unclosed `tick").into_string(),
            "unclosed `tick"
        );
        assert_eq!(
            block_markdown("Para one.\n\n- [a](a)\n- b\n").into_string(),
            "<p>Para one.</p>\n<ul>\n<li><a href=\"a\">a</a></li>\n<li>b</li>\n</ul>\n"
        );
    }

    #[test]
    fn script_data_cannot_close_its_element() {
        for attack in ["</script><script>alert(1)", "<!--<script>", "a & b > c"] {
            let data = script_json(&serde_json::json!({ "x": attack }));
            assert!(!data.contains(['<', '>', '&']), "{data}");
            let back: serde_json::Value = serde_json::from_str(&data).unwrap();
            assert_eq!(back["x"], attack);
        }
    }

    #[test]
    fn long_text_is_shortened_on_a_character_boundary() {
        assert_eq!(shorten("  ééé  ", 2), "éé…");
        assert_eq!(shorten("ab", 2), "ab");
    }
}
