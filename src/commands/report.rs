//! `codecal report RUN_DIR`: rebuild a finished run's `report.md` and
//! `report.html` from its `report.json` and figures, without re-running a
//! stage (`codecal::report::run::rebuild`); `--open` hands the page to the
//! user's browser. Only flag mapping and output.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;
use clap::Args;

use codecal::report::run::rebuild;

#[derive(Args)]
pub struct ReportArgs {
    /// A run directory that `codecal run` finished (it holds report.json).
    run_dir: PathBuf,
    /// Open report.html in the browser: $BROWSER, else xdg-open (Linux) or
    /// open (macOS).
    #[arg(long)]
    open: bool,
}

pub fn run(args: ReportArgs) -> anyhow::Result<()> {
    let report = rebuild(&args.run_dir)?;
    let page = args.run_dir.join("report.html");
    println!(
        "{}: {} tables, {} cells, {} items",
        args.run_dir.join("report.md").display(),
        report.tables.len(),
        report.cells.len(),
        report.items.len()
    );
    println!("{}", page.display());
    if args.open {
        open_in_browser(&page)?;
    }
    Ok(())
}

/// Starts the user's browser on `page` and does not wait for it.
fn open_in_browser(page: &Path) -> anyhow::Result<()> {
    let page = std::fs::canonicalize(page).with_context(|| page.display().to_string())?;
    let mut openers: Vec<String> = std::env::var("BROWSER")
        .map(|b| b.split(':').map(str::to_owned).collect())
        .unwrap_or_default();
    openers.extend(["xdg-open".to_owned(), "open".to_owned()]);
    for opener in openers.iter().filter(|o| !o.is_empty()) {
        let started = Command::new(opener)
            .arg(&page)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        if started.is_ok() {
            eprintln!("codecal: opened {} with {opener}", page.display());
            return Ok(());
        }
    }
    anyhow::bail!(
        "--open: no browser found ($BROWSER is unset and neither xdg-open nor open runs); \
         open {} yourself",
        page.display()
    )
}
