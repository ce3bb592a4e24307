//! The calibration loop of a summarization run: labels each generation
//! with the thresholds, calibrates every language x model x measure x
//! operating point (writing each cell's calibration files), and gathers the
//! cells, Table I's correlations and the item views for the report.
//! The tables themselves are built in `report`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::artifact::{create_dir, write_atomic};
use crate::calibrate::calibrator::{Generator, LabelDefinition};
use crate::calibrate::multical::FeatureColumn;
use crate::calibrate::{CalibrateOptions, CalibrationData, CalibrationReport, Method, calibrate};
use crate::confidence::agreement::SUMMARY_MEASURES;
use crate::generate::row::GenerationRow;
use crate::pipeline::PipelineError;
use crate::pipeline::artifacts::{read_jsonl, stage_error};
use crate::pipeline::calibration::{subgroup_rows, tertiles};
use crate::pipeline::cells::{
    CellFiles, CellKey, calibrate_options, calibrate_or_raw, generator, write_cell,
};
use crate::pipeline::config::RunConfig;
use crate::pipeline::multicalibration::{ItemFacts, code_clusters, feature_columns};
use crate::pipeline::sampled::merge_agreement;
use crate::pipeline::sources::tokens_per_item;
use crate::report::run::{CellView, ItemText, ItemView};
use crate::report::table::grid_csv;
use crate::report::table::with_ci;
use crate::table::{Format, Table};
use crate::thresholds::file::read_threshold;

/// The summarization seed's Table I columns, in its order, with the score
/// column each reads; InferSent has none (see [`INFERSENT`]).
pub(super) const TABLE_ONE: [(&str, Option<&str>); 7] = [
    ("BERTScore-R", Some("bertscore_r")),
    ("BLEU-1", Some("bleu1")),
    ("InferSent-CS", None),
    ("ROUGE-1-P", Some("rouge1_p")),
    ("ROUGE-4-R", Some("rouge4_r")),
    ("ROUGE-W-R", Some("rouge_w_r")),
    ("SentenceBERT", Some("sbert_cosine")),
];

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
pub(super) struct Cell {
    pub(super) language: String,
    pub(super) model: String,
    pub(super) measure: String,
    pub(super) reflective: bool,
    pub(super) point: String,
    pub(super) report: CalibrationReport,
    /// Generated tokens per item the measure needs.
    pub(super) tokens_per_item: Option<f64>,
    pub(super) view: CellView,
}

/// Labels every model's generations, calibrates every language x model x
/// measure x operating point (each cell's files written), and gathers what
/// the tables need.
pub(super) fn gather(
    config: &RunConfig,
    dir: &Path,
    labels: &[String],
) -> Result<Gathered, PipelineError> {
    let options = calibrate_options(config)?;
    // Table I reads only Spearman's rho from its calibrations: raw, unsmoothed.
    let spearman_only = CalibrateOptions {
        method: Method::None,
        multicalibration: None,
        smooth_ece: false,
        ..options.clone()
    };
    let run = RunCells {
        config,
        dir,
        metric: &config.scoring.metric,
        points: operating_points(config)?,
        measures: summary_measures(config),
        options,
        spearman_only,
    };
    let mut gathered = Gathered::default();
    let template = config.prompt.template_text().map_err(stage_error)?;
    for label in labels {
        let mut rows: Vec<GenerationRow> =
            read_jsonl(&dir.join(format!("generations/{label}.jsonl")))?;
        merge_agreement(dir, label, &mut rows)?;
        let generator = generator(config, &rows, &template)?;
        let mut items = load_items(dir, label, &rows, gathered.views.len())?;
        let codes: Vec<&str> = items.iter().map(|i| i.code.as_str()).collect();
        let clusters = code_clusters(config, &codes)?;
        for (item, cluster) in items.iter_mut().zip(clusters) {
            item.code_cluster = cluster;
        }
        gathered
            .views
            .extend(item_views(label, &rows, &items, run.metric));
        write_labels(dir, label, &items, run.metric, &run.measures, &run.points)?;
        let languages: std::collections::BTreeSet<&str> =
            items.iter().map(|i| i.language.as_str()).collect();
        for language in languages {
            let model = Model {
                language,
                label,
                generator: &generator,
                items: items.iter().filter(|i| i.language == language).collect(),
                rows: rows
                    .iter()
                    .filter(|row| row.field("language").unwrap_or_default() == language)
                    .collect(),
            };
            for (measure, reflective) in &run.measures {
                run.measure_cells(&model, measure, *reflective, &mut gathered)?;
            }
        }
    }
    Ok(gathered)
}

/// Each operating point of the config with its threshold from the thresholds file.
fn operating_points(config: &RunConfig) -> Result<Vec<(String, f64)>, PipelineError> {
    let mut points = Vec::new();
    for &point in &config.scoring.operating_points {
        let threshold = read_threshold(&config.scoring.thresholds, point)
            .map_err(stage_error)?
            .threshold;
        points.push((point.section().to_owned(), threshold));
    }
    Ok(points)
}

/// The measures to calibrate, each marked whether it is a reflective one.
fn summary_measures(config: &RunConfig) -> Vec<(String, bool)> {
    let samples = config.generation.samples > 0;
    let plain = config
        .calibration
        .confidence
        .iter()
        .map(|m| (m.clone(), false));
    let reflective = config
        .generation
        .reflective
        .iter()
        .map(|m| (m.name().to_owned(), true));
    let agreement = SUMMARY_MEASURES
        .iter()
        .filter(|_| samples)
        .map(|m| (m.to_string(), false));
    plain.chain(reflective).chain(agreement).collect()
}

/// What the calibration loop gathers for the tables.
#[derive(Default)]
pub(super) struct Gathered {
    pub(super) cells: Vec<Cell>,
    pub(super) subgroup_cells: Vec<Vec<String>>,
    pub(super) spearman: Vec<Vec<String>>,
    pub(super) notes: Vec<String>,
    pub(super) views: Vec<ItemView>,
}

/// What every cell of the run is calibrated with.
struct RunCells<'a> {
    config: &'a RunConfig,
    dir: &'a Path,
    /// The labelling similarity metric.
    metric: &'a str,
    points: Vec<(String, f64)>,
    measures: Vec<(String, bool)>,
    options: CalibrateOptions,
    spearman_only: CalibrateOptions,
}

/// The items of one model, language and measure, with their group features.
struct MeasureItems<'a> {
    items: Vec<&'a Item>,
    features: Vec<FeatureColumn>,
}

/// One model's items in one language.
struct Model<'a> {
    language: &'a str,
    label: &'a str,
    generator: &'a Generator,
    items: Vec<&'a Item>,
    rows: Vec<&'a GenerationRow>,
}

impl RunCells<'_> {
    /// The cells of one measure of `model` at every operating point, its
    /// subgroup rows at the first, and its row of Table I.
    fn measure_cells(
        &self,
        model: &Model,
        measure: &str,
        reflective: bool,
        out: &mut Gathered,
    ) -> Result<(), PipelineError> {
        let items: Vec<&Item> = model
            .items
            .iter()
            .copied()
            .filter(|i| {
                i.confidence.contains_key(measure) && i.similarity.contains_key(self.metric)
            })
            .collect();
        if items.is_empty() {
            return Ok(());
        }
        // The group features depend on the items only: computed once for
        // every operating point and Table I column of the measure.
        let items = MeasureItems {
            features: self.features(&items),
            items,
        };
        for (i, point) in self.points.iter().enumerate() {
            let (cell, data) = self.cell(model, measure, reflective, point, &items, out)?;
            if i == 0 {
                out.subgroup_cells.extend(self.subgroups(
                    model,
                    measure,
                    &items.items,
                    &data,
                    &cell.report,
                ));
            }
            out.cells.push(cell);
        }
        let mut rhos = vec![
            model.language.to_owned(),
            model.label.to_owned(),
            measure.to_owned(),
        ];
        for (_, column) in TABLE_ONE {
            let Some(target) = column else {
                rhos.push("n/a".into());
                continue;
            };
            let data = self.data(&items, measure, target, self.points[0].1);
            let report = calibrate(&data, &self.spearman_only).map_err(stage_error)?;
            rhos.push(with_ci(
                report.raw.metrics.spearman,
                &report.raw,
                "spearman",
            ));
        }
        out.spearman.push(rhos);
        Ok(())
    }

    /// One cell at `point` (its name and threshold): calibrated (raw where
    /// rescaling cannot be had, with a note), its files written, and its data.
    fn cell(
        &self,
        model: &Model,
        measure: &str,
        reflective: bool,
        (point, threshold): &(String, f64),
        items: &MeasureItems,
        out: &mut Gathered,
    ) -> Result<(Cell, CalibrationData), PipelineError> {
        let (language, label, threshold) = (model.language, model.label, *threshold);
        let data = self.data(items, measure, self.metric, threshold);
        // Rescaling needs both classes in every training fold; where a
        // threshold leaves too few of one, the raw numbers still stand.
        let report = calibrate_or_raw(
            &data,
            &self.options,
            &mut out.notes,
            &format!("{language} {label} at {point}"),
            &format!("{language} {label} {measure} at {point}"),
        )?;
        let files = CellFiles {
            parts: vec![language, label, measure, point],
            measure,
            label: LabelDefinition {
                column: self.metric.to_owned(),
                threshold: Some(threshold),
                thresholds_file: Some(self.config.scoring.thresholds.display().to_string()),
                operating_point: Some(point.to_owned()),
                metric: Some(self.metric.to_owned()),
            },
            generator: Some(model.generator.clone()),
        };
        let key = CellKey {
            names: &CELL_KEY,
            values: [language, label, measure, point]
                .map(str::to_owned)
                .to_vec(),
        };
        let indices: Vec<usize> = items.items.iter().map(|i| i.index).collect();
        let view = write_cell(self.dir, files, key, &report, &data, &indices, None)?;
        let cell = Cell {
            tokens_per_item: tokens_per_item(&model.rows, measure),
            language: language.to_owned(),
            model: label.to_owned(),
            measure: measure.to_owned(),
            reflective,
            point: point.to_owned(),
            report,
            view,
        };
        Ok((cell, data))
    }

    /// The group features the config asks for, one column per feature.
    fn features(&self, items: &[&Item]) -> Vec<FeatureColumn> {
        let facts: Vec<ItemFacts> = items
            .iter()
            .map(|i| ItemFacts {
                language: &i.language,
                repository: &i.repo,
                code: &i.code,
                code_chars: i.code_chars,
                answer_chars: i.summary_chars,
                code_cluster: &i.code_cluster,
            })
            .collect();
        feature_columns(&self.config.calibration.group_features, &facts)
    }

    /// The items labelled by `target` above `threshold`, grouped by repository.
    fn data(
        &self,
        of: &MeasureItems,
        measure: &str,
        target: &str,
        threshold: f64,
    ) -> CalibrationData {
        let items = &of.items;
        CalibrationData {
            confidence: items.iter().map(|i| i.confidence[measure]).collect(),
            correct: items
                .iter()
                .map(|i| correct_at(i.similarity[self.metric], threshold))
                .collect(),
            groups: Some(items.iter().map(|i| i.repo.clone()).collect()),
            target: Some(
                items
                    .iter()
                    .map(|i| i.similarity.get(target).copied().unwrap_or(f64::NAN))
                    .collect(),
            ),
            features: of.features.clone(),
        }
    }

    /// The subgroup rows of one cell: by code and summary length, and by repository.
    fn subgroups(
        &self,
        model: &Model,
        measure: &str,
        items: &[&Item],
        data: &CalibrationData,
        report: &CalibrationReport,
    ) -> Vec<Vec<String>> {
        let lengths =
            |f: fn(&Item) -> usize| -> Vec<usize> { items.iter().map(|i| f(i)).collect() };
        let key = [model.language, model.label, measure]
            .map(str::to_owned)
            .to_vec();
        subgroup_rows(
            &key,
            &[
                ("code length", tertiles(&lengths(|i| i.code_chars), "chars")),
                (
                    "summary length",
                    tertiles(&lengths(|i| i.summary_chars), "chars"),
                ),
            ],
            &[("repository", items.iter().map(|i| i.repo.clone()).collect())],
            data,
            report,
            &self.options,
        )
    }
}

/// The names of a summarization cell's key.
const CELL_KEY: [&str; 4] = ["language", "model", "measure", "operating point"];

/// Each generation as the report shows it: code, the developer's comment,
/// the model's summary and its exemplars, with the labelling score.
fn item_views(label: &str, rows: &[GenerationRow], items: &[Item], metric: &str) -> Vec<ItemView> {
    rows.iter()
        .zip(items)
        .map(|(row, item)| {
            let text = |label: &str, text: &str, code: bool| ItemText {
                label: label.to_owned(),
                text: text.to_owned(),
                code,
            };
            let exemplars: Vec<&str> = row
                .item
                .exemplars
                .iter()
                .flatten()
                .map(|e| e.id.as_str())
                .collect();
            ItemView {
                id: item.id.clone(),
                model: label.to_owned(),
                group: item.repo.clone(),
                texts: vec![
                    text("code", row.field("code").unwrap_or_default(), true),
                    text(
                        "developer's comment (reference)",
                        row.field("reference").unwrap_or_default(),
                        false,
                    ),
                    text("generated summary", &row.text, false),
                    text("exemplars", &exemplars.join(", "), false),
                ],
                numbers: item
                    .similarity
                    .get(metric)
                    .map(|v| vec![(metric.to_owned(), *v)])
                    .unwrap_or_default(),
                labels: Vec::new(),
                headline: row.text.trim().to_owned(),
            }
        })
        .collect()
}

fn load_items(
    dir: &Path,
    label: &str,
    rows: &[GenerationRow],
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
            let mut confidence = BTreeMap::new();
            for (name, value) in &row.confidence {
                if let Some(v) = value {
                    confidence.insert(name.clone(), *v);
                }
            }
            for (name, reading) in &row.reflective {
                if let Some(v) = reading.confidence {
                    confidence.insert(name.clone(), v);
                }
            }
            let code = row.field("code").unwrap_or_default();
            let id = row.id.clone();
            Item {
                index: first_index + position,
                code_chars: code.chars().count(),
                code: code.to_owned(),
                code_cluster: String::new(),
                summary_chars: row.text.trim().chars().count(),
                similarity: similarity.get(&id).cloned().unwrap_or_default(),
                language: row.field("language").unwrap_or_default().to_owned(),
                repo: row.field("repo").unwrap_or_default().to_owned(),
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
    let rows: Vec<Vec<String>> = items
        .iter()
        .map(|item| {
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
            record
        })
        .collect();
    let bytes = grid_csv(&header, &rows).into_bytes();
    create_dir(&dir.join("labels"))?;
    write_atomic(&dir.join(format!("labels/{label}.csv")), &bytes)?;
    Ok(())
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
