//! Tables as `codecal run` writes them: a titled grid of cells rendered
//! as Markdown, CSV and LaTeX, and the cell format of a number with its
//! bootstrap interval. Shared by the summarization report and the task
//! report; what goes in the tables is theirs.

use std::path::Path;

use super::PipelineError;
use crate::artifact::{create_dir, write_atomic};
use crate::calibrate::Evaluation;

/// "0.123 [0.100, 0.150]", or "-" where there is no value.
pub(crate) fn with_ci(value: Option<f64>, evaluation: &Evaluation, name: &str) -> String {
    let Some(value) = value.filter(|v| v.is_finite()) else {
        return "-".into();
    };
    match evaluation.ci.get(name).copied().flatten() {
        Some([low, high]) => format!("{value:.3} [{low:.3}, {high:.3}]"),
        None => format!("{value:.3}"),
    }
}

/// A titled table.
pub(crate) struct Named {
    pub file: &'static str,
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

pub(crate) fn header(first: &[&str], rest: &[&str]) -> Vec<String> {
    first.iter().chain(rest).map(|s| s.to_string()).collect()
}

/// Writes each table as `tables/<file>.csv` and `.tex` under `dir` and
/// returns the Markdown of all of them, each under its title.
pub(crate) fn write_all(dir: &Path, tables: &[Named]) -> Result<String, PipelineError> {
    create_dir(&dir.join("tables"))?;
    let mut markdown = String::new();
    for table in tables {
        let body = if table.rows.is_empty() {
            "(nothing in this run)\n".to_owned()
        } else {
            render_markdown(table)
        };
        markdown += &format!("## {}\n\n{body}\n", table.title);
        write_atomic(
            &dir.join(format!("tables/{}.csv", table.file)),
            render_csv(table).as_bytes(),
        )?;
        write_atomic(
            &dir.join(format!("tables/{}.tex", table.file)),
            render_latex(table).as_bytes(),
        )?;
    }
    Ok(markdown)
}

fn render_markdown(table: &Named) -> String {
    let mut out = format!(
        "| {} |\n|{}\n",
        table.header.join(" | "),
        "---|".repeat(table.header.len())
    );
    for row in &table.rows {
        out += &format!("| {} |\n", row.join(" | "));
    }
    out
}

fn render_csv(table: &Named) -> String {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let _ = writer.write_record(&table.header);
    for row in &table.rows {
        let _ = writer.write_record(row);
    }
    String::from_utf8(writer.into_inner().unwrap_or_default()).unwrap_or_default()
}

fn render_latex(table: &Named) -> String {
    let escape = |s: &str| {
        s.replace('_', "\\_")
            .replace('%', "\\%")
            .replace('&', "\\&")
            .replace('‡', "$^\\ddagger$")
    };
    let mut out = format!(
        "% {}\n\\begin{{tabular}}{{{}}}\n\\hline\n{} \\\\\n\\hline\n",
        table.title,
        "l".repeat(table.header.len()),
        table
            .header
            .iter()
            .map(|h| escape(h))
            .collect::<Vec<_>>()
            .join(" & ")
    );
    for row in &table.rows {
        out += &format!(
            "{} \\\\\n",
            row.iter()
                .map(|c| escape(c))
                .collect::<Vec<_>>()
                .join(" & ")
        );
    }
    out + "\\hline\n\\end{tabular}\n"
}
