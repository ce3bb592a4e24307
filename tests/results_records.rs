//! The book's results tables are generated from committed run records
//! (`docs/results/runs/`) by `docs/results/tables.py`, which `.ci/run` runs:
//! the pages agree with their records, and a record or a page changed on
//! purpose is caught, naming the page and the record.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn check(root: &Path) -> std::process::Output {
    Command::new("python3")
        .arg(repo().join("docs/results/tables.py"))
        .arg("--root")
        .arg(root)
        .output()
        .expect("python3 runs docs/results/tables.py")
}

/// A copy of the pages and records to break.
fn copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("docs/src"), &dir.path().join("docs/src"));
    copy_tree(
        &repo().join("docs/results/runs"),
        &dir.path().join("docs/results/runs"),
    );
    dir
}

/// The generated block of `page` under `marker`, up to its end marker.
fn record_block(page: &str, marker: &str) -> String {
    let text = std::fs::read_to_string(repo().join(page)).unwrap();
    let block = &text[text
        .find(marker)
        .unwrap_or_else(|| panic!("{page}: {marker}"))..];
    block[..block.find("<!-- /record -->").unwrap()].to_owned()
}

/// Replaces the first `from` in the copy's `file` with `to`, runs the check,
/// which must fail, and returns what it printed.
fn check_after_replacing(dir: &Path, file: &str, from: &str, to: &str) -> String {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let broken = text.replacen(from, to, 1);
    assert_ne!(text, broken, "{file} holds {from:?}");
    std::fs::write(&path, broken).unwrap();
    let out = check(dir);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{stderr}");
    stderr
}

#[test]
fn the_pages_agree_with_their_run_records() {
    let out = check(&repo());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pages = ["open-the-oyster.md", "summarization.md", "turbulence.md"];
    for page in pages {
        let text = std::fs::read_to_string(repo().join("docs/src/results").join(page)).unwrap();
        assert!(
            text.contains("<!-- record: "),
            "{page} has no generated table"
        );
    }
}

#[test]
fn a_record_changed_on_purpose_is_caught_naming_page_and_record() {
    let dir = copy();
    assert!(check(dir.path()).status.success());
    let stderr = check_after_replacing(
        dir.path(),
        "docs/results/runs/cruxeval-output-qwen-oyster/report.json",
        "passed 16,",
        "passed 17,",
    );
    assert!(
        stderr.contains("docs/src/results/open-the-oyster.md:")
            && stderr.contains("cruxeval-output-qwen-oyster table: outcomes"),
        "{stderr}"
    );
}

#[test]
fn a_page_edited_by_hand_is_caught() {
    let dir = copy();
    let page = dir.path().join("docs/src/results/turbulence.md");
    let text = std::fs::read_to_string(&page).unwrap();
    let start = text.find("<!-- record: turbulence-local").unwrap();
    let row = start + text[start..].find("\n| ").unwrap() + 1;
    let mut broken = text.clone();
    broken.insert_str(row, "| an extra row |\n");
    std::fs::write(&page, broken).unwrap();
    let out = check(dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("docs/src/results/turbulence.md:"),
        "{stderr}"
    );
    assert!(stderr.contains("turbulence-local"), "{stderr}");
}

/// A table stacked from several records (`record: a+b table: ...`) names
/// each row's run, and a change to any one of them is caught.
#[test]
fn a_stacked_table_names_its_runs_and_catches_each_record() {
    let block = record_block(
        "docs/src/results/open-the-oyster.md",
        "<!-- record: reval-coverage-qwen-oyster+reval-state-qwen-oyster+reval-path-qwen-oyster+reval-output-qwen-oyster table: outcomes -->",
    );
    for run in [
        "reval-coverage-qwen-oyster",
        "reval-state-qwen-oyster",
        "reval-path-qwen-oyster",
        "reval-output-qwen-oyster",
    ] {
        assert!(block.contains(&format!("*Run record `{run}`")), "{block}");
        assert!(block.contains(&format!("\n| {run} | ")), "{block}");
    }
    let dir = copy();
    let stderr = check_after_replacing(
        dir.path(),
        "docs/results/runs/reval-path-qwen-oyster/report.json",
        "passed 3,",
        "passed 4,",
    );
    assert!(stderr.contains("reval-path-qwen-oyster"), "{stderr}");
}

/// Column names that hold a comma ("its ECE, base") are chosen with `;`
/// between them, and each named column is the one the table shows.
#[test]
fn columns_with_commas_in_their_names_are_chosen_by_semicolons() {
    let block = record_block(
        "docs/src/commands/calibrate.md",
        "<!-- record: codexglue-qwen-multical table: multicalibration columns: ",
    );
    assert!(
        block.contains(
            "\n| language | measure | worst group | its ECE, base | its ECE, multicalibrated |"
        ),
        "{block}"
    );
    let dir = copy();
    let stderr = check_after_replacing(
        dir.path(),
        "docs/src/commands/calibrate.md",
        "its ECE, base;",
        "its ECE base;",
    );
    assert!(stderr.contains("has no its ECE base"), "{stderr}");
}

/// Every shipped config is listed, with what it runs, in `configs/README.md`
/// and on the book's configuration page, so a results table's config can be
/// looked up by name.
#[test]
fn every_shipped_config_has_its_row_in_both_lists() {
    let lists = [
        repo().join("configs/README.md"),
        repo().join("docs/src/guide/configuration.md"),
    ];
    let lists: Vec<(PathBuf, String)> = lists
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    let mut names = Vec::new();
    for (dir, prefix) in [("configs", ""), ("configs/server", "server/")] {
        for entry in std::fs::read_dir(repo().join(dir)).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".toml") {
                names.push(format!("{prefix}{name}"));
            }
        }
    }
    assert!(names.len() > 30, "only {} configs found", names.len());
    let mut missing = Vec::new();
    for name in &names {
        for (path, text) in &lists {
            if !text.contains(&format!("`{name}`")) {
                missing.push(format!("{}: no row for `{name}`", path.display()));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
