//! `codecal merge`: join a run's shard directories and finish the run there.

use std::path::PathBuf;

use clap::Args;

#[derive(Args)]
pub struct MergeArgs {
    /// The run directory to write (new or empty).
    out: PathBuf,
    /// The shard directories (`codecal run --shard i/n --out DIR`), all n of them, in any order.
    #[arg(required = true)]
    shards: Vec<PathBuf>,
}

pub fn run(args: MergeArgs) -> anyhow::Result<()> {
    let summary = codecal::pipeline::merge(&args.out, &args.shards, &super::run::stage_printer())?;
    eprintln!(
        "codecal: merged {} shards: {}",
        args.shards.len(),
        summary.report.display()
    );
    print!("{}", std::fs::read_to_string(&summary.report)?);
    Ok(())
}
