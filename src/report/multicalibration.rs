//! The multicalibration section of `calibrate`'s Markdown: the worst group
//! before and after, Brier skill of the base rescaler beside
//! multicalibration, the multicalibration error and grouping loss, and the
//! per-group table. All out of fold.
//!
//! Not here: computing them (`calibrate::multical`).

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

fn sides(s: &Sides) -> String {
    format!("{:.4} | {:.4} | {:.4}", s.raw, s.base, s.multicalibrated)
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
    out += &format!("| Measure | Raw | {base} | Multicalibrated |\n|---|---|---|---|\n");
    out += &format!(
        "| Multicalibration error | {} |\n",
        sides(&mc.multicalibration_error)
    );
    out += &format!(
        "| Grouping loss (lower bound) | {} |\n\n",
        sides(&mc.grouping_loss)
    );
    out += &format!(
        "| Group | n | Base rate | ECE raw | ECE {base} | ECE multical. | smECE raw | smECE {base} | smECE multical. | Skill raw | Skill {base} | Skill multical. |\n"
    );
    out += &format!("|{}\n", "---|".repeat(12));
    for row in mc.groups.iter().take(TABLE_ROWS) {
        out += &format!(
            "| {} | {} | {:.3} | {} | {} | {} |\n",
            row.group,
            row.n,
            row.base_rate,
            sides(&row.ece),
            sides(&row.smooth_ece),
            sides(&row.skill_score)
        );
    }
    if mc.groups.len() > TABLE_ROWS {
        out += &format!(
            "\n{} more groups in the JSON output.\n",
            mc.groups.len() - TABLE_ROWS
        );
    }
    out
}
