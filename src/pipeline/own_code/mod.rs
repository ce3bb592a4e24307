//! `codecal summarize PATH`: trusted summaries of a developer's own code.
//!
//! Mines every function of a source tree (documented or not), takes BM25
//! few-shot exemplars from the tree's own documented functions (the
//! function itself excluded, its repository allowed) or from a given pool,
//! generates a summary of each with the run config's first backend through
//! a response cache, computes the calibrator's measure, and applies the
//! saved calibrator: a calibrated confidence and a decision per function.
//!
//! Not here: fitting the calibrator (`codecal run` or `codecal calibrate
//! --save`), and the summarization study's scoring against references.

use std::path::{Path, PathBuf};

use crate::generate::row::{ExemplarRef, ItemFields};
use serde::Serialize;

use super::PipelineError;
use super::artifacts::failed;
use super::config::RunConfig;
use super::generation::{backend_label, generation_params, open_backend};
use crate::artifact::{create_dir, write_atomic};
use crate::calibrate::Calibrator;
use crate::confidence::reflective::{Measure, Templates, Wording};
use crate::corpus::mine::{Language, MineOptions, mine_tree};
use crate::corpus::{Record, read_codexglue};
use crate::digest::sha256_hex;
use crate::generate::batch::PromptRow;
use crate::generate::cache::Cache;
use crate::generate::stage::StageOptions;
use crate::models::ModelHome;
use crate::prompt::{PromptStyle, Template};
use crate::report::table::{grid_markdown, markdown_cell, markdown_code};
use crate::retrieve::{Exclude, PromptOptions, prompt_for, rank_bm25};

/// What to summarise and with which calibrator.
pub struct OwnCodeOptions {
    pub root: PathBuf,
    pub language: Language,
    /// Exemplars from this records file instead of the tree's documented functions.
    pub pool: Option<PathBuf>,
    pub calibrator: Calibrator,
    /// Which accept cutoff decides; the calibrator's first when `None`.
    pub target_precision: Option<f64>,
    /// Where the cache, `summaries.jsonl` and `summaries.md` go.
    pub out: PathBuf,
}

/// One function's summary and what to do with it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrustedSummary {
    pub id: String,
    pub path: String,
    pub function: String,
    /// Whether the function already had a doc comment.
    pub documented: bool,
    pub summary: String,
    pub measure: String,
    pub raw_confidence: Option<f64>,
    pub calibrated: Option<f64>,
    pub decision: String,
    pub exemplars: Vec<String>,
}

/// A doc comment whose first sentence has at least this many tokens makes
/// its function an exemplar, as the miner's corpus rule.
const EXEMPLAR_REFERENCE_TOKENS: usize = 3;

/// Summarises every function under `options.root` and decides on each.
pub fn summarize_own_code(
    config: &RunConfig,
    options: &OwnCodeOptions,
    on_progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<OwnCodeOutcome, PipelineError> {
    let stage = "summarize";
    let backend_config = config
        .backends
        .first()
        .ok_or_else(|| failed(stage, "the config has no [[backends]] entry"))?;
    let template_text = config
        .prompt
        .template_text()
        .map_err(|e| failed(stage, e))?;
    let params = generation_params(config)?;
    check_outputs_are_ours(&options.out)?;
    let reflective = reflective_measure(&options.calibrator.measure);
    check_calibrator(
        &options.calibrator,
        &backend_label(backend_config),
        &template_text,
        &params,
    )?;
    let (functions, mined) = mine_tree(
        &options.root,
        MineOptions {
            language: options.language,
            repo_depth: 1,
            undocumented: true,
        },
    )
    .map_err(|e| failed(stage, e))?;
    if functions.is_empty() {
        return Err(failed(
            stage,
            format!(
                "{}: no {:?} function of 3 lines or more outside tests",
                options.root.display(),
                options.language
            ),
        ));
    }
    let pool = exemplar_pool(options, &functions)?;
    let rows = prompt_rows(config, &template_text, &pool, &functions)?;

    let home = ModelHome::from_env().map_err(|e| failed(stage, e))?;
    let backend = open_backend(backend_config, &home).map_err(|e| failed(stage, e))?;
    if let Some(generator) = &options.calibrator.generator {
        check_generator_model(&backend.id(), generator).map_err(|e| failed(stage, e))?;
    }
    create_dir(&options.out)?;
    let cache = Cache::open(&options.out.join("cache.sqlite")).map_err(|e| failed(stage, e))?;
    let templates = Templates::load(config.generation.template_dir.as_deref(), Wording::Summary)
        .map_err(|e| failed(stage, e))?;
    let stage_options = StageOptions {
        params,
        first_k: config.generation.first_k,
        reflective: reflective.into_iter().collect(),
        templates: &templates,
        samples: 0,
        sample_temperature: config.generation.sample_temperature,
        tests: None,
    };
    let total = rows.len() * (1 + stage_options.reflective.len());
    let done = std::sync::atomic::AtomicUsize::new(0);
    let generated =
        crate::generate::stage::run(backend.as_ref(), &cache, &rows, &stage_options, &|| {
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            on_progress(n, total);
        })
        .map_err(|e| failed(stage, e))?;
    let accept = options
        .calibrator
        .accept_cutoff(options.target_precision)
        .map_err(|e| failed(stage, e))?;
    let summaries: Vec<TrustedSummary> = functions
        .iter()
        .zip(&generated)
        .map(|(function, generation)| {
            let raw = generation.measure(&options.calibrator.measure);
            let applied = raw.map(|p| options.calibrator.apply(p, accept));
            TrustedSummary {
                id: function.id.clone(),
                path: function.path.clone(),
                function: function.func_name.clone(),
                documented: !function.reference.is_empty(),
                summary: generation.text.clone(),
                measure: options.calibrator.measure.clone(),
                raw_confidence: raw,
                calibrated: applied.map(|a| a.calibrated),
                // No value for the measure (e.g. an empty summary): nothing to trust.
                decision: applied.map_or("review", |a| a.decision.as_str()).to_owned(),
                exemplars: generation
                    .item
                    .exemplars
                    .iter()
                    .flatten()
                    .map(|e| e.id.clone())
                    .collect(),
            }
        })
        .collect();
    write_outputs(&options.out, &summaries)?;
    Ok(OwnCodeOutcome {
        summaries,
        skipped_files: mined.skipped_files,
    })
}

/// What `summarize_own_code` did: each function's trusted summary, and the
/// source files it could not read (relative path, reason).
#[derive(Clone, Debug, PartialEq)]
pub struct OwnCodeOutcome {
    pub summaries: Vec<TrustedSummary>,
    pub skipped_files: Vec<(String, String)>,
}

/// Where `codecal run` with `config` leaves the calibrator that fits a
/// summary of `language`: its first backend, first measure and first
/// operating point.
pub fn default_calibrator(config: &RunConfig, language: Language) -> Option<PathBuf> {
    let backend = config.backends.first()?;
    let measure = config.calibration.confidence.first()?;
    let point = config.scoring.operating_points.first()?;
    let language = match language {
        Language::Python => "python",
        Language::Java => "java",
    };
    Some(
        config
            .runs_dir
            .join(&config.name)
            .join("calibrators")
            .join(language)
            .join(backend_label(backend))
            .join(measure)
            .join(format!("{point}.json")),
    )
}

/// The reflective measure to ask for, when the calibrator's measure is one.
fn reflective_measure(measure: &str) -> Option<Measure> {
    <Measure as crate::choice::Choice>::from_name(measure)
}

/// Refuses a calibrator made for another model, prompt template, decoding
/// or a measure this command cannot compute, naming both sides.
fn check_calibrator(
    calibrator: &Calibrator,
    label: &str,
    template_text: &str,
    params: &crate::generate::Params,
) -> Result<(), PipelineError> {
    let refuse = |what: String| Err(failed("summarize", what));
    let measure = calibrator.measure.as_str();
    if !crate::confidence::TOKEN_MEASURES.contains(&measure)
        && reflective_measure(measure).is_none()
    {
        return refuse(format!(
            "the calibrator's measure {measure} is neither a token measure ({}) nor a reflective one",
            crate::confidence::TOKEN_MEASURES.join(", ")
        ));
    }
    let Some(generator) = &calibrator.generator else {
        eprintln!(
            "codecal: warning: the calibrator records no model or prompt (it was saved from a \
             table); codecal cannot check that it fits {label}"
        );
        return Ok(());
    };
    let ours = sha256_hex(template_text.as_bytes());
    if generator.prompt_template_sha256 != ours {
        return refuse(format!(
            "the prompt template's sha256 is {ours}, but the calibrator was made with {}",
            generator.prompt_template_sha256
        ));
    }
    let decoding = serde_json::to_value(params).unwrap_or_default();
    if generator.decoding != decoding {
        return refuse(format!(
            "the decoding parameters are {decoding}, but the calibrator was made with {}",
            generator.decoding
        ));
    }
    Ok(())
}

/// Exemplars: the given pool, or the tree's functions with a usable doc comment.
fn exemplar_pool(
    options: &OwnCodeOptions,
    functions: &[Record],
) -> Result<Vec<Record>, PipelineError> {
    match &options.pool {
        Some(path) => Ok(read_codexglue(path, true)
            .map_err(|e| failed("summarize", e))?
            .0),
        None => Ok(functions
            .iter()
            .filter(|f| f.reference.split_whitespace().count() >= EXEMPLAR_REFERENCE_TOKENS)
            .cloned()
            .collect()),
    }
}

/// One prompt per function, with its BM25 exemplars (never itself).
fn prompt_rows(
    config: &RunConfig,
    template_text: &str,
    pool: &[Record],
    functions: &[Record],
) -> Result<Vec<PromptRow>, PipelineError> {
    let template =
        Template::parse(template_text, "prompt.template").map_err(|e| failed("summarize", e))?;
    let style = config.prompt.style.unwrap_or(PromptStyle::Completion);
    let options = PromptOptions {
        template: &template,
        style,
        budget: config.prompt.max_prompt_tokens,
        asap: config.prompt.asap,
    };
    let hits = rank_bm25(
        pool,
        functions,
        false,
        config.retrieval.k,
        Exclude::SelfOnly,
    );
    Ok(functions
        .iter()
        .zip(&hits)
        .map(|(function, hits)| {
            let (prompt, exemplars) = prompt_for(pool, function, hits, &options);
            let fields = ItemFields {
                // Fresh-context reflective questions show the judge the code.
                code: Some(function.code.clone()),
                exemplars: Some(
                    exemplars
                        .iter()
                        .zip(hits)
                        .map(|(r, hit)| ExemplarRef {
                            id: r.id.clone(),
                            score: hit.score,
                        })
                        .collect(),
                ),
                ..ItemFields::default()
            };
            PromptRow {
                id: function.id.clone(),
                prompt,
                fields: fields.into_map(),
            }
        })
        .collect())
}

/// The first line of the `summaries.md` codecal writes.
const MARKDOWN_TITLE: &str = "# codecal summarize";

/// Before any work: a `summaries.md` in `out` that codecal did not write
/// (a user's own notes, or a FIFO, which a plain read would wait on
/// forever) is never replaced.
fn check_outputs_are_ours(out: &Path) -> Result<(), PipelineError> {
    let path = out.join("summaries.md");
    if !path.exists() {
        return Ok(());
    }
    let ours = crate::artifact::read_regular(&path, crate::artifact::JSON_CAP_BYTES)
        .is_ok_and(|text| text.starts_with(MARKDOWN_TITLE.as_bytes()));
    if ours {
        return Ok(());
    }
    Err(failed(
        "summarize",
        format!(
            "{} exists and codecal did not write it; choose another --out",
            path.display()
        ),
    ))
}

/// `summaries.jsonl` (one object per function) and `summaries.md`.
fn write_outputs(out: &Path, summaries: &[TrustedSummary]) -> Result<(), PipelineError> {
    let jsonl: String = summaries
        .iter()
        .map(|s| serde_json::to_string(s).unwrap_or_default() + "\n")
        .collect();
    write_atomic(&out.join("summaries.jsonl"), jsonl.as_bytes())?;
    write_atomic(&out.join("summaries.md"), markdown(summaries).as_bytes())?;
    Ok(())
}

fn markdown(summaries: &[TrustedSummary]) -> String {
    let count = |d: &str| summaries.iter().filter(|s| s.decision == d).count();
    let header = [
        "path",
        "function",
        "summary",
        "calibrated confidence",
        "decision",
    ];
    let rows: Vec<Vec<String>> = summaries
        .iter()
        .map(|s| {
            vec![
                markdown_code(&s.path),
                markdown_code(&s.function),
                markdown_cell(&s.summary),
                s.calibrated.map_or("-".to_owned(), |c| format!("{c:.3}")),
                s.decision.clone(),
            ]
        })
        .collect();
    format!(
        "{MARKDOWN_TITLE}\n\n{} functions: {} accepted, {} to review, {} rejected.\n\n{}",
        summaries.len(),
        count("accept"),
        count("review"),
        count("reject"),
        grid_markdown(&header, &rows)
    )
}

/// A calibrator holds only for the model (and weights file) it was made
/// with: another model's confidences mean something else.
fn check_generator_model(
    id: &crate::generate::BackendId,
    generator: &crate::calibrate::calibrator::Generator,
) -> Result<(), ModelMismatch> {
    let file_differs = generator
        .model_sha256
        .as_deref()
        .is_some_and(|sha| !id.model_sha256.is_empty() && sha != id.model_sha256);
    if id.model != generator.model || file_differs {
        return Err(ModelMismatch {
            backend: format!("{} ({})", id.model, or_unknown(&id.model_sha256)),
            calibrator: format!(
                "{} ({})",
                generator.model,
                or_unknown(generator.model_sha256.as_deref().unwrap_or_default())
            ),
        });
    }
    Ok(())
}

/// A calibrator made with another model (or weights file) than the backend's.
#[derive(Debug, thiserror::Error)]
#[error("the backend's model is {backend}, but the calibrator was made for {calibrator}")]
struct ModelMismatch {
    backend: String,
    calibrator: String,
}

fn or_unknown(sha256: &str) -> String {
    if sha256.is_empty() {
        "file hash unknown".to_owned()
    } else {
        format!("sha256 {}", &sha256[..sha256.len().min(12)])
    }
}

#[cfg(test)]
mod tests {
    use super::check_generator_model;
    use crate::calibrate::calibrator::Generator;
    use crate::generate::BackendId;

    fn smollm2_calibrator() -> Generator {
        Generator {
            backend: "local".into(),
            model: "SmolLM2-135M-Instruct-Q4_1@f32".into(),
            model_sha256: Some(crate::models::LANGUAGE_MODELS[0].sha256.into()),
            ..Generator::default()
        }
    }

    fn local(model: &str, sha256: &str) -> BackendId {
        BackendId {
            kind: "local".into(),
            model: model.into(),
            model_sha256: sha256.into(),
            ..BackendId::default()
        }
    }

    #[test]
    fn a_calibrator_made_with_smollm2_is_refused_for_qwen_output() {
        let qwen = crate::models::language_model("qwen2.5-coder-0.5b").unwrap();
        let error = check_generator_model(
            &local("qwen2.5-coder-0.5b@f32", qwen.sha256),
            &smollm2_calibrator(),
        )
        .unwrap_err();
        assert!(
            error.to_string().contains(
                "calibrator was made for SmolLM2-135M-Instruct-Q4_1@f32 (sha256 b179c9523d0e)"
            ),
            "{error}"
        );
        let smollm2 = crate::models::LANGUAGE_MODELS[0].sha256;
        assert!(
            check_generator_model(
                &local("SmolLM2-135M-Instruct-Q4_1@f32", smollm2),
                &smollm2_calibrator()
            )
            .is_ok()
        );
        // The same name with another weights file is another model.
        let error = check_generator_model(
            &local("SmolLM2-135M-Instruct-Q4_1@f32", qwen.sha256),
            &smollm2_calibrator(),
        )
        .unwrap_err();
        assert!(error.to_string().contains("sha256 1d9614638d18"), "{error}");
    }
}
