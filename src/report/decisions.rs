//! The decision cutoffs of a calibration report as Markdown: the procedure
//! and its guarantee, one row per cutoff (raw and calibrated value, what it
//! decides, the bound), and each group's own cutoffs where they were asked
//! for. Not here: choosing the cutoffs (`calibrate::cutoffs`).

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
                the calibrator keeps the cutoffs above):\n\n\
                | procedure | target precision | cutoff (raw) | items | coverage | realised precision |\n\
                |---|---|---|---|---|---|\n";
        for other in &report.other_procedures {
            for c in &other.accept {
                out += &format!(
                    "| {} | {} | {} | {} | {:.4} | {} |\n",
                    other.procedure.as_str(),
                    c.target_precision,
                    c.cutoff.map_or("none".to_owned(), |t| format!("{t:.2}")),
                    c.decided,
                    c.coverage,
                    c.realised_precision
                        .map_or("–".to_owned(), |v| format!("{v:.4}"))
                );
            }
        }
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

const HEADER: &str = "| target precision | cutoff (raw) | calibrated at cutoff | items | wrong decisions | \
     tested items | bound on the error rate | coverage | realised precision |";

fn cutoff_table(accept: &[Cutoff], reject: Option<&Cutoff>) -> String {
    let mut out = format!("| decision {HEADER}\n|---{}\n", "|---".repeat(9) + "|");
    let rows = accept
        .iter()
        .map(|c| ("accept ≥", c))
        .chain(reject.map(|c| ("reject <", c)));
    for (decision, c) in rows {
        out += &format!("| {decision} {}\n", cells(c));
    }
    out
}

fn group_table(rows: &[(String, &Cutoff)]) -> String {
    let mut out = format!("| group {HEADER}\n|---{}\n", "|---".repeat(9) + "|");
    for (group, c) in rows {
        out += &format!("| {group} {}\n", cells(c));
    }
    out
}

/// A cutoff's cells after the first column, starting with the separator.
fn cells(c: &Cutoff) -> String {
    let value = |v: Option<f64>| v.map_or("–".to_owned(), |v| format!("{v:.4}"));
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {:.4} | {} |",
        c.target_precision,
        c.cutoff.map_or("none".to_owned(), |t| format!("{t:.2}")),
        value(c.calibrated_cutoff),
        c.decided,
        c.mistakes,
        c.tested,
        value(c.mistake_bound),
        c.coverage,
        value(c.realised_precision)
    )
}
