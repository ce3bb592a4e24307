//! Every subcommand's flags and glue, one module each (`main.rs` only parses
//! and dispatches), plus what several of them share. Bin-only: the library
//! never imports these.

use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use codecal::choice::{Choice, parse_choice};

pub mod apply;
pub mod calibrate;
pub mod corpus;
pub mod generate;
pub mod judge;
pub mod merge;
pub mod monitor;
pub mod progress;
pub mod report;
pub mod retrieve;
pub mod run;
pub mod score;
pub mod setup;
pub mod summarize;
pub mod thresholds;

/// The parser of a flag whose values are a library [`Choice`]'s names
/// (and its aliases), listed in `--help`.
pub fn choice<T: Choice + Clone + Send + Sync>() -> impl TypedValueParser<Value = T> {
    let values = T::NAMES.iter().map(|(value, name)| {
        let aliases = T::ALIASES
            .iter()
            .filter(|(aliased, _)| aliased == value)
            .map(|(_, alias)| *alias);
        PossibleValue::new(*name).aliases(aliases)
    });
    PossibleValuesParser::new(values).try_map(|text| parse_choice::<T>(&text))
}

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

/// A flag value that must be a finite number: NaN or infinity would
/// silently label every item wrong.
pub fn finite(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(value),
        Ok(_) => Err("must be a finite number".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// A threshold grid step from 1e-6 to 1: at most a million candidates.
pub fn grid_step(text: &str) -> Result<f64, String> {
    let step = finite(text)?;
    if (1e-6..=1.0).contains(&step) {
        Ok(step)
    } else {
        Err("must be from 0.000001 to 1".into())
    }
}

/// A duration flag in seconds, above 0 and at most an hour: a negative or
/// NaN timeout, or a wait of days, is an error naming the flag.
pub fn seconds(text: &str) -> Result<f64, String> {
    let value = finite(text)?;
    if value > 0.0 && value <= 3600.0 {
        Ok(value)
    } else {
        Err("must be above 0 and at most 3600 (seconds)".into())
    }
}

/// At most this many workers of one kind at once, whatever the machine:
/// past it a flag's value is a typo, not a plan.
pub const MAX_WORKERS: u64 = 256;

/// `requested` workers, capped by the machine's cores, with a note on
/// stderr when the cap applies.
pub fn workers_for_machine(flag: &str, requested: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if requested > cores {
        eprintln!("codecal: {flag} {requested} capped at this machine's {cores} cores");
    }
    requested.min(cores)
}

/// A count flag within `range`, checked at parsing so that a huge value is
/// an error naming the flag, not an allocation failure after the work.
pub fn count_in(
    range: std::ops::RangeInclusive<u64>,
) -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(range)
}
