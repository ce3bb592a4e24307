//! Every subcommand's flags and glue, one module each (`main.rs` only parses
//! and dispatches), plus what several of them share. Bin-only: the library
//! never imports these.

use clap::Args;

pub mod calibrate;
pub mod corpus;
pub mod generate;
pub mod judge;
pub mod progress;
pub mod retrieve;
pub mod run;
pub mod score;
pub mod setup;
pub mod thresholds;

/// The columns of a (reference, candidate) pair file.
#[derive(Args)]
pub struct PairColumns {
    /// Column naming each pair.
    #[arg(long, default_value = "id")]
    pub id: String,
    /// Column holding the reference summary (the developer's comment).
    #[arg(long, default_value = "reference")]
    pub reference: String,
    /// Column holding the candidate summary (the model's).
    #[arg(long, default_value = "candidate")]
    pub candidate: String,
}
