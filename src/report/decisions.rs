//! The decision cutoffs of a calibration report as Markdown: the procedure
//! and its guarantee, one row per cutoff (raw and calibrated value, what it
//! decides, the bound), and each group's own cutoffs where they were asked
//! for. Not here: choosing the cutoffs (`calibrate::cutoffs`).

use super::table::grid_markdown;
use crate::calibrate::{CalibrationReport, Cutoff};

/// The decision cutoffs as Markdown, with a plain sentence where no cutoff
/// meets a target.
pub fn decision_markdown(report: &CalibrationReport) -> String {
    let cutoffs = &report.cutoffs;
    let mut out = format!(
        "Decision cutoffs on the {} confidences of {} items, exact binomial test, {}; \
         δ = {}.\n\n",
        report.cutoffs_on,
        cutoffs.items,
        cutoffs.procedure.guarantee(),
        cutoffs.delta,
    );
    if let Some(least) = cutoffs.min_coverage {
        out += &format!(
            "An accept cutoff must also accept at least {least} of items (a one-sided \
             Clopper–Pearson lower bound at δ), so both guarantees hold together with \
             probability at least {:.2}.\n\n",
            1.0 - 2.0 * cutoffs.delta
        );
    }
    out += &cutoff_table(&cutoffs.accept, cutoffs.reject.as_ref());
    let missing: Vec<String> = cutoffs
        .accept
        .iter()
        .filter(|c| c.cutoff.is_none())
        .map(|c| c.target_precision.to_string())
        .collect();
    if !missing.is_empty() {
        out += &format!(
            "\nNo cutoff guarantees precision {} with these items: at that target every item goes to review.\n",
            missing.join(" or ")
        );
    }
    for unmet in cutoffs.accept.iter().filter_map(|c| c.unmet.as_ref()) {
        out += &format!("\n{unmet}.\n");
    }
    if !report.other_procedures.is_empty() {
        out += "\nThe same targets under the other procedures, on the same items (for comparison; \
                the calibrator keeps the cutoffs above):\n\n";
        let rows: Vec<Vec<String>> = report
            .other_procedures
            .iter()
            .flat_map(|other| {
                other.accept.iter().map(|c| {
                    vec![
                        other.procedure.as_str().to_owned(),
                        c.target_precision.to_string(),
                        c.cutoff.map_or("none".to_owned(), |t| format!("{t:.2}")),
                        c.decided.to_string(),
                        format!("{:.4}", c.coverage),
                        c.realised_precision
                            .map_or("–".to_owned(), |v| format!("{v:.4}")),
                    ]
                })
            })
            .collect();
        let header = [
            "procedure",
            "target precision",
            "cutoff (raw)",
            "items",
            "coverage",
            "realised precision",
        ];
        out += &grid_markdown(&header, &rows);
    }
    if let Some(by) = &cutoffs.groups {
        out += &format!(
            "\nPer group of {} (each group's cutoffs chosen on its own items, each with its \
             own guarantee at δ; `apply` decides an item with its group's cutoffs):\n\n",
            by.column
        );
        let rows: Vec<(String, &Cutoff)> = by
            .groups
            .iter()
            .flat_map(|g| {
                g.accept
                    .iter()
                    .chain(g.reject.iter())
                    .map(move |c| (format!("{} ({} items)", g.group, g.items), c))
            })
            .collect();
        out += &group_table(&rows);
    }
    out
}

const HEADER: [&str; 9] = [
    "target precision",
    "cutoff (raw)",
    "calibrated at cutoff",
    "items",
    "wrong decisions",
    "tested items",
    "bound on the error rate",
    "coverage",
    "realised precision",
];

fn cutoff_table(accept: &[Cutoff], reject: Option<&Cutoff>) -> String {
    let rows = accept
        .iter()
        .map(|c| ("accept ≥", c))
        .chain(reject.map(|c| ("reject <", c)));
    keyed_table(
        "decision",
        rows.map(|(decision, c)| (decision.to_owned(), c)),
    )
}

fn group_table(rows: &[(String, &Cutoff)]) -> String {
    keyed_table("group", rows.iter().map(|(group, c)| (group.clone(), *c)))
}

/// One row per cutoff under [`HEADER`], after a first column named `key`.
fn keyed_table<'a>(key: &str, rows: impl Iterator<Item = (String, &'a Cutoff)>) -> String {
    let header: Vec<&str> = std::iter::once(key).chain(HEADER).collect();
    let rows: Vec<Vec<String>> = rows
        .map(|(first, c)| std::iter::once(first).chain(cells(c)).collect())
        .collect();
    grid_markdown(&header, &rows)
}

/// A cutoff's cells after the first column.
fn cells(c: &Cutoff) -> [String; 9] {
    let value = |v: Option<f64>| v.map_or("–".to_owned(), |v| format!("{v:.4}"));
    [
        c.target_precision.to_string(),
        c.cutoff.map_or("none".to_owned(), |t| format!("{t:.2}")),
        value(c.calibrated_cutoff),
        c.decided.to_string(),
        c.mistakes.to_string(),
        c.tested.to_string(),
        value(c.mistake_bound),
        format!("{:.4}", c.coverage),
        value(c.realised_precision),
    ]
}
