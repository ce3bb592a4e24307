//! Subcommands whose flags and glue are long enough to live apart from `main.rs`.

pub mod generate;
pub mod judge;
pub mod progress;
pub mod run;
