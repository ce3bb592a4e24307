//! The summarization flow of `codecal run`: records → sample → prompts
//! (BM25 exemplars) → generations (the shared stage) → scores → calibration
//! and the summarization seed's report. Each stage is a call into its
//! library module with the run directory's artifacts as input and output.
//! Not the code-task flows (`tasks`), and nothing another flow uses.

mod agreement;
mod cells;
mod report;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::artifacts::{ArtifactError, failed, read_jsonl, section};
use super::config::{CorpusSource, RunConfig};
use super::generation::{generations, generators};
use super::{Books, PipelineError, file_sha256, hash_strings};
use crate::artifact::{create_dir, write_atomic};
use crate::corpus::mine::{Language, MineOptions, mine_tree, python_stdlib};
use crate::corpus::{Record, dedupe, read_codexglue, to_jsonl};
use crate::generate::row::GenerationRow;
use crate::models::ModelHome;
use crate::prompt::{PromptStyle, Template};
use crate::retrieve::{ExemplarSearch, PromptOptions};

pub(crate) fn run(config: &RunConfig, books: &mut Books) -> Result<(), PipelineError> {
    records(config, books)?;
    sample(config, books)?;
    prompts(config, books)?;
    let home = ModelHome::from_env().map_err(|e| failed("generate", e))?;
    let mut labels = Vec::new();
    for generator in generators(config) {
        let label = generator.label.clone();
        generations(config, &generator, &home, books)?;
        scores(config, &label, &home, books)?;
        if config.generation.samples > 0 {
            agreement::stage(config, &label, &home, books)?;
        }
        labels.push(label);
    }
    if books.shard.is_some() {
        return Ok(());
    }
    let mut inputs = vec![
        super::calibration::REPORT_REVISION.to_string(),
        section(&config.scoring),
        section(&config.calibration),
        std::fs::read_to_string(&config.scoring.thresholds).unwrap_or_default(),
    ];
    for label in &labels {
        inputs.push(books.file_hash(&format!("generations/{label}.jsonl"))?);
        inputs.push(books.file_hash(&format!("scores/{label}.csv"))?);
        if config.generation.samples > 0 {
            inputs.push(books.file_hash(&format!("agreement/{label}.jsonl"))?);
        }
    }
    let outputs = super::run_report::REPORT_FILES.map(String::from);
    books.stage("calibrate", &inputs, &outputs, 0, |dir| {
        report::calibrate_and_report(config, dir, &labels)
    })
}

fn records(config: &RunConfig, books: &mut Books) -> Result<(), PipelineError> {
    let corpus = &config.corpus;
    let mut inputs = vec![section(corpus)];
    match corpus.source {
        CorpusSource::Codexglue => {
            for path in &corpus.paths {
                inputs.push(file_sha256(path)?);
            }
        }
        _ => inputs.push(tree_fingerprint(&mine_root(config)?)),
    }
    books.stage("records", &inputs, &["records.jsonl".into()], 0, |dir| {
        let records = read_corpus(config)?;
        write_atomic(&dir.join("records.jsonl"), to_jsonl(&records).as_bytes())?;
        Ok(())
    })
}

fn mine_root(config: &RunConfig) -> Result<PathBuf, PipelineError> {
    match config.corpus.source {
        CorpusSource::PythonStdlib => python_stdlib().map_err(|e| failed("records", e)),
        _ => Ok(config.corpus.dir.clone().unwrap_or_default()),
    }
}

fn read_corpus(config: &RunConfig) -> Result<Vec<Record>, PipelineError> {
    let corpus = &config.corpus;
    let mut records = Vec::new();
    if corpus.source == CorpusSource::Codexglue {
        for path in &corpus.paths {
            records.extend(
                read_codexglue(path, false)
                    .map_err(|e| failed("records", e))?
                    .0,
            );
        }
        dedupe(&mut records);
        return Ok(records);
    }
    let language = match corpus.source {
        CorpusSource::PythonStdlib => Language::Python,
        _ => corpus
            .language
            .ok_or_else(|| failed("records", "corpus.language is not set"))?,
    };
    let root = mine_root(config)?;
    let options = MineOptions {
        language,
        repo_depth: corpus.repo_depth,
        undocumented: false,
    };
    Ok(mine_tree(&root, options)
        .map_err(|e| failed("records", e))?
        .0)
}

/// Records of each language, languages in name order.
fn by_language(records: Vec<Record>) -> BTreeMap<String, Vec<Record>> {
    let mut groups: BTreeMap<String, Vec<Record>> = BTreeMap::new();
    for record in records {
        groups
            .entry(record.language.clone())
            .or_default()
            .push(record);
    }
    groups
}

fn sample(config: &RunConfig, books: &mut Books) -> Result<(), PipelineError> {
    let inputs = vec![
        books.file_hash("records.jsonl")?,
        config.corpus.queries.to_string(),
        config.corpus.seed.to_string(),
    ];
    let outputs = ["queries.jsonl".to_owned(), "pool.jsonl".to_owned()];
    books.stage("sample", &inputs, &outputs, 0, |dir| {
        let records = read_records(&dir.join("records.jsonl"))?;
        let (mut queries, mut pool) = (Vec::new(), Vec::new());
        for (_, records) in by_language(records) {
            let (q, p) =
                crate::corpus::sample(&records, config.corpus.queries, config.corpus.seed, false);
            queries.extend(q);
            pool.extend(p);
        }
        write_atomic(&dir.join("queries.jsonl"), to_jsonl(&queries).as_bytes())?;
        write_atomic(&dir.join("pool.jsonl"), to_jsonl(&pool).as_bytes())?;
        Ok(())
    })
}

fn read_records(path: &Path) -> Result<Vec<Record>, PipelineError> {
    read_codexglue(path, true)
        .map(|(records, _)| records)
        .map_err(|e| PipelineError::Artifact {
            path: path.to_owned(),
            source: ArtifactError::Records(e),
        })
}

fn prompts(config: &RunConfig, books: &mut Books) -> Result<(), PipelineError> {
    let template_text = config
        .prompt
        .template_text()
        .map_err(|e| failed("prompts", e))?;
    let inputs = vec![
        books.file_hash("queries.jsonl")?,
        books.file_hash("pool.jsonl")?,
        section(&config.retrieval),
        section(&config.prompt),
        template_text.clone(),
    ];
    books.stage("prompts", &inputs, &["prompts.jsonl".into()], 0, |dir| {
        let template =
            Template::parse(&template_text, "prompt.template").map_err(|e| failed("prompts", e))?;
        let style = config.prompt.style.unwrap_or(PromptStyle::Completion);
        let (mode, exclude) = (config.retrieval.mode, config.retrieval.exclude);
        let pools = by_language(read_records(&dir.join("pool.jsonl"))?);
        let mut out = String::new();
        for (language, queries) in by_language(read_records(&dir.join("queries.jsonl"))?) {
            let pool = pools.get(&language).cloned().unwrap_or_default();
            let fingerprint = hash_strings(&[to_jsonl(&pool)]);
            let search = ExemplarSearch {
                mode,
                k: config.retrieval.k,
                exclude,
                same_file: false,
                index: Some((dir.join(format!("index-{language}")), fingerprint)),
            };
            let hits = crate::retrieve::find_exemplars(&pool, &queries, &search)
                .map_err(|e| failed("prompts", e))?;
            let options = PromptOptions {
                template: &template,
                style,
                budget: config.prompt.max_prompt_tokens,
                asap: config.prompt.asap,
            };
            out += &crate::retrieve::prompts_jsonl(&pool, &queries, &hits, &options);
        }
        write_atomic(&dir.join("prompts.jsonl"), out.as_bytes())?;
        Ok(())
    })
}

fn scores(
    config: &RunConfig,
    label: &str,
    home: &ModelHome,
    books: &mut Books,
) -> Result<(), PipelineError> {
    let generations = format!("generations/{label}.jsonl");
    let inputs = vec![
        books.file_hash(&generations)?,
        config.scoring.tokenization.to_string(),
        config.scoring.device.to_string(),
    ];
    let output = format!("scores/{label}.csv");
    books.item_stage(
        &format!("score {label}"),
        &inputs,
        std::slice::from_ref(&output),
        0,
        |dir| {
            let rows: Vec<GenerationRow> = read_jsonl(&dir.join(&generations))?;
            let pairs: Vec<crate::score::Pair> = rows
                .into_iter()
                .map(|row| crate::score::Pair {
                    reference: row.field("reference").unwrap_or_default().to_owned(),
                    id: row.id,
                    candidate: row.text,
                })
                .collect();
            let scores = score_pairs(config, home, &pairs)?;
            create_dir(&dir.join("scores"))?;
            write_atomic(
                &dir.join(&output),
                crate::report::scores_csv(&scores).as_bytes(),
            )?;
            Ok(())
        },
    )
}

#[cfg(feature = "onnx")]
fn score_pairs(
    config: &RunConfig,
    home: &ModelHome,
    pairs: &[crate::score::Pair],
) -> Result<Vec<crate::score::PairScores>, PipelineError> {
    use crate::score::Scorer;
    let tokenization = config.scoring.tokenization;
    let embedder = super::embedding::open_minilm(config, home, "score")?;
    Scorer::new(embedder, tokenization)
        .score(pairs, |_, _| {})
        .map_err(|e| failed("score", e))
}

#[cfg(not(feature = "onnx"))]
fn score_pairs(
    _: &RunConfig,
    _: &ModelHome,
    _: &[crate::score::Pair],
) -> Result<Vec<crate::score::PairScores>, PipelineError> {
    Err(failed(
        "score",
        "this codecal was built without the `onnx` feature",
    ))
}

/// Paths, sizes and modification times of the files under `root`: a tree
/// that changed is mined again.
fn tree_fingerprint(root: &Path) -> String {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let path = entry.path();
            match entry.metadata() {
                Ok(m) if m.is_dir() => walk(&path, out),
                Ok(m) => {
                    let modified = m
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
                    out.push(format!("{} {} {:?}", path.display(), m.len(), modified));
                }
                Err(_) => {}
            }
        }
    }
    let mut lines = vec![root.display().to_string()];
    walk(root, &mut lines);
    hash_strings(&lines)
}
