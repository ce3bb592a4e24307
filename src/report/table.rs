//! A grid of text cells (a header and rows) as Markdown, CSV and a LaTeX
//! `tabular` (the one renderer of each), with the one LaTeX escape every table uses, and the one cell format of a
//! number with its bootstrap interval. The run's tables are written with
//! these; what goes in the cells is the caller's.

use crate::calibrate::Evaluation;

/// "0.123 [0.100, 0.150]", or "-" where there is no value.
pub fn with_ci(value: Option<f64>, evaluation: &Evaluation, name: &str) -> String {
    let Some(value) = value.filter(|v| v.is_finite()) else {
        return "-".into();
    };
    value_with_interval(value, evaluation.ci.get(name).copied().flatten())
}

/// "0.123 [0.100, 0.150]", or the value alone without an interval.
pub fn value_with_interval(value: f64, ci: Option<[f64; 2]>) -> String {
    match ci {
        Some([low, high]) => format!("{value:.3} [{low:.3}, {high:.3}]"),
        None => format!("{value:.3}"),
    }
}

/// A header row: the key columns, then the value columns.
pub fn header(first: &[&str], rest: &[&str]) -> Vec<String> {
    first.iter().chain(rest).map(|s| s.to_string()).collect()
}

/// Text for a LaTeX cell: `_`, `%` and `&` escaped, and the collapse mark
/// `‡` as a superscript dagger.
pub fn latex_escape(text: &str) -> String {
    text.replace('_', "\\_")
        .replace('%', "\\%")
        .replace('&', "\\&")
        .replace('‡', "$^\\ddagger$")
}

/// The grid as a Markdown table: a header row, a `|---|` rule and a row per
/// line. Cells are written as they are (a caller escapes a `|` it may hold).
pub fn grid_markdown<S: AsRef<str>>(header: &[S], rows: &[Vec<String>]) -> String {
    let line = |cells: Vec<&str>| format!("| {} |\n", cells.join(" | "));
    let mut out = line(header.iter().map(AsRef::as_ref).collect());
    out += &format!("|{}\n", "---|".repeat(header.len()));
    for row in rows {
        out += &line(row.iter().map(String::as_str).collect());
    }
    out
}

/// Text for a Markdown cell: a `|` escaped and line breaks as spaces, so
/// the cell stays in its column and its row.
pub fn markdown_cell(text: &str) -> String {
    visible(text).replace('|', "\\|")
}

/// `text` with line breaks as spaces, tabs kept, and every other control
/// character (a terminal's escape sequences) dropped.
fn visible(text: &str) -> String {
    text.chars()
        .filter_map(|c| match c {
            '\n' | '\r' => Some(' '),
            '\t' => Some('\t'),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect()
}

/// A name from the user's files (a path, a function) as a table cell in an
/// inline code span, so that Markdown or HTML in it shows as written and
/// does nothing: the fence is one backtick longer than any run inside.
pub fn markdown_code(text: &str) -> String {
    let text = markdown_cell(text);
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    format!("{fence} {text} {fence}")
}

/// The grid as CSV (the `csv` crate's quoting).
pub fn grid_csv(header: &[String], rows: &[Vec<String>]) -> String {
    let mut writer = csv::Writer::from_writer(Vec::new());
    // Writing to memory cannot fail.
    let _ = writer.write_record(header);
    for row in rows {
        let _ = writer.write_record(row);
    }
    String::from_utf8(writer.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// The grid as a LaTeX `tabular`, every column left-aligned, `title` as a
/// comment above it.
pub fn grid_latex(title: &str, header: &[String], rows: &[Vec<String>]) -> String {
    let line = |cells: &[String]| {
        cells
            .iter()
            .map(|c| latex_escape(c))
            .collect::<Vec<_>>()
            .join(" & ")
    };
    let mut out = format!(
        "% {title}\n\\begin{{tabular}}{{{}}}\n\\hline\n{} \\\\\n\\hline\n",
        "l".repeat(header.len()),
        line(header)
    );
    for row in rows {
        out += &format!("{} \\\\\n", line(row));
    }
    out + "\\hline\n\\end{tabular}\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_escaped_once_and_quoted_as_csv() {
        let header = vec!["model".to_owned(), "ECE_raw %".to_owned()];
        let rows = vec![vec!["a & b".to_owned(), "0.1‡".to_owned()]];
        assert_eq!(
            grid_latex("T", &header, &rows),
            "% T\n\\begin{tabular}{ll}\n\\hline\nmodel & ECE\\_raw \\% \\\\\n\\hline\n\
             a \\& b & 0.1$^\\ddagger$ \\\\\n\\hline\n\\end{tabular}\n"
        );
        assert_eq!(grid_csv(&header, &rows), "model,ECE_raw %\na & b,0.1‡\n");
        let quoted = vec![vec!["x, y".to_owned(), "say \"hi\"".to_owned()]];
        assert_eq!(
            grid_csv(&header, &quoted),
            "model,ECE_raw %\n\"x, y\",\"say \"\"hi\"\"\"\n"
        );
    }
}
