//! "Open the Oyster"'s table (seed 003): the unbinned ECE (Eq. 5), Brier
//! and Performance Score (Eqs. 7-8) of each measure, raw and rescaled with
//! Platt on p (Eq. 4). Where the paper's three strategies (intrinsic,
//! reassess, reflective) ran, they get the first table, judged on one
//! answer per question, and every other measure a second one.

use super::MeasureResult;
use crate::calibrate::Evaluation;
use crate::report::run::ReportTable;
use crate::report::table::{header, with_ci};

/// The measures the strategies' confidences are named by.
const STRATEGY_PREFIX: &str = "oyster-";

/// The Oyster table, and where the strategies ran the other measures' table
/// (`oyster_main`). `cells` hold each measure rescaled with Eq. 4.
pub fn oyster_tables(cells: &[MeasureResult]) -> Vec<ReportTable> {
    let is_strategy = |c: &&MeasureResult| c.measure.starts_with(STRATEGY_PREFIX);
    let strategies = cells.iter().any(|c| is_strategy(&c));
    let (strategy_cells, main_cells): (Vec<&MeasureResult>, Vec<&MeasureResult>) =
        cells.iter().partition(|c| !strategies || is_strategy(c));
    let head = header(&["model", "measure", "confidence"], &["ECE", "Brier", "PS"]);
    let mut tables = vec![ReportTable {
        file: "oyster".into(),
        title: "Open the Oyster: ECE (Eq. 5), Brier and Performance Score (Eqs. 7-8), \
                raw and rescaled with Platt on p (Eq. 4, plain maximum likelihood, no \
                penalty); in every strategy a reply with no confidence counts as 0 \
                (Table 8 counts them)"
            .into(),
        header: head.clone(),
        rows: oyster_rows(&strategy_cells),
    }];
    // Without the strategies every measure is in the first table.
    if !main_cells.is_empty() {
        tables.push(ReportTable {
            file: "oyster_main".into(),
            title: "Open the Oyster's measures (Eqs. 4, 5, 7-8) for the other measures, on \
                    the main answer: the table above judges the three strategies on the \
                    intrinsic reply's answer, one answer per question (seed 003 §3)"
                .into(),
            header: head,
            rows: oyster_rows(&main_cells),
        });
    }
    tables
}

/// Each cell's rows: raw, and rescaled with Eq. 4 where it could be.
fn oyster_rows(cells: &[&MeasureResult]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for c in cells {
        let key =
            |confidence: &str| vec![c.model.to_owned(), c.measure.to_owned(), confidence.into()];
        let mut raw = key("raw");
        raw.extend(oyster_columns(&c.report.raw));
        rows.push(raw);
        if let Some(rescaled) = &c.report.rescaled {
            let mut row = key("platt-p");
            row.extend(oyster_columns(rescaled));
            rows.push(row);
        }
    }
    rows
}

fn oyster_columns(evaluation: &Evaluation) -> Vec<String> {
    let m = &evaluation.metrics;
    vec![
        with_ci(Some(m.oyster_ece), evaluation, "oyster_ece"),
        with_ci(Some(m.brier), evaluation, "brier"),
        with_ci(m.performance_score, evaluation, "performance_score"),
    ]
}
