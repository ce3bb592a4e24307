//! The Turbulence paper's own tables over every model's answers: CorrSc per
//! question (Definition 1) and its class (section IV-B), questions per class
//! (Figure 6) and per CorrSc bin (Figure 4), Table I (mean CorrSc), Table II
//! (answers per outcome) and the consistent failures' parameters.

use std::collections::BTreeMap;

use super::{
    Answer, HISTOGRAM_BINS, by_instance, by_question, class, corrsc, every_round, histogram_bin,
    list,
};
use crate::report::run::ReportTable;
use crate::report::table::header;
use crate::task::turbulence::TABLE_II;

/// The paper's tables for every model's answers.
pub(in crate::pipeline::tasks) fn paper_tables(
    models: &[(String, Vec<Answer>)],
) -> Vec<ReportTable> {
    let mut rows = PaperRows::default();
    for (model, answers) in models {
        rows.add_model(model, answers);
    }
    rows.tables()
}

/// The rows of the paper's tables, a model at a time.
#[derive(Default)]
struct PaperRows {
    corrsc: Vec<Vec<String>>,
    histogram: Vec<Vec<String>>,
    classes: Vec<Vec<String>>,
    table1: Vec<Vec<String>>,
    table2: Vec<Vec<String>>,
    discontinuities: Vec<Vec<String>>,
}

const CLASSES: [&str; 4] = [
    "perfect success",
    "perfect failure",
    "consistent failure",
    "random failure",
];

impl PaperRows {
    fn add_model(&mut self, model: &str, answers: &[Answer]) {
        let questions = by_question(answers);
        let mut histogram = [0usize; 12];
        let mut classes: BTreeMap<&str, usize> = BTreeMap::new();
        for (question, of_question) in &questions {
            let score = corrsc(of_question);
            let class = class(of_question);
            histogram[histogram_bin(score)] += 1;
            *classes.entry(class).or_default() += 1;
            self.corrsc.push(vec![
                model.to_owned(),
                format!("Q{question}"),
                by_instance(of_question).len().to_string(),
                of_question.len().to_string(),
                format!("{score:.3}"),
                class.to_owned(),
            ]);
            if class == "consistent failure" {
                self.discontinuities
                    .push(discontinuity_row(model, *question, of_question));
            }
        }
        let mut row = vec![model.to_owned()];
        row.extend(histogram.iter().map(usize::to_string));
        self.histogram.push(row);
        let mut row = vec![model.to_owned()];
        for name in CLASSES {
            row.push(classes.get(name).copied().unwrap_or(0).to_string());
        }
        self.classes.push(row);
        self.table1
            .push(table1_row(model, answers, questions.len()));
        self.table2.push(table2_row(model, answers));
    }

    fn tables(self) -> Vec<ReportTable> {
        let PaperRows {
            corrsc: corrsc_rows,
            histogram: histogram_rows,
            classes: classes_rows,
            table1,
            table2,
            discontinuities,
        } = self;
        let mut table2_header = vec!["model"];
        table2_header.extend(TABLE_II.iter().map(|(_, name)| *name));
        table2_header.push("Unavailable");
        let mut histogram_header = vec!["model"];
        histogram_header.extend(HISTOGRAM_BINS);
        vec![
            ReportTable {
                file: "turbulence_corrsc".into(),
                title: "Turbulence: CorrSc per question (Definition 1: correct answers / (M x N)) \
                    and its class (section IV-B)"
                    .into(),
                header: header(
                    &[
                        "model",
                        "question",
                        "instances",
                        "answers",
                        "CorrSc",
                        "class",
                    ],
                    &[],
                ),
                rows: corrsc_rows,
            },
            ReportTable {
                file: "turbulence_classes".into(),
                title: "Turbulence: questions per class (the paper's Figure 6)".into(),
                header: header(&["model"], &CLASSES),
                rows: classes_rows,
            },
            ReportTable {
                file: "turbulence_histogram".into(),
                title: "Turbulence: questions per CorrSc bin (the paper's Figure 4)".into(),
                header: header(&histogram_header, &[]),
                rows: histogram_rows,
            },
            ReportTable {
                file: "turbulence_table1".into(),
                title: "Turbulence Table I: mean CorrSc ± standard error over all answers \
                    (overall only: the paper names no question's difficulty)"
                    .into(),
                header: header(&["model", "questions", "answers", "Overall"], &[]),
                rows: table1,
            },
            ReportTable {
                file: "turbulence_table2".into(),
                title: "Turbulence Table II: answers per outcome (the first failing stage); \
                    codecal's own oracles, not the upstream fixed tests"
                    .into(),
                header: header(&table2_header, &[]),
                rows: table2,
            },
            ReportTable {
                file: "turbulence_discontinuity".into(),
                title: "Turbulence: consistent failures, the parameters failed in every round \
                    beside those solved in every round, and one failing answer"
                    .into(),
                header: header(
                    &[
                        "model",
                        "question",
                        "failed every round",
                        "their parameters",
                        "solved every round",
                        "their parameters",
                        "a failing answer (outcome)",
                    ],
                    &[],
                ),
                rows: discontinuities,
            },
        ]
    }
}

/// A consistent failure's row: the parameters failed in every round beside
/// those solved in every round, and one failing answer.
fn discontinuity_row(model: &str, question: u32, of_question: &[&Answer]) -> Vec<String> {
    let failed = every_round(of_question, false);
    let solved = every_round(of_question, true);
    vec![
        model.to_owned(),
        format!("Q{question}"),
        failed.len().to_string(),
        list(&failed, 5),
        solved.len().to_string(),
        list(&solved, 5),
        format!("{} ({})", failed[0].id, failed[0].reason),
    ]
}

fn table1_row(model: &str, answers: &[Answer], questions: usize) -> Vec<String> {
    let n = answers.len();
    let mean = answers.iter().filter(|a| a.correct).count() as f64 / n.max(1) as f64;
    // The standard error of the mean of 0/1 outcomes, with the sample
    // standard deviation.
    let se = if n > 1 {
        (mean * (1.0 - mean) * n as f64 / (n as f64 - 1.0)).sqrt() / (n as f64).sqrt()
    } else {
        0.0
    };
    vec![
        model.to_owned(),
        questions.to_string(),
        n.to_string(),
        format!("{mean:.3} ± {se:.3}"),
    ]
}

fn table2_row(model: &str, answers: &[Answer]) -> Vec<String> {
    let count = |name: &str| answers.iter().filter(|a| a.reason == name).count();
    let mut row = vec![model.to_owned()];
    for (reason, _) in TABLE_II {
        let name = serde_json::to_value(reason).unwrap_or_default();
        row.push(count(name.as_str().unwrap_or_default()).to_string());
    }
    row.push(count("unavailable").to_string());
    row
}
