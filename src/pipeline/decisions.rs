//! The decision section every flow's report shares: what each cell's
//! cutoffs and each fixed rule accept with their guarantee, most first,
//! then one line per cell or rule for the targets at which nothing is
//! certified; and the sentence that leads the report with what is accepted.
//! Not how cutoffs are chosen (`calibrate::cutoffs`).

use super::calibration::CellRow;
use crate::calibrate::Cutoff;
use crate::calibrate::cutoffs::Procedure;
use crate::calibrate::cutoffs::procedures::{Tally, p_value};
use crate::calibrate::cutoffs::rule::{FixedRule, RuleTest};
use crate::report::run::ReportTable;
use crate::report::table::header;

/// A fixed rule's row source in the decision section: its key columns
/// (model, "rule NAME"), its test at each target and its calibrator file.
pub(crate) struct RuleRow {
    pub key: Vec<String>,
    pub rule: FixedRule,
    pub tests: Vec<RuleTest>,
    pub calibrator: String,
}

/// One line of the decision section before it is laid out.
struct DecisionLine {
    coverage: f64,
    cells: Vec<String>,
}

/// The decision section: first everything accepted with its guarantee, most
/// first: each cell's accept cutoff per target (coverage, realised
/// precision, the exact test's p-value on the items it was tested on) and
/// each fixed rule that its one test certifies; then one line per cell or
/// rule for the targets at which it certifies nothing.
pub(crate) fn decision_table(key: &[&str], rows: &[CellRow], rules: &[RuleRow]) -> ReportTable {
    let delta = rows.first().map_or(0.1, |r| r.report.cutoffs.delta);
    let procedure = rows
        .first()
        .map_or(Procedure::default(), |r| r.report.cutoffs.procedure)
        .as_str();
    let mut accepting = Vec::new();
    let mut review_all = Vec::new();
    for row in rows {
        let links = [
            row.report.cutoffs_on.to_owned(),
            format!("[json]({})", row.calibrator),
            format!("[svg]({})", row.figure),
        ];
        let mut none_at = Vec::new();
        for cutoff in &row.report.cutoffs.accept {
            let Some(t) = cutoff.cutoff else {
                none_at.push(cutoff.target_precision.to_string());
                continue;
            };
            let p = tested_p_value(cutoff, t);
            accepting.push(DecisionLine {
                coverage: cutoff.coverage,
                cells: decision_cells(
                    &row.key,
                    cutoff.target_precision,
                    format!("{t:.2}"),
                    cutoff,
                    p,
                    &links,
                ),
            });
        }
        if !none_at.is_empty() {
            review_all.push(review_line(&row.key, &none_at, "-".to_owned(), &links));
        }
    }
    for rule in rules {
        let links = [
            "fixed rule".to_owned(),
            format!("[json]({})", rule.calibrator),
            "-".to_owned(),
        ];
        let value = format!("{} ≥ {}", rule.rule.measure, rule.rule.at_least);
        let mut none_at = Vec::new();
        let mut best_p = 1.0f64;
        for test in &rule.tests {
            if !test.certified {
                none_at.push(test.target_precision.to_string());
                best_p = best_p.min(test.p_value);
                continue;
            }
            let cutoff = Cutoff {
                decided: test.accepted,
                coverage: test.coverage(),
                realised_precision: test.realised_precision(),
                ..Cutoff::none(test.target_precision)
            };
            accepting.push(DecisionLine {
                coverage: test.coverage(),
                cells: decision_cells(
                    &rule.key,
                    test.target_precision,
                    value.clone(),
                    &cutoff,
                    test.p_value,
                    &links,
                ),
            });
        }
        if !none_at.is_empty() {
            review_all.push(review_line(
                &rule.key,
                &none_at,
                format!("{best_p:.3}"),
                &links,
            ));
        }
    }
    accepting.sort_by(|a, b| b.coverage.total_cmp(&a.coverage));
    let mut table_rows: Vec<Vec<String>> = accepting.into_iter().map(|l| l.cells).collect();
    table_rows.extend(review_all);
    ReportTable {
        file: "decisions".into(),
        title: format!(
            "Decisions: what is accepted with a precision guarantee at δ = {delta}, most first \
             (cutoffs by Learn-then-Test, {procedure}, a learned combination's on the items its \
             deployed fit did not see, 'held-out'; fixed rules by one exact binomial test each); \
             then the targets at which nothing is certified (review all)"
        ),
        header: header(
            key,
            &[
                "target precision",
                "cutoff",
                "coverage (items)",
                "realised precision",
                "p-value",
                "chosen on",
                "calibrator",
                "risk-coverage",
            ],
        ),
        rows: table_rows,
    }
}

/// The exact p-value of a chosen cutoff `t` on the items it was tested on.
fn tested_p_value(cutoff: &Cutoff, t: f64) -> f64 {
    let tested = Tally {
        cutoff: t,
        decided: cutoff.tested,
        mistakes: cutoff.tested_mistakes,
    };
    p_value(&tested, 1.0 - cutoff.target_precision)
}

/// A certified line's cells: key, target, cutoff, coverage, precision, p.
fn decision_cells(
    key: &[String],
    target: f64,
    cutoff_text: String,
    cutoff: &Cutoff,
    p: f64,
    links: &[String; 3],
) -> Vec<String> {
    let mut cells = key.to_vec();
    cells.extend([
        target.to_string(),
        cutoff_text,
        format!("{:.3} ({})", cutoff.coverage, cutoff.decided),
        cutoff
            .realised_precision
            .map_or("-".to_owned(), |p| format!("{p:.3}")),
        format!("{p:.4}"),
    ]);
    cells.extend(links.iter().cloned());
    cells
}

/// The one line of a cell or rule that certifies nothing at `targets`.
fn review_line(key: &[String], targets: &[String], p: String, links: &[String; 3]) -> Vec<String> {
    let mut cells = key.to_vec();
    cells.extend([
        targets.join(", "),
        "none: review all".to_owned(),
        "0".to_owned(),
        "-".to_owned(),
        p,
    ]);
    cells.extend(links.iter().cloned());
    cells
}

/// Where any cell or fixed rule accepts with its guarantee: per target, the
/// one that accepts most, in a sentence. Empty where nothing is accepted.
pub(super) fn accepted_note(rows: &[CellRow], rules: &[RuleRow]) -> String {
    let mut offers = Vec::new();
    for row in rows {
        for c in &row.report.cutoffs.accept {
            let (Some(t), Some(precision)) = (c.cutoff, c.realised_precision) else {
                continue;
            };
            offers.push(Accepted {
                target: c.target_precision,
                who: format!("{} (cutoff {t:.2})", row.key.join(" ")),
                decided: c.decided,
                items: row.report.cutoffs.items,
                held_out: row.report.cutoffs_on == "held-out",
                precision,
                p: tested_p_value(c, t),
            });
        }
    }
    for rule in rules {
        let (measure, at_least) = (&rule.rule.measure, rule.rule.at_least);
        for test in rule.tests.iter().filter(|t| t.certified) {
            offers.push(Accepted {
                target: test.target_precision,
                who: format!("{} ({measure} ≥ {at_least})", rule.key.join(" ")),
                decided: test.accepted,
                items: test.items,
                held_out: false,
                precision: test.realised_precision().unwrap_or_default(),
                p: test.p_value,
            });
        }
    }
    // Per target, the first of those that accept the largest share (a
    // learned combination is tested on its held-out items only).
    let mut best: Vec<Accepted> = Vec::new();
    for offer in offers {
        match best.iter_mut().find(|b| b.target == offer.target) {
            Some(b) if b.share() >= offer.share() => {}
            Some(b) => *b = offer,
            None => best.push(offer),
        }
    }
    if best.is_empty() {
        return String::new();
    }
    best.sort_by(|a, b| a.target.total_cmp(&b.target));
    let lines: Vec<String> = best
        .iter()
        .map(|a| {
            format!(
                "at precision {}, {} accepts {} of {}{} ({:.0}%; realised precision {:.3}, p = {:.4})",
                a.target,
                a.who,
                a.decided,
                a.items,
                if a.held_out { " held-out items" } else { "" },
                100.0 * a.share(),
                a.precision,
                a.p
            )
        })
        .collect();
    let delta = rows.first().map_or(0.1, |r| r.report.cutoffs.delta);
    format!(
        "**Accepted with a guarantee (δ = {delta}).** {}. Every other item goes to review; the \
         Decisions table lists each measure and rule.",
        capitalise(&lines.join("; "))
    )
}

/// One cell's or rule's acceptance at one target, for the leading note.
struct Accepted {
    target: f64,
    who: String,
    decided: usize,
    items: usize,
    precision: f64,
    p: f64,
    /// Tested on a learned combination's held-out items, not all of them.
    held_out: bool,
}

impl Accepted {
    fn share(&self) -> f64 {
        self.decided as f64 / self.items.max(1) as f64
    }
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().collect::<String>() + chars.as_str()
    })
}
