//! The last stage of `codecal run`: label each generation with the
//! thresholds, calibrate every language x model x measure x operating
//! point, and write the summarization seed's tables (Markdown, CSV, LaTeX)
//! and reliability diagrams.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::artifact::{create_dir, write_atomic};
use crate::calibrate::calibrator::LabelDefinition;
use crate::calibrate::{
    CalibrateOptions, CalibrationData, CalibrationReport, Evaluation, Method, calibrate,
};
use crate::confidence::agreement::SUMMARY_MEASURES;
use crate::pipeline::PipelineError;
use crate::pipeline::artifacts::{read_jsonl, stage_error, text_field};
use crate::pipeline::calibration::{
    CellFiles, CellRow, calibrate_options, decision_table, generator, metrics_table,
    sample_size_note, subgroup_rows, subgroup_table, tertiles,
};
use crate::pipeline::config::{RunConfig, enum_value};
use crate::pipeline::multicalibration::{
    ItemFacts, code_clusters, feature_columns, multicalibration_tables,
};
use crate::pipeline::run_report::{ReportParts, write_report};
use crate::pipeline::sampled::merge_agreement;
use crate::pipeline::sources::{SourceRow, sources_table, tokens_per_item};
use crate::pipeline::tables::{Named, header, with_ci, write_all};
use crate::report::run::{CellView, ItemText, ItemView, Section};
use crate::table::{Format, Table};
use crate::thresholds::file::{OperatingPointName, read_threshold};

/// The summarization seed's Table I columns, in its order, with the score
/// column each reads; InferSent has none (see [`INFERSENT`]).
const TABLE_ONE: [(&str, Option<&str>); 7] = [
    ("BERTScore-R", Some("bertscore_r")),
    ("BLEU-1", Some("bleu1")),
    ("InferSent-CS", None),
    ("ROUGE-1-P", Some("rouge1_p")),
    ("ROUGE-4-R", Some("rouge4_r")),
    ("ROUGE-W-R", Some("rouge_w_r")),
    ("SentenceBERT", Some("sbert_cosine")),
];

/// Why Table I's InferSent column is empty.
const INFERSENT: &str = "InferSent-CS is not available: its encoder and GloVe vectors are not \
    distributed through a package registry, so codecal cannot install them";

/// Whether a summary counts as correct: its score strictly above the
/// threshold, as the summarization seed's replication code labels it. The
/// thresholds themselves are chosen on ROC points read as score >= t (as
/// scikit-learn's `roc_curve`); the two differ only for a score exactly at
/// the threshold.
fn correct_at(score: f64, threshold: f64) -> bool {
    score > threshold
}

/// One generation with what calibration needs.
struct Item {
    /// Its position in the report data's item list.
    index: usize,
    id: String,
    language: String,
    repo: String,
    /// Measure name -> confidence, where the measure gave one.
    confidence: BTreeMap<String, f64>,
    /// Similarity metric name -> value.
    similarity: BTreeMap<String, f64>,
    /// Characters of the function's code and of the generated summary.
    code_chars: usize,
    summary_chars: usize,
    /// The function's code (for group features that parse it).
    code: String,
    /// Its code's embedding cluster, where the run asks for the feature.
    code_cluster: String,
}

/// A calibration result with where it belongs in the tables.
struct Cell {
    language: String,
    model: String,
    measure: String,
    reflective: bool,
    point: String,
    report: CalibrationReport,
    /// Generated tokens per item the measure needs.
    tokens_per_item: Option<f64>,
    view: CellView,
}

pub(crate) fn calibrate_and_report(
    config: &RunConfig,
    dir: &Path,
    labels: &[String],
) -> Result<(), PipelineError> {
    let options = calibrate_options(config)?;
    let mut points = Vec::new();
    for name in &config.scoring.operating_points {
        let point: OperatingPointName = enum_value("scoring.operating_points", name)?;
        let threshold = read_threshold(&config.scoring.thresholds, point)
            .map_err(stage_error)?
            .threshold;
        points.push((point.section().to_owned(), threshold));
    }
    let measures: Vec<(String, bool)> = config
        .calibration
        .confidence
        .iter()
        .map(|m| (m.clone(), false))
        .chain(
            config
                .generation
                .reflective
                .iter()
                .map(|m| (m.clone(), true)),
        )
        .chain(
            SUMMARY_MEASURES
                .iter()
                .filter(|_| config.generation.samples > 0)
                .map(|m| (m.to_string(), false)),
        )
        .collect();
    let metric = &config.scoring.metric;
    let raw_only = CalibrateOptions {
        method: Method::None,
        multicalibration: None,
        ..options.clone()
    };
    // Table I reads only Spearman's rho from its calibrations.
    let spearman_only = CalibrateOptions {
        smooth_ece: false,
        ..raw_only.clone()
    };
    let mut cells = Vec::new();
    let mut subgroup_cells = Vec::new();
    let mut spearman = Vec::new();
    let mut notes = Vec::new();
    let mut views = Vec::new();
    let template = config.prompt.template_text().map_err(stage_error)?;
    for label in labels {
        let mut rows = read_jsonl(&dir.join(format!("generations/{label}.jsonl")))?;
        merge_agreement(dir, label, &mut rows)?;
        let generator = generator(config, &rows, &template)?;
        let mut items = load_items(dir, label, &rows, views.len())?;
        let codes: Vec<&str> = items.iter().map(|i| i.code.as_str()).collect();
        let clusters = code_clusters(config, &codes)?;
        for (item, cluster) in items.iter_mut().zip(clusters) {
            item.code_cluster = cluster;
        }
        views.extend(item_views(label, &rows, &items, metric));
        write_labels(dir, label, &items, metric, &measures, &points)?;
        for language in items
            .iter()
            .map(|i| i.language.clone())
            .collect::<std::collections::BTreeSet<_>>()
        {
            let items: Vec<&Item> = items.iter().filter(|i| i.language == language).collect();
            let language_rows: Vec<&Value> = rows
                .iter()
                .filter(|row| text_field(row, "language") == language)
                .collect();
            for (measure, reflective) in &measures {
                let rows: Vec<&Item> = items
                    .iter()
                    .copied()
                    .filter(|i| {
                        i.confidence.contains_key(measure) && i.similarity.contains_key(metric)
                    })
                    .collect();
                if rows.is_empty() {
                    continue;
                }
                let data = |target: &str, threshold: f64| CalibrationData {
                    confidence: rows.iter().map(|i| i.confidence[measure]).collect(),
                    correct: rows
                        .iter()
                        .map(|i| correct_at(i.similarity[metric], threshold))
                        .collect(),
                    groups: Some(rows.iter().map(|i| i.repo.clone()).collect()),
                    target: Some(
                        rows.iter()
                            .map(|i| i.similarity.get(target).copied().unwrap_or(f64::NAN))
                            .collect(),
                    ),
                    features: feature_columns(
                        &config.calibration.group_features,
                        &rows
                            .iter()
                            .map(|i| ItemFacts {
                                language: &i.language,
                                repository: &i.repo,
                                code: &i.code,
                                code_chars: i.code_chars,
                                answer_chars: i.summary_chars,
                                code_cluster: &i.code_cluster,
                            })
                            .collect::<Vec<_>>(),
                    ),
                };
                for (point, threshold) in &points {
                    let data = data(metric, *threshold);
                    // Rescaling needs both classes in every training fold; where a
                    // threshold leaves too few of one, the raw numbers still stand.
                    let report = match calibrate(&data, &options) {
                        Ok(report) => report,
                        Err(e) => {
                            notes.push(format!(
                                "{language} {label} {measure} at {point}: not rescaled ({e})"
                            ));
                            calibrate(&data, &raw_only).map_err(stage_error)?
                        }
                    };
                    let files = CellFiles {
                        parts: vec![&language, label, measure, point],
                        measure,
                        label: LabelDefinition {
                            column: metric.clone(),
                            threshold: Some(*threshold),
                            thresholds_file: Some(config.scoring.thresholds.display().to_string()),
                            operating_point: Some(point.clone()),
                            metric: Some(metric.clone()),
                        },
                        generator: Some(generator.clone()),
                    };
                    let view = CellView::new(
                        &CELL_KEY,
                        vec![
                            language.clone(),
                            label.clone(),
                            measure.clone(),
                            point.clone(),
                        ],
                        files.calibration_dir(),
                        &report,
                        &data.confidence,
                        &data.correct,
                        &rows.iter().map(|i| i.index).collect::<Vec<_>>(),
                    );
                    files.write(dir, &report)?;
                    if point == &points[0].0 {
                        let lengths = |f: fn(&Item) -> usize| -> Vec<usize> {
                            rows.iter().map(|i| f(i)).collect()
                        };
                        let key = vec![language.clone(), label.clone(), measure.clone()];
                        subgroup_cells.extend(subgroup_rows(
                            &key,
                            &[
                                ("code length", tertiles(&lengths(|i| i.code_chars), "chars")),
                                (
                                    "summary length",
                                    tertiles(&lengths(|i| i.summary_chars), "chars"),
                                ),
                            ],
                            &[("repository", rows.iter().map(|i| i.repo.clone()).collect())],
                            &data,
                            &report,
                            &options,
                        ));
                    }
                    cells.push(Cell {
                        tokens_per_item: tokens_per_item(&language_rows, measure),
                        language: language.clone(),
                        model: label.clone(),
                        measure: measure.clone(),
                        reflective: *reflective,
                        point: point.clone(),
                        report,
                        view,
                    });
                }
                let mut rhos = vec![language.clone(), label.clone(), measure.clone()];
                for (_, column) in TABLE_ONE {
                    let Some(target) = column else {
                        rhos.push("n/a".into());
                        continue;
                    };
                    let report = calibrate(&data(target, points[0].1), &spearman_only)
                        .map_err(stage_error)?;
                    rhos.push(with_ci(
                        report.raw.metrics.spearman,
                        &report.raw,
                        "spearman",
                    ));
                }
                spearman.push(rhos);
            }
        }
    }
    write_tables(config, dir, cells, spearman, subgroup_cells, notes, views)
}

/// The names of a summarization cell's key.
const CELL_KEY: [&str; 4] = ["language", "model", "measure", "operating point"];

/// Each generation as the report shows it: code, the developer's comment,
/// the model's summary and its exemplars, with the labelling score.
fn item_views(label: &str, rows: &[Value], items: &[Item], metric: &str) -> Vec<ItemView> {
    rows.iter()
        .zip(items)
        .map(|(row, item)| {
            let text = |label: &str, key: &str, code: bool| ItemText {
                label: label.to_owned(),
                text: text_field(row, key),
                code,
            };
            let exemplars: Vec<String> = row["exemplars"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e["id"].as_str().map(str::to_owned))
                .collect();
            ItemView {
                id: item.id.clone(),
                model: label.to_owned(),
                group: item.repo.clone(),
                texts: vec![
                    text("code", "code", true),
                    text("developer's comment (reference)", "reference", false),
                    text("generated summary", "text", false),
                    ItemText {
                        label: "exemplars".into(),
                        text: exemplars.join(", "),
                        code: false,
                    },
                ],
                numbers: item
                    .similarity
                    .get(metric)
                    .map(|v| vec![(metric.to_owned(), *v)])
                    .unwrap_or_default(),
                labels: Vec::new(),
                headline: text_field(row, "text").trim().to_owned(),
            }
        })
        .collect()
}

fn load_items(
    dir: &Path,
    label: &str,
    rows: &[Value],
    first_index: usize,
) -> Result<Vec<Item>, PipelineError> {
    let scores_path = dir.join(format!("scores/{label}.csv"));
    let table = Table::read(&scores_path, Some(Format::Csv)).map_err(stage_error)?;
    let ids = table.column("id").map_err(stage_error)?;
    let mut similarity: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    let names: Vec<String> = table
        .column_names()
        .iter()
        .filter(|c| c.as_str() != "id")
        .cloned()
        .collect();
    for row in 0..table.len() {
        let id = ids.text(row).map_err(stage_error)?.to_owned();
        let mut values = BTreeMap::new();
        for name in &names {
            if let Ok(value) = table.column(name).and_then(|c| c.number(row)) {
                values.insert(name.clone(), value);
            }
        }
        similarity.insert(id, values);
    }
    Ok(rows
        .iter()
        .enumerate()
        .map(|(position, row)| {
            let id = text_field(row, "id");
            let mut confidence = BTreeMap::new();
            for (name, value) in row["confidence"].as_object().into_iter().flatten() {
                if let Some(v) = value.as_f64() {
                    confidence.insert(name.clone(), v);
                }
            }
            for (name, value) in row["reflective"].as_object().into_iter().flatten() {
                if let Some(v) = value.get("confidence").and_then(Value::as_f64) {
                    confidence.insert(name.clone(), v);
                }
            }
            Item {
                index: first_index + position,
                code_chars: row["code"].as_str().map_or(0, |c| c.chars().count()),
                code: row["code"].as_str().unwrap_or_default().to_owned(),
                code_cluster: String::new(),
                summary_chars: row["text"].as_str().map_or(0, |t| t.trim().chars().count()),
                similarity: similarity.get(&id).cloned().unwrap_or_default(),
                language: text_field(row, "language"),
                repo: text_field(row, "repo"),
                id,
                confidence,
            }
        })
        .collect())
}

fn write_labels(
    dir: &Path,
    label: &str,
    items: &[Item],
    metric: &str,
    measures: &[(String, bool)],
    points: &[(String, f64)],
) -> Result<(), PipelineError> {
    let mut header = vec![
        "id".to_owned(),
        "language".into(),
        "repo".into(),
        metric.to_owned(),
    ];
    header.extend(measures.iter().map(|(m, _)| m.clone()));
    header.extend(points.iter().map(|(p, _)| format!("correct_{p}")));
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(&header).map_err(stage_error)?;
    for item in items {
        let number = |v: Option<&f64>| v.map(|v| v.to_string()).unwrap_or_default();
        let value = item.similarity.get(metric);
        let mut record = vec![
            item.id.clone(),
            item.language.clone(),
            item.repo.clone(),
            number(value),
        ];
        record.extend(measures.iter().map(|(m, _)| number(item.confidence.get(m))));
        record.extend(points.iter().map(|(_, t)| match value {
            Some(v) => u8::from(correct_at(*v, *t)).to_string(),
            None => String::new(),
        }));
        writer.write_record(&record).map_err(stage_error)?;
    }
    let bytes = writer.into_inner().map_err(stage_error)?;
    create_dir(&dir.join("labels"))?;
    write_atomic(&dir.join(format!("labels/{label}.csv")), &bytes)?;
    Ok(())
}

/// Success rate, ECE (‡ under bucket collapse), Brier and skill of one evaluation.
fn calibration_columns(evaluation: &Evaluation, collapsed: bool) -> Vec<String> {
    let m = &evaluation.metrics;
    let mark = if collapsed { " ‡" } else { "" };
    vec![
        m.n.to_string(),
        with_ci(Some(m.base_rate), evaluation, "base_rate"),
        with_ci(Some(m.ece), evaluation, "ece") + mark,
        with_ci(Some(m.brier), evaluation, "brier"),
        with_ci(m.skill_score, evaluation, "skill_score"),
    ]
}

const CALIBRATION_HEADER: [&str; 5] = ["n", "success rate", "ECE", "Brier", "skill score"];

fn write_tables(
    config: &RunConfig,
    dir: &Path,
    cells: Vec<Cell>,
    spearman: Vec<Vec<String>>,
    subgroup_cells: Vec<Vec<String>>,
    notes: Vec<String>,
    items: Vec<ItemView>,
) -> Result<(), PipelineError> {
    let cells = &cells[..];
    let metric = &config.scoring.metric;
    let first_point = config
        .scoring
        .operating_points
        .first()
        .cloned()
        .unwrap_or_default();
    let key = ["language", "model", "measure"];
    let one_columns: Vec<&str> = TABLE_ONE.iter().map(|(name, _)| *name).collect();
    let mut tables = vec![Named {
        file: "table1",
        title: format!(
            "Table I: Spearman's rho between confidence and each similarity metric (95% CI); \
             {INFERSENT}"
        ),
        header: header(&key, &one_columns),
        rows: spearman,
    }];
    tables.push(table_two(config));
    let at = |point: &str, reflective: bool| -> Vec<&Cell> {
        cells
            .iter()
            .filter(|c| c.point == point && c.reflective == reflective)
            .collect()
    };
    // Bucket collapse is a property of the rescaled confidences only.
    let row = |c: &Cell, evaluation: &Evaluation, collapsed: bool| {
        let mut r = vec![c.language.clone(), c.model.clone(), c.measure.clone()];
        r.extend(calibration_columns(evaluation, collapsed));
        r
    };
    tables.push(Named {
        file: "table3",
        title: format!(
            "Table III: raw calibration at the {first_point} threshold{}",
            if config.prompt.asap {
                ", ASAP + BM25 few-shot prompts"
            } else {
                ""
            }
        ),
        header: header(&key, &CALIBRATION_HEADER),
        rows: at(&first_point, false)
            .into_iter()
            .map(|c| row(c, &c.report.raw, false))
            .collect(),
    });
    let rescaled = |c: &Cell| {
        c.report
            .rescaled
            .as_ref()
            .map(|e| row(c, e, c.report.bucket_collapse))
    };
    // With ASAP's prompts the rescaled table is the paper's Table V.
    let (file, name) = if config.prompt.asap {
        ("table5", "Table V (ASAP + BM25 few-shot prompts)")
    } else {
        ("table4", "Table IV")
    };
    tables.push(Named {
        file,
        title: format!(
            "{name}: {}-rescaled calibration at the {first_point} threshold, {}-fold {} cross-validation",
            config.calibration.method, config.calibration.folds, config.calibration.cv
        ),
        header: header(&key, &CALIBRATION_HEADER),
        rows: at(&first_point, false).into_iter().filter_map(rescaled).collect(),
    });
    let others: Vec<&String> = config
        .scoring
        .operating_points
        .iter()
        .filter(|p| **p != first_point)
        .collect();
    tables.push(table_six(cells, &first_point, &others));
    let mut seven = Vec::new();
    for c in at(&first_point, true) {
        let mut raw = row(c, &c.report.raw, false);
        raw.insert(3, "raw".into());
        seven.push(raw);
        if let Some(mut r) = rescaled(c) {
            r.insert(3, "rescaled".into());
            seven.push(r);
        }
    }
    tables.push(Named {
        file: "table7",
        title: format!(
            "Table VII: reflective measures at the {first_point} threshold, raw and rescaled"
        ),
        header: header(
            &["language", "model", "measure", "confidence"],
            &CALIBRATION_HEADER,
        ),
        rows: seven,
    });
    let decision_rows: Vec<CellRow> = cells
        .iter()
        .map(|c| {
            let parts = vec![c.language.as_str(), &c.model, &c.measure, &c.point];
            let files = CellFiles {
                parts,
                measure: &c.measure,
                label: LabelDefinition::default(),
                generator: None,
            };
            CellRow {
                key: vec![
                    c.language.clone(),
                    c.model.clone(),
                    c.measure.clone(),
                    c.point.clone(),
                ],
                report: &c.report,
                calibrator: files.calibrator_file(),
                figure: format!("{}/risk_coverage.svg", files.calibration_dir()),
            }
        })
        .collect();
    let cell_key = ["language", "model", "measure", "operating point"];
    let source_rows: Vec<SourceRow> = cells
        .iter()
        .filter(|c| c.point == first_point)
        .map(|c| SourceRow {
            key: vec![
                c.language.clone(),
                c.model.clone(),
                c.measure.clone(),
                c.point.clone(),
            ],
            measure: &c.measure,
            report: &c.report,
            tokens_per_item: c.tokens_per_item,
        })
        .collect();
    tables.push(sources_table(&cell_key, &source_rows));
    tables.push(metrics_table(&cell_key, &decision_rows));
    tables.push(subgroup_table(
        &["language", "model", "measure"],
        subgroup_cells,
    ));
    tables.push(decision_table(&cell_key, &decision_rows));
    tables.extend(multicalibration_tables(&cell_key, &decision_rows));
    let intro = format!(
        "Correct means {metric} above the threshold of `{}`. Intervals are 95% percentile \
         bootstrap ({} resamples) over whole repositories, never single functions. ‡ marks bucket collapse (rescaled skill score below 0.05: \
         the rescaled ECE says little).\n\n{}",
        config.scoring.thresholds.display(),
        config.calibration.bootstrap,
        sample_size_note(&decision_rows)
    );
    let tables = write_all(dir, &tables)?;
    // The metric's ROC depends on the human ratings, not on this run: the
    // command that chose the thresholds draws it.
    let roc = Section {
        heading: format!("Fig. 3: ROC of {metric} against the human ratings"),
        body: format!(
            "Drawn (roc.svg, roc.png) by the command that made the thresholds file, run from \
             the repository root: {}\n\n",
            thresholds_value(config, "command ")
        ),
    };
    let mut diagrams = String::new();
    for c in cells {
        let path = format!("{}/reliability.svg", c.view.figures);
        diagrams += &format!(
            "- {} {} {} at {}: [{path}]({path})\n",
            c.language, c.model, c.measure, c.point
        );
    }
    let parts = ReportParts {
        intro,
        data: corpus_files(config),
        tables,
        notes,
        sections: vec![
            roc,
            Section {
                heading: "Reliability diagrams".into(),
                body: diagrams,
            },
        ],
        items,
        cells: cells.iter().map(|c| c.view.clone()).collect(),
    };
    write_report(config, dir, parts)
}

/// What the run's header names as its data: the CodeXGLUE files, or the
/// mined source and its directory.
fn corpus_files(config: &RunConfig) -> Vec<String> {
    let corpus = &config.corpus;
    match corpus.source.as_str() {
        "codexglue" => corpus
            .paths
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        source => {
            let dir = corpus.dir.as_ref().map(|d| d.display().to_string());
            vec![
                format!("{source} {}", dir.unwrap_or_default())
                    .trim_end()
                    .to_owned(),
            ]
        }
    }
}

/// Table VI as the summarization seed lays it out: per language, model and
/// measure, the rescaled success rate, Brier, ECE and skill score, each
/// given at every other operating point side by side (its High P | High R).
fn table_six(cells: &[Cell], first_point: &str, others: &[&String]) -> Named {
    let metrics = ["success rate", "Brier", "ECE", "skill score"];
    let mut columns = Vec::new();
    for metric in metrics {
        for point in others {
            columns.push(format!("{metric} ({point})"));
        }
    }
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut rows = Vec::new();
    for base in cells
        .iter()
        .filter(|c| c.point == first_point && !c.reflective)
    {
        let at = |point: &str| {
            cells.iter().find(|c| {
                c.point == point
                    && c.language == base.language
                    && c.model == base.model
                    && c.measure == base.measure
                    && !c.reflective
            })
        };
        let mut row = vec![
            base.language.clone(),
            base.model.clone(),
            base.measure.clone(),
        ];
        // calibration_columns: n, success rate, ECE, Brier, skill score.
        for index in [1, 3, 2, 4] {
            for point in others {
                let value = at(point).and_then(|c| {
                    let rescaled = c.report.rescaled.as_ref()?;
                    Some(calibration_columns(rescaled, c.report.bucket_collapse)[index].clone())
                });
                row.push(value.unwrap_or_else(|| "-".into()));
            }
        }
        rows.push(row);
    }
    Named {
        file: "table6",
        title: "Table VI: rescaled calibration at the other operating points, each metric \
                side by side per threshold as the seed lays it out"
            .into(),
        header: header(&["language", "model", "measure"], &columns),
        rows,
    }
}

/// The raw TOML value of a top-level `key` of the thresholds file, or "-".
fn thresholds_value(config: &RunConfig, key: &str) -> String {
    let text = std::fs::read_to_string(&config.scoring.thresholds).unwrap_or_default();
    text.lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix(key)
                .and_then(|r| r.trim_start().strip_prefix('='))
        })
        .map(|v| v.trim().to_owned())
        .unwrap_or_else(|| "-".into())
}

/// Table II: the AUC of the labelling metric against human ratings, as its thresholds file records it.
fn table_two(config: &RunConfig) -> Named {
    let value = |key: &str| thresholds_value(config, key);
    Named {
        file: "table2",
        title: "Table II: AUC of the similarity metric against human ratings".into(),
        header: header(&["metric", "AUC", "95% CI", "thresholds file"], &[]),
        rows: vec![vec![
            config.scoring.metric.clone(),
            value("auc "),
            value("auc_ci"),
            config.scoring.thresholds.display().to_string(),
        ]],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_scored_exactly_at_the_threshold_is_not_correct() {
        // The summarization seed's replication code labels a summary correct
        // when its score is strictly above the threshold.
        assert!(!correct_at(0.5, 0.5));
        assert!(correct_at(0.5 + 1e-12, 0.5));
        assert!(!correct_at(0.4, 0.5));
    }

    #[test]
    fn table_one_has_the_seeds_columns_in_its_order() {
        // The summarization seed's Table I: BERTScore(-R), BLEU-1,
        // InferSent-CS, ROUGE-1-P, ROUGE-4-R, ROUGE-W-R, SentenceBERT.
        let names: Vec<&str> = TABLE_ONE.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "BERTScore-R",
                "BLEU-1",
                "InferSent-CS",
                "ROUGE-1-P",
                "ROUGE-4-R",
                "ROUGE-W-R",
                "SentenceBERT"
            ]
        );
        assert_eq!(TABLE_ONE[2].1, None);
    }
}
