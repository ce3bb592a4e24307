//! The multicalibration section of `calibrate`'s Markdown: the worst group
//! before and after, Brier skill of the base rescaler beside
//! multicalibration, the multicalibration error and grouping loss, and the
//! per-group table. All out of fold.
//!
//! Not here: computing them (`calibrate::multical`).

use super::table::grid_markdown;
use crate::calibrate::multical::diagnostics::WithInterval;
use crate::calibrate::multical::{MulticalibrationReport, Sides};

/// At most this many groups in the table, worst first.
const TABLE_ROWS: usize = 30;

fn with_interval(v: &WithInterval) -> String {
    match v.ci {
        Some([lo, hi]) => format!("{:.4} [{lo:.4}, {hi:.4}]", v.value),
        None => format!("{:.4}", v.value),
    }
}

fn sides(s: &Sides) -> [String; 3] {
    [s.raw, s.base, s.multicalibrated].map(|v| format!("{v:.4}"))
}

pub fn multicalibration_markdown(mc: &MulticalibrationReport, base: &str) -> String {
    let mut out = format!(
        "### Multicalibration (after {base}; out of fold; {} patches in the final fit{})\n\n",
        mc.patches,
        if mc.converged {
            ""
        } else {
            ", stopped at the round limit"
        }
    );
    if let (Some(group), Some(before), Some(after)) =
        (&mc.worst_group, &mc.worst_before, &mc.worst_after)
    {
        out += &format!(
            "Worst group by {base} ECE: {group}: ECE {} with {base}, {} multicalibrated.\n\n",
            with_interval(before),
            with_interval(after)
        );
    }
    out += &format!(
        "Brier skill on every tested item: {} with {base}, {} multicalibrated.\n\n",
        with_interval(&mc.skill_base),
        with_interval(&mc.skill_multicalibrated)
    );
    let measure =
        |name: &str, s: &Sides| std::iter::once(name.to_owned()).chain(sides(s)).collect();
    let measures = vec![
        measure("Multicalibration error", &mc.multicalibration_error),
        measure("Grouping loss (lower bound)", &mc.grouping_loss),
    ];
    out += &grid_markdown(&["Measure", "Raw", base, "Multicalibrated"], &measures);
    out += "\n";
    let header: Vec<String> = ["Group", "n", "Base rate"]
        .map(String::from)
        .into_iter()
        .chain(["ECE", "smECE", "Skill"].iter().flat_map(|m| {
            [
                format!("{m} raw"),
                format!("{m} {base}"),
                format!("{m} multical."),
            ]
        }))
        .collect();
    let rows: Vec<Vec<String>> = mc
        .groups
        .iter()
        .take(TABLE_ROWS)
        .map(|row| {
            let mut cells = vec![
                row.group.clone(),
                row.n.to_string(),
                format!("{:.3}", row.base_rate),
            ];
            cells.extend(sides(&row.ece));
            cells.extend(sides(&row.smooth_ece));
            cells.extend(sides(&row.skill_score));
            cells
        })
        .collect();
    out += &grid_markdown(&header, &rows);
    if mc.groups.len() > TABLE_ROWS {
        out += &format!(
            "\n{} more groups in the JSON output.\n",
            mc.groups.len() - TABLE_ROWS
        );
    }
    out
}
