//! The Turbulence paper's own tables (seed `002_c9cbfe9d1661ed8e.txt`) over
//! every model's answers: CorrSc per question (Definition 1) and its class
//! (perfect success, perfect failure, consistent failure, random failure;
//! section IV-B), questions per class (Figure 6) and per CorrSc bin (Figure
//! 4, also drawn), Table I (mean CorrSc ± standard error over all answers),
//! Table II (answers per outcome) and the consistent failures' parameters.
//! Built from plain `Answer`s; not how answers are judged (`task::turbulence`)
//! or calibrated (`pipeline`).

use std::collections::BTreeMap;

use crate::report::run::ReportTable;
use crate::report::table::header;
use crate::task::Reason;
use crate::task::turbulence::TABLE_II;

/// One answer with where it belongs: its id, question and instance (the
/// neighbourhood), the instance's parameters, and its outcome.
#[derive(Clone, Debug)]
pub struct Answer {
    pub id: String,
    pub question: u32,
    pub instance: u32,
    pub params: String,
    pub correct: bool,
    pub reason: Reason,
}

/// The paper's classes of a question's neighbourhood.
fn class(answers: &[&Answer]) -> &'static str {
    let correct = answers.iter().filter(|a| a.correct).count();
    if correct == answers.len() {
        return "perfect success";
    }
    if correct == 0 {
        return "perfect failure";
    }
    if !every_round(answers, false).is_empty() {
        "consistent failure"
    } else {
        "random failure"
    }
}

/// The first answer of each instance whose every round was `correct` (true:
/// solved every round; false: failed every round).
fn every_round<'a>(answers: &[&'a Answer], correct: bool) -> Vec<&'a Answer> {
    by_instance(answers)
        .into_values()
        .filter(|rounds| rounds.iter().all(|a| a.correct == correct))
        .map(|rounds| rounds[0])
        .collect()
}

fn by_instance<'a>(answers: &[&'a Answer]) -> BTreeMap<u32, Vec<&'a Answer>> {
    let mut map: BTreeMap<u32, Vec<&Answer>> = BTreeMap::new();
    for answer in answers {
        map.entry(answer.instance).or_default().push(answer);
    }
    map
}

pub fn by_question(answers: &[Answer]) -> BTreeMap<u32, Vec<&Answer>> {
    let mut map: BTreeMap<u32, Vec<&Answer>> = BTreeMap::new();
    for answer in answers {
        map.entry(answer.question).or_default().push(answer);
    }
    map
}

fn corrsc(answers: &[&Answer]) -> f64 {
    answers.iter().filter(|a| a.correct).count() as f64 / answers.len().max(1) as f64
}

/// Histogram bin of a CorrSc: "0", ten 0.1-wide bins, "1" (Figure 4).
fn histogram_bin(score: f64) -> usize {
    if score <= 0.0 {
        0
    } else if score >= 1.0 {
        11
    } else {
        1 + ((score * 10.0).floor() as usize).min(9)
    }
}

const HISTOGRAM_BINS: [&str; 12] = [
    "0",
    "(0, 0.1)",
    "[0.1, 0.2)",
    "[0.2, 0.3)",
    "[0.3, 0.4)",
    "[0.4, 0.5)",
    "[0.5, 0.6)",
    "[0.6, 0.7)",
    "[0.7, 0.8)",
    "[0.8, 0.9)",
    "[0.9, 1)",
    "1",
];

fn list(answers: &[&Answer], most: usize) -> String {
    let shown: Vec<&str> = answers
        .iter()
        .take(most)
        .map(|a| a.params.as_str())
        .collect();
    let more = answers.len().saturating_sub(most);
    let mut text = shown.join(" ");
    if more > 0 {
        text += &format!(" (+{more} more)");
    }
    text
}

/// Figure 4's histogram as an SVG: questions per CorrSc bin, a bar per model.
pub fn histogram_svg(models: &[(String, Vec<Answer>)]) -> String {
    let series: Vec<(String, Vec<usize>)> = models
        .iter()
        .map(|(model, answers)| {
            let mut counts = vec![0; HISTOGRAM_BINS.len()];
            for of_question in by_question(answers).values() {
                counts[histogram_bin(corrsc(of_question))] += 1;
            }
            (model.clone(), counts)
        })
        .collect();
    crate::report::bar_chart_svg(
        "Questions per CorrSc bin (Turbulence, Figure 4)",
        &HISTOGRAM_BINS,
        &series,
    )
}

/// The paper's tables for every model's answers.
pub fn paper_tables(models: &[(String, Vec<Answer>)]) -> Vec<ReportTable> {
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
    let count = |reason: Reason| answers.iter().filter(|a| a.reason == reason).count();
    let mut row = vec![model.to_owned()];
    for (reason, _) in TABLE_II {
        row.push(count(reason).to_string());
    }
    row.push(count(Reason::Unavailable).to_string());
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    fn answer(question: u32, instance: u32, correct: bool) -> Answer {
        Answer {
            id: format!("Q{question}/{instance}/1"),
            question,
            instance,
            params: format!("[{instance}]"),
            correct,
            reason: if correct {
                Reason::Passed
            } else {
                Reason::FuzzingFailure
            },
        }
    }

    #[test]
    fn classes_follow_section_iv_b() {
        let all = |pattern: &[(u32, bool)]| -> Vec<Answer> {
            pattern.iter().map(|&(i, c)| answer(1, i, c)).collect()
        };
        let classify = |answers: Vec<Answer>| {
            let refs: Vec<&Answer> = answers.iter().collect();
            class(&refs)
        };
        assert_eq!(
            classify(all(&[(1, true), (1, true), (2, true)])),
            "perfect success"
        );
        assert_eq!(classify(all(&[(1, false), (2, false)])), "perfect failure");
        // Instance 2 fails in both rounds while instance 1 is solved.
        assert_eq!(
            classify(all(&[(1, true), (1, true), (2, false), (2, false)])),
            "consistent failure"
        );
        // Every instance solved at least once.
        assert_eq!(
            classify(all(&[(1, true), (1, false), (2, false), (2, true)])),
            "random failure"
        );
    }

    #[test]
    fn histogram_keeps_0_and_1_apart() {
        assert_eq!(histogram_bin(0.0), 0);
        assert_eq!(histogram_bin(0.05), 1);
        assert_eq!(histogram_bin(0.1), 2);
        assert_eq!(histogram_bin(0.999), 10);
        assert_eq!(histogram_bin(1.0), 11);
    }
}
