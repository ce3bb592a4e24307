//! The pipeline tests' tiny summarization run: 48 Python records in
//! CodeXGLUE's format, a loopback OpenAI-compatible server that answers the
//! even-numbered functions right and confidently and the odd ones wrong and
//! unsure, and a run config over both (MiniLM scores the summaries).

use std::path::{Path, PathBuf};

use super::server::{Reply, Server, completion, json};

pub const REPOS: [&str; 6] = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];
pub const VERBS: [(&str, &str); 8] = [
    ("add", "Add the two numbers ."),
    ("remove", "Remove the item from the list ."),
    ("parse", "Parse the configuration file ."),
    ("render", "Render the page as HTML ."),
    ("connect", "Connect to the database server ."),
    ("sort", "Sort the records by date ."),
    ("encode", "Encode the string as UTF-8 bytes ."),
    ("close", "Close the open file handle ."),
];

/// 48 Python records in CodeXGLUE's format: 8 functions in each of 6 repositories.
pub fn write_corpus(path: &Path) {
    let mut lines = String::new();
    for (r, repo) in REPOS.iter().enumerate() {
        for (v, (verb, summary)) in VERBS.iter().enumerate() {
            let name = format!("{verb}_{repo}_{v}");
            let code =
                format!("def {name}(x, y):\n    result = {verb}(x, y, {r})\n    return result");
            let record = serde_json::json!({
                "repo": format!("org/{repo}"),
                "path": format!("{repo}/mod.py"),
                "func_name": name,
                "language": "python",
                "original_string": code,
                "code": code,
                "code_tokens": code.split_whitespace().collect::<Vec<_>>(),
                "docstring": summary,
                "docstring_tokens": summary.split(' ').collect::<Vec<_>>(),
                "url": format!("https://example.org/{repo}/{name}"),
                "partition": "test",
            });
            lines += &format!("{record}\n");
        }
    }
    std::fs::write(path, lines).unwrap();
}

/// Answers with the right summary, confidently, for even-numbered functions
/// and with a wrong one, unsure, for odd ones, so confidence predicts correctness.
pub fn answer(seen: &super::server::Seen) -> Reply {
    let prompt = seen.body["prompt"].as_str().unwrap_or("");
    let query = prompt.rsplit("def ").next().unwrap_or("");
    if prompt.contains("Answer True or False") {
        // The judge is surer of the answers that were right.
        let right = !prompt.contains("Proposed comment: The weather");
        let p = if right { 0.8 } else { 0.3 } + (query.len() % 3) as f64 * 0.05;
        let mut reply = completion(&[(" True", p)]);
        reply["choices"][0]["logprobs"]["top_logprobs"] =
            serde_json::json!([{" True": p.ln(), " False": (1.0 - p).ln()}]);
        return json(200, &reply);
    }
    let name = query.split('(').next().unwrap_or("");
    let verb = name.split('_').next().unwrap_or("");
    let index: usize = name
        .rsplit('_')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let right = VERBS
        .iter()
        .find(|(v, _)| *v == verb)
        .map(|(_, s)| *s)
        .unwrap_or("Do it .");
    let noise = (name.len() % 5) as f64 * 0.02;
    let tokens: Vec<(String, f64)> = if index.is_multiple_of(2) {
        right
            .split(' ')
            .map(|w| (format!(" {w}"), 0.85 + noise))
            .collect()
    } else {
        " The weather is nice today ."
            .split(' ')
            .skip(1)
            .map(|w| (format!(" {w}"), 0.35 + noise))
            .collect()
    };
    let tokens: Vec<(&str, f64)> = tokens.iter().map(|(t, p)| (t.as_str(), *p)).collect();
    json(200, &completion(&tokens))
}

pub fn config(dir: &Path, server: &Server, extra: &str) -> PathBuf {
    let corpus = dir.join("corpus.jsonl");
    write_corpus(&corpus);
    let thresholds = Path::new(env!("CARGO_MANIFEST_DIR")).join("thresholds/sbert-minilm.toml");
    let text = format!(
        r#"name = "tiny"
runs_dir = "{runs}"

[corpus]
source = "codexglue"
paths = ["{corpus}"]
queries = 24
seed = 7

[[backends]]
kind = "openai"
base_url = "{url}"
model = "test-model"
concurrency = 2
retry_base_ms = 10

[scoring]
thresholds = "{thresholds}"

[generation]
reflective = ["ask-true"]

[calibration]
confidence = ["average_token_probability", "minimum_token_probability"]
folds = 3
bootstrap = 50
{extra}"#,
        runs = dir.join("runs").display(),
        corpus = corpus.display(),
        url = server.base_url,
        thresholds = thresholds.display(),
    );
    let path = dir.join("run.toml");
    std::fs::write(&path, text).unwrap();
    path
}

pub fn run_dir(dir: &Path) -> PathBuf {
    dir.join("runs/tiny")
}

/// The tiny run, finished: its server (still answering), config file, run
/// directory and `codecal run`'s output.
pub struct FinishedRun {
    pub server: Server,
    pub config: PathBuf,
    pub dir: PathBuf,
    pub output: std::process::Output,
}

/// Runs the tiny config in `dir`. Panics, with codecal's stderr, if the run fails.
pub fn finished_run(dir: &Path) -> FinishedRun {
    let server = Server::start(|seen, _| answer(seen));
    let cfg = config(dir, &server, "");
    let output = super::codecal(&["run", "--config", cfg.to_str().unwrap()]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    FinishedRun {
        server,
        config: cfg,
        dir: run_dir(dir),
        output,
    }
}
