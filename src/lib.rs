//! codecal: how far to trust what an LLM wrote about code.
//!
//! Each stage of the pipeline is a module with plain data at its face:
//! `table` reads users' files, `corpus` reads code records and `retrieve`
//! finds few-shot exemplars for `prompt`, `generate` asks a language model
//! (caching every answer) and `confidence` reads how sure it was,
//! `score` measures similarity to a reference
//! (with models set up by `models`), `thresholds` picks score thresholds
//! from human ratings, `calibrate` measures and rescales
//! confidence (and saves a calibrator that `apply` uses to decide on new
//! items), `report` renders results, `pipeline` joins every stage in one
//! resumable run, and `artifact` writes files atomically. Beyond summaries,
//! `task` poses code generation and reasoning problems and judges answers,
//! running generated code only inside `sandbox`. The CLI
//! in `main.rs` is a thin shell over these.

pub mod apply;
pub mod artifact;
pub mod calibrate;
pub mod choice;
pub mod confidence;
pub mod corpus;
pub mod digest;
pub mod generate;
pub mod manifest;
pub mod models;
pub mod monitor;
pub mod pipeline;
pub mod prompt;
pub mod report;
pub mod retrieve;
pub mod sandbox;
pub mod score;
pub mod table;
pub mod task;
pub mod thresholds;
