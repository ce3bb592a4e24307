//! `codecal summarize PATH` on a small tree with documented and undocumented
//! functions, a test backend on loopback and a saved calibrator: every
//! function once with its decision, a second run served from the cache, and
//! a calibrator made for another model or prompt refused, naming both.

mod common;

use std::path::{Path, PathBuf};

use codecal::calibrate::calibrator::{
    FORMAT, FORMAT_VERSION, Generator, LabelDefinition, SavedRescaler, Training,
};
use codecal::calibrate::rescale::{Feature, Method, Platt};
use codecal::calibrate::{Calibrator, Cutoff, Cutoffs, CvStrategy};
use common::server::{Server, completion, json};

const TREE: [(&str, &str); 3] = [
    (
        "pkg/shapes.py",
        r#"def area(width, height):
    """Return the area of a rectangle with the given sides."""
    product = width * height
    return product


def perimeter(width, height):
    """Return the perimeter of a rectangle with the given sides."""
    total = 2 * (width + height)
    return total


def scale(points, factor):
    scaled = [p * factor for p in points]
    return scaled
"#,
    ),
    (
        "pkg/text.py",
        r#"def shout(message):
    """Return the message in upper case with an exclamation mark."""
    loud = message.upper()
    return loud + "!"


def words(text):
    parts = text.split()
    return [p for p in parts if p]
"#,
    ),
    (
        "pkg/test_shapes.py",
        r#"def test_area():
    assert area(2, 3) == 6
    assert area(0, 3) == 0
"#,
    ),
];

fn write_tree(root: &Path) {
    for (path, text) in TREE {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// Surer of summaries for functions whose name has an even length.
fn server() -> Server {
    Server::start(|seen, _| {
        let prompt = seen.body["prompt"].as_str().unwrap_or("");
        let query = prompt.rsplit("def ").next().unwrap_or("");
        let name = query.split('(').next().unwrap_or("");
        let p = if name.len() % 2 == 0 { 0.95 } else { 0.4 };
        json(
            200,
            &completion(&[(" Compute", p), (" the", p), (" value", p), (" .", p)]),
        )
    })
}

fn config(dir: &Path, server: &Server) -> PathBuf {
    let thresholds = Path::new(env!("CARGO_MANIFEST_DIR")).join("thresholds/sbert-minilm.toml");
    let text = format!(
        r#"name = "own"
runs_dir = "{runs}"

[corpus]
source = "python-stdlib"

[[backends]]
kind = "openai"
base_url = "{url}"
model = "test-model"
concurrency = 2
retry_base_ms = 10

[scoring]
thresholds = "{thresholds}"
"#,
        runs = dir.join("runs").display(),
        url = server.base_url,
        thresholds = thresholds.display(),
    );
    let path = dir.join("run.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A calibrator for `model`: identity Platt (slope 1, intercept 0 on the
/// logit), accept at 0.9 and above.
/// The decoding a summary run uses: one line, ended early where the reply
/// runs into the template's next block.
fn summary_params(template: &str) -> codecal::generate::Params {
    let mut params = codecal::generate::Params::default();
    if let Ok(template) = codecal::prompt::Template::parse(template, "test") {
        params.stop.extend(template.stops());
    }
    params
}

fn calibrator(model: &str, template: &str) -> Calibrator {
    Calibrator {
        format: FORMAT.into(),
        format_version: FORMAT_VERSION,
        codecal_version: env!("CARGO_PKG_VERSION").into(),
        measure: "average_token_probability".into(),
        method: Method::Platt,
        rescaler: Some(SavedRescaler::Logistic(Platt {
            feature: Feature::Logit,
            slope: 1.0,
            intercept: 0.0,
        })),
        combination: None,
        label: LabelDefinition::default(),
        generator: Some(Generator {
            backend: "openai".into(),
            model: model.into(),
            model_sha256: None,
            prompt_template_sha256: codecal::digest::sha256_hex(template.as_bytes()),
            decoding: serde_json::to_value(summary_params(template)).unwrap(),
        }),
        training: Training {
            n: 100,
            base_rate: 0.5,
            cv: CvStrategy::Group,
            folds: 5,
            seed: 0,
            metrics: serde_json::Value::Null,
        },
        cutoffs_on: "out-of-fold".into(),
        cutoffs: Cutoffs {
            delta: 0.1,
            grid: 100,
            items: 100,
            accept: vec![Cutoff {
                target_precision: 0.9,
                cutoff: Some(0.9),
                decided: 40,
                mistakes: 1,
                mistake_bound: Some(0.09),
                coverage: 0.4,
                realised_precision: Some(0.975),
                ..Cutoff::none(0.9)
            }],
            reject: Some(Cutoff {
                target_precision: 0.9,
                cutoff: Some(0.5),
                decided: 30,
                mistakes: 1,
                mistake_bound: Some(0.09),
                coverage: 0.3,
                realised_precision: Some(0.97),
                ..Cutoff::none(0.9)
            }),
            procedure: codecal::calibrate::Procedure::FixedSequence,
            min_coverage: None,
            groups: None,
            rule: None,
        },
        multicalibration: None,
    }
}

/// The seed template's calibrator for `test-model`, saved in `dir`.
fn seed_calibrator(dir: &Path) -> PathBuf {
    let saved = dir.join("calibrator.json");
    calibrator("test-model", codecal::prompt::SEED_TEMPLATE)
        .save(&saved)
        .unwrap();
    saved
}

fn summarize(dir: &Path, config: &Path, calibrator: &Path) -> std::process::Output {
    common::codecal(&[
        "summarize",
        dir.join("tree").to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--calibrator",
        calibrator.to_str().unwrap(),
        "--out",
        dir.join("out").to_str().unwrap(),
    ])
}

#[test]
fn every_function_gets_one_decision_and_a_rerun_asks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(&dir.path().join("tree"));
    let server = server();
    let config = config(dir.path(), &server);
    let saved = seed_calibrator(dir.path());

    let out = summarize(dir.path(), &config, &saved);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.path().join("out/summaries.jsonl")).unwrap();
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut functions: Vec<&str> = rows
        .iter()
        .map(|r| r["function"].as_str().unwrap())
        .collect();
    functions.sort();
    // The test file's function is left out; documented and undocumented ones are in.
    assert_eq!(functions, ["area", "perimeter", "scale", "shout", "words"]);
    for row in &rows {
        let name = row["function"].as_str().unwrap();
        let expected = if name.len() % 2 == 0 {
            "accept"
        } else {
            "reject"
        };
        assert_eq!(row["decision"], expected, "{row}");
        // Identity Platt: calibrated equals raw.
        let raw = row["raw_confidence"].as_f64().unwrap();
        assert!((row["calibrated"].as_f64().unwrap() - raw).abs() < 1e-12);
        assert_eq!(row["summary"], " Compute the value .");
        let documented = ["area", "perimeter", "shout"].contains(&name);
        assert_eq!(row["documented"], documented, "{row}");
        // Exemplars are documented functions, never the function itself.
        for exemplar in row["exemplars"].as_array().unwrap() {
            let exemplar = exemplar.as_str().unwrap();
            assert!(!exemplar.ends_with(&format!(":{name}")), "{row}");
        }
    }
    let markdown = String::from_utf8(out.stdout).unwrap();
    assert!(
        markdown.contains("5 functions: 1 accepted, 0 to review, 4 rejected"),
        "{markdown}"
    );

    let asked = server.generation_requests();
    assert_eq!(asked, 5);
    let again = summarize(dir.path(), &config, &saved);
    assert!(again.status.success());
    assert_eq!(server.generation_requests(), asked, "the rerun asked again");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out/summaries.jsonl")).unwrap(),
        text
    );
}

#[test]
fn a_calibrator_for_another_model_or_prompt_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(&dir.path().join("tree"));
    let server = server();
    let config = config(dir.path(), &server);
    let other_model = dir.path().join("other-model.json");
    calibrator("gpt-4o", codecal::prompt::SEED_TEMPLATE)
        .save(&other_model)
        .unwrap();
    let out = summarize(dir.path(), &config, &other_model);
    assert!(!out.status.success());
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(
        message.contains("test-model") && message.contains("gpt-4o"),
        "{message}"
    );

    let other_prompt = dir.path().join("other-prompt.json");
    calibrator("test-model", "[exemplar]\nanother template\n[query]\n")
        .save(&other_prompt)
        .unwrap();
    let out = summarize(dir.path(), &config, &other_prompt);
    assert!(!out.status.success());
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(message.contains("prompt template"), "{message}");
    assert_eq!(server.generation_requests(), 0, "refused before asking");
}

/// Issue "hardening, second round": a source file that cannot be read is
/// listed with its reason, and an `--out` that is a file is refused saying
/// it must be a directory.
#[test]
fn unreadable_files_are_listed_and_out_must_be_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(&dir.path().join("tree"));
    std::fs::write(
        dir.path().join("tree/latin1.py"),
        b"def f():\n    return '\xe9t\xe9'\n",
    )
    .unwrap();
    let server = server();
    let config = config(dir.path(), &server);
    let saved = seed_calibrator(dir.path());
    let out = summarize(dir.path(), &config, &saved);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("codecal: skipped latin1.py: file not readable as UTF-8"),
        "{stderr}"
    );

    let file = dir.path().join("out-file");
    std::fs::write(&file, "").unwrap();
    let out = common::codecal(&[
        "summarize",
        dir.path().join("tree").to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--calibrator",
        saved.to_str().unwrap(),
        "--out",
        file.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("must be a directory"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

/// A `summaries.md` the user wrote is never replaced, and a file name with
/// Markdown, HTML or a backtick in it shows in `summaries.md` as written,
/// inside a code span (issue "hardening, third round").
#[test]
fn a_users_own_summaries_md_is_kept_and_file_names_stay_inert() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(&dir.path().join("tree"));
    let odd = dir.path().join("tree/<img src=x onerror=alert(1)>`y`|z.py");
    std::fs::write(
        &odd,
        "def odd(number):\n    larger = number + 1\n    return larger\n",
    )
    .unwrap();
    let server = server();
    let config = config(dir.path(), &server);
    let saved = seed_calibrator(dir.path());
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let notes = dir.path().join("out/summaries.md");
    std::fs::write(&notes, "my own notes\n").unwrap();
    let out = summarize(dir.path(), &config, &saved);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "the user's summaries.md was replaced"
    );
    assert!(stderr.contains("summaries.md"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my own notes\n");
    assert_eq!(server.generation_requests(), 0);

    std::fs::remove_file(&notes).unwrap();
    let out = summarize(dir.path(), &config, &saved);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let markdown = std::fs::read_to_string(&notes).unwrap();
    let row = markdown
        .lines()
        .find(|line| line.contains("odd"))
        .expect("a row for odd");
    assert!(
        row.starts_with("| `` ") && row.contains("<img src=x onerror=alert(1)>`y`\\|z.py ``"),
        "{row}"
    );
}
