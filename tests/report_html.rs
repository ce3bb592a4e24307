//! `report.html` in a real browser. The tiny pipeline run (a loopback
//! OpenAI-compatible server, MiniLM scoring) writes its page; headless
//! Chromium (Debian's `chromium`) renders it, driven over the DevTools
//! protocol by `tests/browser/drive.py`, and the test checks what a reader
//! sees against the run's own files: no console error and no request but
//! the page's own; every table of `report.md` with the same text; the items
//! listed under the highest-confidence reliability bar; and the "most
//! confident and wrong" list. It also rebuilds the reports with
//! `codecal report` and saves a screenshot under `target/tmp/`.
//!
//! Without Chromium the test prints why it skips; under
//! CODECAL_REQUIRE_BROWSER (set by `.ci/run`, which installs it) it fails.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use codecal::calibrate::metrics::equal_width_bin;
use serde_json::{Value, json};

const MODEL: &str = "openai-test-model";
const MEASURE: &str = "average_token_probability";
const POINT: &str = "best-f1";

/// Chromium on PATH, or a printed reason to skip (a panic under
/// CODECAL_REQUIRE_BROWSER).
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|candidate| candidate.is_file());
    if found.is_none() {
        let why = "no chromium on PATH (Debian: apt-get install chromium; .ci/run installs it)";
        if std::env::var_os("CODECAL_REQUIRE_BROWSER").is_some() {
            panic!("{why}, and CODECAL_REQUIRE_BROWSER is set");
        }
        eprintln!("SKIPPED: {why}");
    }
    found
}

/// Runs the DevTools driver on `page` with `steps`; its JSON report.
fn drive(chromium: &Path, page: &Path, screenshot: &Path, steps: Value) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/drive.py");
    let job = json!({
        "chromium": chromium,
        "url": format!("file://{}", page.canonicalize().unwrap().display()),
        "screenshot": screenshot,
        "width": 1280,
        "height": 1600,
        "steps": steps,
    });
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(job.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the browser driver failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Each table of report.md: (title, header, rows); "(nothing in this run)"
/// is a table with no rows.
fn markdown_tables(markdown: &str) -> Vec<(String, Vec<String>, Vec<Vec<String>>)> {
    let cells = |line: &str| -> Vec<String> {
        line.trim()
            .trim_start_matches('|')
            .trim_end_matches('|')
            .split(" | ")
            .map(|c| c.trim().to_owned())
            .collect()
    };
    let mut tables = Vec::new();
    for block in markdown.split("\n## ").skip(1) {
        let mut lines = block.lines();
        let title = lines.next().unwrap().to_owned();
        let body: Vec<&str> = lines.filter(|l| !l.is_empty()).collect();
        match body.first() {
            Some(l) if l.starts_with('|') => {
                let rows = body
                    .iter()
                    .skip(2)
                    .take_while(|l| l.starts_with('|'))
                    .map(|l| cells(l))
                    .collect();
                tables.push((title, cells(body[0]), rows));
            }
            Some(&"(nothing in this run)") => tables.push((title, Vec::new(), Vec::new())),
            _ => {}
        }
    }
    tables
}

/// The cell's items from the run's own files: id -> (raw confidence from
/// the generations JSONL, correct at the operating point from the labels).
fn cell_items(run: &Path) -> BTreeMap<String, (f64, bool)> {
    let generations =
        std::fs::read_to_string(run.join(format!("generations/{MODEL}.jsonl"))).unwrap();
    let labels_path = run.join(format!("labels/{MODEL}.csv"));
    let labels = common::csv_rows(&labels_path);
    let mut reader = csv::Reader::from_path(&labels_path).unwrap();
    let columns = reader.headers().unwrap().clone();
    let at = |name: &str| columns.iter().position(|c| c == name).unwrap();
    // id, language, repo, then the labelling metric's score.
    let (metric, correct) = (3, at(&format!("correct_{POINT}")));
    let correct: BTreeMap<&str, bool> = labels
        .iter()
        .filter(|row| !row[metric].is_empty())
        .map(|row| (row[0].as_str(), row[correct] == "1"))
        .collect();
    generations
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter_map(|row| {
            let id = row["id"].as_str().unwrap().to_owned();
            let p = row["confidence"][MEASURE].as_f64()?;
            Some((id.clone(), (p, *correct.get(id.as_str())?)))
        })
        .collect()
}

const TABLES_JS: &str = "[...document.querySelectorAll('#tables section.report-table')].map(s => [
    s.querySelector('h3').textContent,
    [...s.querySelectorAll('thead th')].map(t => t.textContent),
    [...s.querySelectorAll('tbody tr')].map(r => [...r.cells].map(c => c.textContent))])";

#[test]
fn the_page_renders_offline_with_every_table_and_drills_down_to_the_items() {
    let Some(chromium) = chromium() else { return };
    if common::model_files().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tiny = common::tiny::finished_run(dir.path());
    let run = tiny.dir.clone();
    let page = run.join("report.html");
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-html");
    std::fs::create_dir_all(&shots).unwrap();
    let screenshot = shots.join("tiny-run.png");
    let _ = std::fs::remove_file(&screenshot);

    let top_bar = "#cell-0 [data-panel=\"raw\"] rect[data-bar]:last-of-type";
    let result = drive(
        &chromium,
        &page,
        &screenshot,
        json!([
            {"eval": TABLES_JS},
            {"eval": "document.querySelector('#cell-0 h3').textContent"},
            {"click": top_bar},
            {"eval": "[document.querySelector('#cell-0 .chosen').dataset.lo,
                       [...document.querySelectorAll('#cell-0 .drill tbody tr')].map(r => r.dataset.id)]"},
            {"eval": "[...document.querySelectorAll('#cell-0 table.items.wrong tbody tr')].map(r => r.dataset.id)"},
            // The screenshot shows the cell's figure and the listed bin.
            {"eval": "document.querySelector('#cell-0').scrollIntoView(); true"},
        ]),
    );
    eprintln!(
        "report.html loaded in {:.0} ms",
        result["load_ms"].as_f64().unwrap()
    );

    // Offline and clean: the page asked for itself only, and nothing failed.
    assert_eq!(result["errors"], json!([]), "console errors");
    let requests: Vec<&str> = result["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(requests.len(), 1, "requests: {requests:?}");
    assert!(requests[0].ends_with("/report.html"), "{requests:?}");

    // Every table of report.md, with the same title, header and cells.
    let markdown = std::fs::read_to_string(run.join("report.md")).unwrap();
    let expected = markdown_tables(&markdown);
    assert!(
        expected.len() >= 8,
        "report.md has {} tables",
        expected.len()
    );
    let shown: Vec<(String, Vec<String>, Vec<Vec<String>>)> =
        serde_json::from_value(result["results"][0].clone()).unwrap();
    assert_eq!(shown, expected);

    // The highest-confidence bar of the first cell's raw panel lists exactly
    // the items whose raw confidence falls in its bin (10 equal-width bins,
    // left-open edges), surest first.
    assert_eq!(
        result["results"][1],
        format!(
            "language: python · model: {MODEL} · measure: {MEASURE} · operating point: {POINT}"
        )
    );
    let items = cell_items(&run);
    assert_eq!(items.len(), 24);
    let top = items.values().map(|(p, _)| *p).fold(f64::MIN, f64::max);
    let top_bin = equal_width_bin(top, 10);
    let mut in_bin: Vec<(&String, f64)> = items
        .iter()
        .filter(|(_, (p, _))| equal_width_bin(*p, 10) == top_bin)
        .map(|(id, (p, _))| (id, *p))
        .collect();
    in_bin.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    let in_bin: Vec<&String> = in_bin.into_iter().map(|(id, _)| id).collect();
    let drill = &result["results"][3];
    assert_eq!(
        drill[0].as_str().unwrap().parse::<f64>().unwrap(),
        top_bin as f64 / 10.0
    );
    let listed: Vec<String> = serde_json::from_value(drill[1].clone()).unwrap();
    assert!(!listed.is_empty());
    assert_eq!(listed.iter().collect::<Vec<_>>(), in_bin);

    // "Most confident and wrong": the wrong items by raw confidence, surest
    // first, ties by id, at most 20.
    let mut wrong: Vec<(&String, f64)> = items
        .iter()
        .filter(|(_, (_, correct))| !correct)
        .map(|(id, (p, _))| (id, *p))
        .collect();
    wrong.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    wrong.truncate(20);
    let wrong: Vec<String> = wrong.into_iter().map(|(id, _)| id.clone()).collect();
    assert!(
        !wrong.is_empty(),
        "the tiny run answers the odd functions wrong"
    );
    assert_eq!(result["results"][4], json!(wrong));

    let png = std::fs::read(&screenshot).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    eprintln!("screenshot: {}", screenshot.display());

    // `codecal report` rebuilds both reports from report.json, byte for byte.
    let md_before = std::fs::read(run.join("report.md")).unwrap();
    let html_before = std::fs::read(&page).unwrap();
    std::fs::remove_file(run.join("report.md")).unwrap();
    std::fs::remove_file(&page).unwrap();
    let rebuilt = common::codecal(&["report", run.to_str().unwrap()]);
    assert!(
        rebuilt.status.success(),
        "{}",
        String::from_utf8_lossy(&rebuilt.stderr)
    );
    assert_eq!(std::fs::read(run.join("report.md")).unwrap(), md_before);
    assert_eq!(std::fs::read(&page).unwrap(), html_before);
}

/// Issue "hardening, second round": run files cannot script the page. Three
/// attacks are planted in a finished run and the page rebuilt with
/// `codecal report`: a figure carrying a script, an event handler and a
/// foreignObject; an item text that closes the data's script element; and a
/// cell whose figures point outside the run directory at a scripted SVG.
/// In Chromium none of them runs, and the drill-down still lists the top
/// bar's items. An inconsistent report.json is a one-line error naming the
/// cell and item.
#[test]
fn planted_run_files_cannot_script_the_page() {
    let Some(chromium) = chromium() else { return };
    if common::model_files().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tiny = common::tiny::finished_run(dir.path());
    let run = tiny.dir.clone();
    let data_path = run.join("report.json");
    let mut data: Value =
        serde_json::from_str(&std::fs::read_to_string(&data_path).unwrap()).unwrap();
    let figures = data["cells"][0]["figures"].as_str().unwrap().to_owned();
    let reliability = run.join(&figures).join("reliability.svg");
    let svg = std::fs::read_to_string(&reliability).unwrap();
    let attacked = svg
        .replacen("<svg ", "<svg onload=\"window.__pwned='onload'\" ", 1)
        .replacen(
            "</svg>",
            "<script>window.__pwned='script'</script>\
             <foreignObject><img src=\"x\" onerror=\"window.__pwned='foreign'\"/></foreignObject>\
             <rect x=\"0\" y=\"0\" width=\"1\" height=\"1\" onmouseover=\"window.__pwned='handler'\"/></svg>",
            1,
        );
    std::fs::write(&reliability, attacked).unwrap();
    data["items"][0]["texts"][0]["text"] =
        json!("</script><script>window.__pwned='text'</script><!--");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        outside.join("reliability.svg"),
        "<svg><script>window.__pwned='outside'</script></svg>",
    )
    .unwrap();
    // Up from the cell's directory to the run, then up to the temp dir.
    let depth = figures.matches('/').count()
        + 1
        + run.strip_prefix(dir.path()).unwrap().components().count();
    let escape = std::iter::repeat_n("..", depth)
        .collect::<Vec<_>>()
        .join("/");
    assert!(
        run.join(&figures)
            .join(&escape)
            .join("outside/reliability.svg")
            .is_file()
    );
    data["cells"][1]["figures"] = json!(format!("{figures}/{escape}/outside"));
    std::fs::write(&data_path, data.to_string()).unwrap();
    let rebuilt = common::codecal(&["report", run.to_str().unwrap()]);
    assert!(
        rebuilt.status.success(),
        "{}",
        String::from_utf8_lossy(&rebuilt.stderr)
    );
    let page = run.join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("__pwned='outside'"),
        "a figure outside the run was read"
    );
    assert!(!html.contains("onload="), "the handler survived");

    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-html");
    std::fs::create_dir_all(&shots).unwrap();
    let top_bar = "#cell-0 [data-panel=\"raw\"] rect[data-bar]:last-of-type";
    let result = drive(
        &chromium,
        &page,
        &shots.join("planted.png"),
        json!([
            {"eval": "String(window.__pwned)"},
            {"click": top_bar},
            {"eval": "document.querySelectorAll('#cell-0 .drill tbody tr').length"},
            {"eval": "String(window.__pwned)"},
        ]),
    );
    assert_eq!(result["results"][0], json!("undefined"), "{result}");
    assert_eq!(result["results"][3], json!("undefined"), "{result}");
    assert!(
        result["results"][2].as_u64().unwrap() > 0,
        "drill-down: {result}"
    );

    // An item index past the report's items: one line naming the cell and item.
    data["cells"][0]["items"][0]["item"] = json!(9999);
    std::fs::write(&data_path, data.to_string()).unwrap();
    let out = common::codecal(&["report", run.to_str().unwrap()]);
    assert!(!out.status.success());
    let message = String::from_utf8_lossy(&out.stderr);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(
        message.contains("cell 0") && message.contains("item 0 points to item 9999"),
        "{message}"
    );
}

#[test]
fn report_opens_the_page_with_the_users_browser_and_refuses_a_directory_without_data() {
    let dir = tempfile::tempdir().unwrap();
    // A run directory needs report.json; the error names it and says how to get it.
    let out = common::codecal(&["report", dir.path().to_str().unwrap()]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("report.json") && stderr.contains("--resume"),
        "{stderr}"
    );

    // A minimal report.json rebuilds, and --open hands the page to $BROWSER.
    let data = json!({
        "format": codecal::report::run::REPORT_FORMAT,
        "title": "codecal run: t", "intro": "x", "header": codecal::report::run::RunHeader::default(),
        "tables": [], "notes": [], "sections": [], "items": [], "cells": []
    });
    std::fs::write(dir.path().join("report.json"), data.to_string()).unwrap();
    let seen = dir.path().join("opened.txt");
    let browser = dir.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\necho \"$1\" > {}\n", seen.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args(["report", dir.path().to_str().unwrap(), "--open"])
        .env("BROWSER", &browser)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("report.md").is_file());
    // The browser runs detached; beside the Chromium tests on two cores it
    // has taken over 5 s to start, so wait up to 30 s.
    // `echo > file` creates the file before it writes the line: wait for
    // the line's end, not for the file.
    let mut opened = String::new();
    for _ in 0..300 {
        opened = std::fs::read_to_string(&seen).unwrap_or_default();
        if opened.ends_with('\n') {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(opened.trim().ends_with("/report.html"), "{opened}");
}

/// A 1,000-item page stays small: CodeXGLUE's Java and Python test
/// functions (500 each, real code and comments), each with a made-up
/// summary and seeded confidences, in 2 languages x 3 measures x 3
/// operating points = 18 cells, every figure inlined. The limit is
/// 5 MB; where Chromium is there, the page's load time is printed.
#[test]
fn a_thousand_item_page_stays_under_five_megabytes() {
    use codecal::calibrate::{CalibrateOptions, CalibrationData, calibrate};
    use codecal::report::run::{
        CellView, ItemText, ItemView, REPORT_FORMAT, RunHeader, RunReport, write_run_report,
    };
    use rand::{Rng, SeedableRng};
    let mut items = Vec::new();
    for language in ["Java", "Python"] {
        let Some(path) = common::shared_data(&format!("fewshot-codexglue/{language}/test.jsonl"))
        else {
            return;
        };
        let (records, _) = codecal::corpus::read_codexglue(&path, false).unwrap();
        assert!(
            records.len() >= 500,
            "{}: {}",
            path.display(),
            records.len()
        );
        items.extend(records.into_iter().take(500).map(|r| ItemView {
            id: r.id.clone(),
            model: "model".into(),
            group: r.repo.clone(),
            texts: vec![
                ItemText {
                    label: "code".into(),
                    text: r.code.clone(),
                    code: true,
                },
                ItemText {
                    label: "reference".into(),
                    text: r.reference.clone(),
                    code: false,
                },
                ItemText {
                    label: "summary".into(),
                    text: format!("Summary of {}", r.func_name),
                    code: false,
                },
            ],
            numbers: vec![("sbert".into(), 0.5)],
            labels: vec![],
            headline: format!("Summary of {}", r.func_name),
        }));
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let options = CalibrateOptions {
        bootstrap: 50,
        ..CalibrateOptions::default()
    };
    let mut cells = Vec::new();
    for (l, language) in ["java", "python"].iter().enumerate() {
        let indices: Vec<usize> = (l * 500..(l + 1) * 500).collect();
        for measure in ["m1", "m2", "m3"] {
            for point in ["best-f1", "high-precision", "high-recall"] {
                let confidence: Vec<f64> = indices.iter().map(|_| rng.random::<f64>()).collect();
                let correct: Vec<bool> = confidence
                    .iter()
                    .map(|p| rng.random::<f64>() < *p)
                    .collect();
                let data = CalibrationData {
                    confidence: confidence.clone(),
                    correct: correct.clone(),
                    groups: None,
                    target: None,
                    features: Vec::new(),
                };
                let report = calibrate(&data, &options).unwrap();
                let figures = format!("calibration/{language}/{measure}/{point}");
                codecal::report::write_calibration_dir(&dir.path().join(&figures), &report)
                    .unwrap();
                cells.push(CellView::new(
                    &["language", "measure", "operating point"],
                    vec![language.to_string(), measure.into(), point.into()],
                    figures,
                    &report,
                    &confidence,
                    &correct,
                    &indices,
                ));
            }
        }
    }
    let report = RunReport {
        format: REPORT_FORMAT,
        title: "codecal run: size".into(),
        intro: "1,000 items.".into(),
        header: RunHeader::default(),
        tables: vec![],
        notes: vec![],
        sections: vec![],
        items,
        cells,
    };
    write_run_report(dir.path(), &report).unwrap();
    let page = dir.path().join("report.html");
    let bytes = std::fs::metadata(&page).unwrap().len();
    eprintln!(
        "a 1,000-item page with 18 cells: {:.2} MB",
        bytes as f64 / 1e6
    );
    assert!(bytes < 5_000_000, "{bytes} bytes");
    if let Some(chromium) = chromium() {
        let result = drive(
            &chromium,
            &page,
            Path::new(""),
            json!([
                {"eval": "document.querySelectorAll('details.item').length"}
            ]),
        );
        assert_eq!(result["results"][0], 1000);
        assert_eq!(result["errors"], json!([]));
        eprintln!("it loaded in {:.0} ms", result["load_ms"].as_f64().unwrap());
    }
}
