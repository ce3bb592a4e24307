//! Past one machine (issue "Past one machine"): generation over a pool of
//! real OpenAI-compatible server processes on loopback, one of them killed
//! mid-run; a pool endpoint serving another model; a run split into shards
//! run as separate processes in separate working directories and merged
//! into the one-piece run's exact bytes; merges that must be refused; and
//! the scheduler examples in the docs.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::server::Server;

const PROBLEMS: usize = 45;

/// One `tests/fixtures/openai_replica.py` process.
struct Replica {
    child: Child,
    url: String,
    log: PathBuf,
}

impl Replica {
    fn start(dir: &Path, name: &str, model: &str, extra: &[&str]) -> Replica {
        let port_file = dir.join(format!("{name}.port"));
        let log = dir.join(format!("{name}.log"));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openai_replica.py");
        let child = Command::new("python3")
            .arg(script)
            .args(["--model", model, "--delay", "0.02"])
            .arg("--port-file")
            .arg(&port_file)
            .arg("--log")
            .arg(&log)
            .args(extra)
            .spawn()
            .expect("python3 runs the replica");
        let start = Instant::now();
        while !port_file.exists() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{name} did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let port = std::fs::read_to_string(&port_file).unwrap();
        Replica {
            child,
            url: format!("http://127.0.0.1:{}/v1", port.trim()),
            log,
        }
    }

    /// The log's lines that start with `word`.
    fn logged(&self, word: &str) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.strip_prefix(word).map(|rest| rest.trim().to_owned()))
            .collect()
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A CRUXEval-O config over the given `[[backends]]` text.
fn config(dir: &Path, data: &Path, backends: &str, seed: u64) -> PathBuf {
    let text = format!(
        r#"name = "crux"
runs_dir = "{runs}"
task = "cruxeval-output"

[dataset]
path = "{data}"
problems = {PROBLEMS}
seed = {seed}

{backends}
[calibration]
confidence = ["average_token_probability", "total_probability"]
cv = "group"
folds = 3
bootstrap = 30
"#,
        runs = dir.join("runs").display(),
        data = data.display(),
    );
    let path = dir.join(format!("crux-{seed}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

fn pool_entry(url: &str, model: &str) -> String {
    format!(
        "[[backends]]\nkind = \"openai\"\npool = \"replicas\"\nbase_url = \"{url}\"\nmodel = \"{model}\"\n\
         concurrency = 2\nmax_retries = 1\nretry_base_ms = 20\nmax_wait_s = 1\ntimeout_s = 60\n\n"
    )
}

fn jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn needs() -> Option<PathBuf> {
    let data = common::shared_data("cruxeval/cruxeval.jsonl")?;
    common::sandbox(Default::default(), Default::default())?;
    Some(data)
}

#[test]
fn a_pool_loses_no_answer_and_asks_none_twice_when_an_endpoint_is_killed_mid_run() {
    let Some(data) = needs() else { return };
    let dir = tempfile::tempdir().unwrap();
    let model = "replica-model";
    let live_a = Replica::start(dir.path(), "a", model, &[]);
    // The victim answers 4 requests, then holds every later one unanswered
    // until it is killed.
    let victim = Replica::start(dir.path(), "victim", model, &["--hang-after", "4"]);
    let live_b = Replica::start(dir.path(), "b", model, &[]);
    let backends: String = [&live_a, &victim, &live_b]
        .iter()
        .map(|r| pool_entry(&r.url, model))
        .collect();
    let cfg = config(dir.path(), &data, &backends, 3);
    let run = Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args(["run", "--config", cfg.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while victim.logged("hanging").is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the victim never hung"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut victim = victim;
    victim.child.kill().unwrap();
    victim.child.wait().unwrap();
    let out = run.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let run_dir = dir.path().join("runs/crux");
    let label = format!("openai-{model}");
    let rows = jsonl(&run_dir.join(format!("generations/{label}.jsonl")));
    let problems = jsonl(&run_dir.join("problems.jsonl"));
    assert_eq!(rows.len(), PROBLEMS);
    for (row, problem) in rows.iter().zip(&problems) {
        assert_eq!(row["id"], problem["id"]);
    }
    // Every prompt answered exactly once across the three servers: the
    // victim's held requests went to the others, and nothing answered was
    // asked again.
    let mut answered: HashMap<String, usize> = HashMap::new();
    for replica in [&live_a, &victim, &live_b] {
        for prompt in replica.logged("answered") {
            *answered.entry(prompt).or_default() += 1;
        }
    }
    assert_eq!(answered.len(), PROBLEMS);
    assert!(answered.values().all(|&n| n == 1), "{answered:?}");
    assert_eq!(victim.logged("answered").len(), 4);
    assert!(!victim.logged("hanging").is_empty());

    let served: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run_dir.join(format!("generations/{label}.served.json"))).unwrap(),
    )
    .unwrap();
    let endpoints = served["endpoints"].as_array().unwrap();
    assert_eq!(endpoints.len(), 3);
    assert_eq!(endpoints[1]["base_url"], victim.url.as_str());
    assert_eq!(endpoints[1]["served"], 4);
    assert!(endpoints[1]["failures"].as_u64().unwrap() >= 1, "{served}");
    assert!(endpoints[1]["benched"].as_u64().unwrap() >= 1, "{served}");
    let total: u64 = endpoints
        .iter()
        .map(|e| e["served"].as_u64().unwrap())
        .sum();
    assert_eq!(total, PROBLEMS as u64);
    for live in [&endpoints[0], &endpoints[2]] {
        assert_eq!(live["failures"], 0, "{served}");
        assert_eq!(live["server"], "codecal-test-replica/1");
    }
    assert_eq!(served["answers"], PROBLEMS);
    assert_eq!(served["from_cache"], 0);
    assert!(run_dir.join("report.json").exists());
}

#[test]
fn a_pool_endpoint_serving_another_model_stops_the_run_before_any_request() {
    let Some(data) = needs() else { return };
    let dir = tempfile::tempdir().unwrap();
    let right = Replica::start(dir.path(), "right", "replica-model", &[]);
    let wrong = Replica::start(dir.path(), "wrong", "another-model", &[]);
    let backends =
        pool_entry(&right.url, "replica-model") + &pool_entry(&wrong.url, "replica-model");
    let cfg = config(dir.path(), &data, &backends, 3);
    let out = common::codecal(&["run", "--config", cfg.to_str().unwrap()]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("backends[1].base_url"), "{stderr}");
    assert!(stderr.contains(&wrong.url), "{stderr}");
    assert!(stderr.contains("another-model"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(right.logged("request").is_empty() && wrong.logged("request").is_empty());
    assert!(!dir.path().join("runs/crux/manifest.json").exists());
}

/// One endpoint set up unlike the others (no log-probabilities, replies
/// naming another model) no longer stops the pool: its requests go to the
/// endpoint that serves, each answered once. An endpoint listed twice is
/// refused, and what a server says of itself is kept without its escape
/// sequences (issue "hardening, third round").
#[test]
fn a_pool_serves_past_endpoints_set_up_unlike_the_others() {
    let Some(data) = needs() else { return };
    let dir = tempfile::tempdir().unwrap();
    let model = "replica-model";
    let good = Replica::start(
        dir.path(),
        "good",
        model,
        &["--version-text", "good\u{1b}]0;owned\u{7}\u{1b}[2J/1"],
    );
    let bare = Replica::start(dir.path(), "bare", model, &["--no-logprobs"]);
    let other = Replica::start(dir.path(), "other", model, &["--answer-model", "not-it"]);
    let backends: String = [&bare, &good, &other]
        .iter()
        .map(|r| pool_entry(&r.url, model))
        .collect();
    let cfg = config(dir.path(), &data, &backends, 3);
    let out = common::codecal(&["run", "--config", cfg.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "an escape sequence was printed");
    let run_dir = dir.path().join("runs/crux");
    let label = format!("openai-{model}");
    let served: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run_dir.join(format!("generations/{label}.served.json"))).unwrap(),
    )
    .unwrap();
    let endpoints = served["endpoints"].as_array().unwrap();
    assert_eq!(endpoints[1]["served"], PROBLEMS, "{served}");
    assert_eq!(endpoints[1]["server"], "vLLM good]0;owned[2J/1", "{served}");
    for (i, why) in [(0, "log-probabilities"), (2, "not-it")] {
        assert_eq!(endpoints[i]["served"], 0, "{served}");
        let last = endpoints[i]["last_failure"].as_str().unwrap_or_default();
        assert!(last.contains(why), "{served}");
    }
    let answered = good.logged("answered");
    let distinct: std::collections::HashSet<&String> = answered.iter().collect();
    assert_eq!((answered.len(), distinct.len()), (PROBLEMS, PROBLEMS));

    let twice = pool_entry(&good.url, model) + &pool_entry(&format!("{}/", good.url), model);
    let elsewhere = dir.path().join("twice");
    std::fs::create_dir(&elsewhere).unwrap();
    let cfg = config(&elsewhere, &data, &twice, 4);
    let out = common::codecal(&["run", "--config", cfg.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a pool with one endpoint twice ran");
    assert!(
        stderr.contains("twice") && stderr.contains(&good.url),
        "{stderr}"
    );
}

fn single_entry(server: &Server) -> String {
    format!(
        "[[backends]]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\nconcurrency = 2\nretry_base_ms = 10\n\n",
        server.base_url
    )
}

/// `codecal run` with `args`, from its own working directory, as a process
/// a scheduler would start; the report's clock is fixed.
fn spawn_run(workdir: &Path, args: &[&str]) -> Child {
    std::fs::create_dir_all(workdir).unwrap();
    Command::new(env!("CARGO_BIN_EXE_codecal"))
        .current_dir(workdir)
        .env("SOURCE_DATE_EPOCH", "1790000000")
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(child: Child) {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn merge(out: &Path, shards: &[PathBuf]) -> std::process::Output {
    let mut args = vec!["merge".to_owned(), out.display().to_string()];
    args.extend(shards.iter().map(|s| s.display().to_string()));
    Command::new(env!("CARGO_BIN_EXE_codecal"))
        .env("SOURCE_DATE_EPOCH", "1790000000")
        .args(&args)
        .output()
        .unwrap()
}

/// Every file under `dir`, relative, with its bytes.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            for (name, bytes) in tree(&path) {
                files.push((
                    format!("{}/{name}", entry.file_name().to_string_lossy()),
                    bytes,
                ));
            }
        } else {
            files.push((
                entry.file_name().to_string_lossy().into_owned(),
                std::fs::read(&path).unwrap(),
            ));
        }
    }
    files.sort();
    files
}

/// The one-piece run of `cfg` into `dir/whole/NAME`.
fn run_whole(dir: &Path, cfg: &Path, name: &str) -> PathBuf {
    let whole = dir.join("whole").join(name);
    let args = [
        "run",
        "--config",
        cfg.to_str().unwrap(),
        "--out",
        whole.to_str().unwrap(),
    ];
    finish(spawn_run(dir, &args));
    whole
}

/// The n shards of `cfg`, at once, each a process in its own working
/// directory `dir/node<i>`, writing `dir/node<i>/NAME`.
fn run_shards(dir: &Path, cfg: &Path, name: &str, n: usize) -> Vec<PathBuf> {
    let shards: Vec<PathBuf> = (0..n)
        .map(|i| dir.join(format!("node{i}")).join(name))
        .collect();
    let children: Vec<Child> = shards
        .iter()
        .enumerate()
        .map(|(i, out)| {
            let shard = format!("{i}/{n}");
            let args = [
                "run",
                "--config",
                cfg.to_str().unwrap(),
                "--shard",
                &shard,
                "--out",
                out.to_str().unwrap(),
            ];
            spawn_run(out.parent().unwrap(), &args)
        })
        .collect();
    children.into_iter().for_each(finish);
    shards
}

#[test]
fn three_shards_as_separate_processes_merge_into_the_one_piece_runs_bytes() {
    let Some(data) = needs() else { return };
    let dir = tempfile::tempdir().unwrap();
    let server = common::cruxeval_server(&data);
    let cfg = config(dir.path(), &data, &single_entry(&server), 3);
    let whole = run_whole(dir.path(), &cfg, "crux");
    assert_eq!(server.generation_requests(), PROBLEMS);
    let shards = run_shards(dir.path(), &cfg, "crux", 3);
    // Each item generated once over the three shards, and no shard calibrated.
    assert_eq!(server.generation_requests(), 2 * PROBLEMS);
    let mut owned = 0;
    for (i, shard) in shards.iter().enumerate() {
        let record: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(shard.join("shard.json")).unwrap())
                .unwrap();
        assert_eq!(record["shard"]["index"], i);
        assert_eq!(record["shard"]["count"], 3);
        let rows = jsonl(&shard.join("generations/openai-test-model.jsonl"));
        assert_eq!(record["items"], rows.len());
        owned += rows.len();
        assert!(!shard.join("report.json").exists());
    }
    assert_eq!(owned, PROBLEMS);

    let merged = dir.path().join("merged/crux");
    let out = merge(
        &merged,
        &[shards[2].clone(), shards[0].clone(), shards[1].clone()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        server.generation_requests(),
        2 * PROBLEMS,
        "a merge asks for nothing"
    );
    assert_eq!(
        std::fs::read(merged.join("report.json")).unwrap(),
        std::fs::read(whole.join("report.json")).unwrap(),
        "report.json differs"
    );
    let (merged_tables, whole_tables) = (tree(&merged.join("tables")), tree(&whole.join("tables")));
    assert!(!whole_tables.is_empty());
    let names = |t: &[(String, Vec<u8>)]| t.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&merged_tables), names(&whole_tables));
    for ((name, merged), (_, whole)) in merged_tables.iter().zip(&whole_tables) {
        assert!(merged == whole, "tables/{name} differs");
    }
    for file in [
        "generations/openai-test-model.jsonl",
        "verdicts/openai-test-model.jsonl",
    ] {
        assert_eq!(
            std::fs::read(merged.join(file)).unwrap(),
            std::fs::read(whole.join(file)).unwrap(),
            "{file}"
        );
    }

    // A shard missing.
    let out = merge(&dir.path().join("gap/crux"), &shards[..2]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("shard 2/3 is missing"), "{stderr}");
    assert!(!dir.path().join("gap/crux/report.json").exists());

    // A shard of another config (another sample of problems).
    let other_cfg = config(dir.path(), &data, &single_entry(&server), 4);
    let other = dir.path().join("other/crux");
    finish(spawn_run(
        &dir.path().join("other"),
        &[
            "run",
            "--config",
            other_cfg.to_str().unwrap(),
            "--shard",
            "2/3",
            "--out",
            other.to_str().unwrap(),
        ],
    ));
    let out = merge(
        &dir.path().join("mixed/crux"),
        &[shards[0].clone(), shards[1].clone(), other.clone()],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(&other.display().to_string()) && stderr.contains("another config"),
        "{stderr}"
    );

    // An overlap: shard 0 also holds one of shard 1's items.
    let file = "verdicts/openai-test-model.jsonl";
    let stolen = std::fs::read_to_string(shards[1].join(file)).unwrap();
    let stolen_line = stolen.lines().next().unwrap();
    let stolen_id = serde_json::from_str::<serde_json::Value>(stolen_line).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut tampered = std::fs::read_to_string(shards[0].join(file)).unwrap();
    tampered += stolen_line;
    tampered.push('\n');
    std::fs::write(shards[0].join(file), tampered).unwrap();
    let out = merge(&dir.path().join("overlap/crux"), &shards);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("an overlap") && stderr.contains(&stolen_id),
        "{stderr}"
    );
    assert!(
        stderr.contains(&shards[0].display().to_string()),
        "{stderr}"
    );
}

/// The `--shard` values in the scale-out page's Slurm and Kubernetes
/// examples, with the scheduler's index variable set to each index the
/// example's array gives it, all parse as the CLI parses them and cover
/// 0..n exactly.
#[test]
fn the_scheduler_examples_name_shards_the_cli_parses() {
    let page = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/guide/scale-out.md"),
    )
    .unwrap();
    let shard_arg = |variable: &str| -> String {
        let line = page
            .lines()
            .find(|l| l.contains("--shard") && l.contains(variable))
            .unwrap_or_else(|| panic!("no --shard line with {variable}"));
        let start = line.find("--shard").unwrap() + "--shard".len();
        line[start..]
            .split_whitespace()
            .next()
            .unwrap()
            .trim_matches('"')
            .to_owned()
    };
    let number_after = |key: &str| -> usize {
        let line = page
            .lines()
            .find(|l| l.contains(key))
            .unwrap_or_else(|| panic!("no {key}"));
        let rest = &line[line.find(key).unwrap() + key.len()..];
        rest.trim_start_matches([' ', ':', '='])
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    // Slurm: #SBATCH --array=0-LAST.
    let slurm = shard_arg("SLURM_ARRAY_TASK_ID");
    let last = {
        let line = page
            .lines()
            .find(|l| l.contains("#SBATCH --array="))
            .unwrap();
        let range = line.split("--array=").nth(1).unwrap();
        range
            .split('-')
            .nth(1)
            .unwrap()
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse::<usize>()
            .unwrap()
    };
    // Kubernetes Indexed Job: completions: N.
    let kubernetes = shard_arg("JOB_COMPLETION_INDEX");
    let completions = number_after("completions");
    for (template, variable, count) in [
        (slurm, "${SLURM_ARRAY_TASK_ID}", last + 1),
        (kubernetes, "${JOB_COMPLETION_INDEX}", completions),
    ] {
        let mut seen = Vec::new();
        for index in 0..count {
            let text = template.replace(variable, &index.to_string());
            let shard = codecal::pipeline::Shard::parse(&text)
                .unwrap_or_else(|e| panic!("{template} at {index}: {e}"));
            assert_eq!(shard.count, count, "{template}: n is not the array's size");
            seen.push(shard.index);
        }
        assert_eq!(seen, (0..count).collect::<Vec<_>>());
        // And the CLI takes it (it fails later, on the missing config).
        let text = template.replace(variable, "0");
        let out = common::codecal(&["run", "--config", "/nonexistent.toml", "--shard", &text]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("/nonexistent.toml") && !stderr.contains("--shard"),
            "{stderr}"
        );
    }
}

/// `codecal generate` over a pool, then through another endpoint of the
/// same model with the same cache: every answer comes from the cache, so
/// the key never named the endpoint that served it.
#[test]
fn the_cache_key_does_not_name_the_endpoint_that_answered() {
    let dir = tempfile::tempdir().unwrap();
    let replicas: Vec<Replica> = ["a", "b", "c"]
        .iter()
        .map(|name| Replica::start(dir.path(), name, "m", &[]))
        .collect();
    let prompts = dir.path().join("prompts.jsonl");
    let lines: String = (0..20)
        .map(|i| format!("{{\"id\": \"q{i}\", \"prompt\": \"assert f({i}) == ??\"}}\n"))
        .collect();
    std::fs::write(&prompts, lines).unwrap();
    let cache = dir.path().join("cache.sqlite");
    let generate = |out: &str, urls: &[&Replica]| {
        let mut args = vec![
            "generate".to_owned(),
            "--prompts".to_owned(),
            prompts.display().to_string(),
            "--out".to_owned(),
            dir.path().join(out).display().to_string(),
            "--cache".to_owned(),
            cache.display().to_string(),
            "--backend".to_owned(),
            "openai".to_owned(),
            "--model".to_owned(),
            "m".to_owned(),
        ];
        for replica in urls {
            args.push("--base-url".to_owned());
            args.push(replica.url.clone());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = common::codecal(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let pooled = generate("pooled.jsonl", &[&replicas[0], &replicas[1]]);
    assert!(pooled.contains("20 prompts (0 from the cache)"), "{pooled}");
    for replica in &replicas[..2] {
        assert!(pooled.contains(&format!("{}: ", replica.url)), "{pooled}");
    }
    let alone = generate("alone.jsonl", &[&replicas[2]]);
    assert!(alone.contains("20 prompts (20 from the cache)"), "{alone}");
    assert!(replicas[2].logged("request").is_empty());
    let texts = |file: &str| -> Vec<serde_json::Value> {
        jsonl(&dir.path().join(file))
            .iter()
            .map(|row| row["text"].clone())
            .collect()
    };
    assert_eq!(texts("pooled.jsonl"), texts("alone.jsonl"));
}

/// The summarization flow too: MiniLM scores each shard's summaries in
/// batches of other texts than the one-piece run's, and the merged report
/// and tables must still be the one-piece run's bytes.
#[test]
fn summarization_shards_merge_into_the_one_piece_runs_bytes() {
    if common::model_files().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(|seen, _| common::tiny::answer(seen));
    let cfg = common::tiny::config(dir.path(), &server, "");
    let whole = run_whole(dir.path(), &cfg, "tiny");
    let shards = run_shards(dir.path(), &cfg, "tiny", 3);
    let merged = dir.path().join("merged/tiny");
    let out = merge(&merged, &shards);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for file in ["report.json", "scores/openai-test-model.csv"] {
        assert!(
            std::fs::read(merged.join(file)).unwrap() == std::fs::read(whole.join(file)).unwrap(),
            "{file} differs"
        );
    }
    assert_eq!(tree(&merged.join("tables")), tree(&whole.join("tables")));
}

/// Entries that would write the same files, or a pool whose endpoints would
/// not answer alike, are refused by the config check, naming the key.
#[test]
fn entries_that_do_not_answer_alike_are_refused_naming_the_key() {
    let Some(data) = common::shared_data("cruxeval/cruxeval.jsonl") else {
        return;
    };
    let server = Server::start(|_, _| {
        common::server::json(
            200,
            &serde_json::json!({"data": [{"id": "m"}, {"id": "other"}]}),
        )
    });
    let entry = |pool: &str, model: &str, extra: &str| {
        format!(
            "[[backends]]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"{model}\"\n{pool}{extra}\n",
            server.base_url
        )
    };
    let pooled = "pool = \"p\"\n";
    let cases = [
        (
            entry("", "m", "") + &entry("", "m", ""),
            "backends[1]: answers as backends[0]",
        ),
        (
            entry(pooled, "m", "") + &entry(pooled, "m", "extra = { repeat_penalty = 1.0 }\n"),
            "backends[1].extra: differs from backends[0]'s, in the same pool \"p\"",
        ),
        (
            entry(pooled, "m", "") + &entry("", "x", "") + &entry(pooled, "other", ""),
            "backends[2].model: differs from backends[0]'s, in the same pool \"p\"",
        ),
        (
            entry(pooled, "m", "") + &entry("", "m", ""),
            "backends[1]: answers as backends[0]",
        ),
    ];
    for (backends, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(dir.path(), &data, &backends, 3);
        let out = common::codecal(&["run", "--config", cfg.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(stderr.contains(expected), "{expected}: {stderr}");
        assert_eq!(server.generation_requests(), 0);
    }
}

/// Copies the tree at `from` to `to`.
fn copy_tree(from: &Path, to: &Path) {
    for (name, bytes) in tree(from) {
        let path = to.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

/// Rewrites the JSON file at `path` with `edit`.
fn edit_json(path: &Path, edit: &dyn Fn(&mut serde_json::Value)) {
    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut value);
    std::fs::write(path, value.to_string()).unwrap();
}

type Edit = Box<dyn Fn(&mut serde_json::Value)>;

/// A tampered `shard.json` or manifest is refused on one line naming the
/// file, before anything is written, without asking the server again; and
/// a merge whose dataset is missing leaves OUT untouched, so that the retry
/// works (issue "hardening, third round": each of these panicked, wrote
/// outside OUT, left it half-written, or asked the server again).
#[test]
fn tampered_shards_are_refused_before_anything_is_written() {
    let Some(shared) = needs() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("cruxeval.jsonl");
    std::fs::copy(&shared, &data).unwrap();
    let server = common::cruxeval_server(&data);
    let cfg = config(dir.path(), &data, &single_entry(&server), 3);
    let shards = run_shards(dir.path(), &cfg, "crux", 2);
    let asked = server.generation_requests();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "mine").unwrap();
    let absolute = victim.display().to_string();
    let edits: Vec<(&str, &str, Edit)> = vec![
        (
            "index past count",
            "shard.json",
            Box::new(|v| v["shard"]["index"] = 5.into()),
        ),
        (
            "count 0",
            "shard.json",
            Box::new(|v| v["shard"]["count"] = 0.into()),
        ),
        (
            "huge count",
            "shard.json",
            Box::new(|v| v["shard"]["count"] = (1u64 << 60).into()),
        ),
        (
            "path out",
            "shard.json",
            Box::new(|v| v["item_outputs"][0] = "../../../victim.txt".into()),
        ),
        (
            "absolute path",
            "shard.json",
            Box::new(move |v| v["item_outputs"][0] = absolute.clone().into()),
        ),
        (
            "short outputs",
            "shard.json",
            Box::new(|v| drop(v["item_outputs"].as_array_mut().unwrap().pop())),
        ),
        (
            "wrong items",
            "shard.json",
            Box::new(|v| v["items"] = 1000.into()),
        ),
        (
            "manifest path out",
            "manifest.json",
            Box::new(|v| {
                for stage in v["stages"].as_object_mut().unwrap().values_mut() {
                    stage["outputs"][0] = "../../../victim.txt".into();
                }
            }),
        ),
    ];
    for (case, file, edit) in edits {
        let copies: Vec<PathBuf> = (0..2)
            .map(|i| dir.path().join(case).join(format!("node{i}/crux")))
            .collect();
        for (shard, copy) in shards.iter().zip(&copies) {
            copy_tree(shard, copy);
        }
        edit_json(&copies[0].join(file), &*edit);
        let merged = dir.path().join(case).join("merged/crux");
        let out = merge(&merged, &copies);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{case}: merged");
        assert!(
            stderr.contains(file) && stderr.trim().lines().count() == 1,
            "{case}: {stderr}"
        );
        assert!(!merged.exists(), "{case}: OUT was written");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine", "{case}");
        assert_eq!(server.generation_requests(), asked, "{case}: asked again");
    }
    // A FIFO for a shard's file is refused, not read (the read would hang).
    let copies: Vec<PathBuf> = (0..2)
        .map(|i| dir.path().join("fifo").join(format!("node{i}/crux")))
        .collect();
    for (shard, copy) in shards.iter().zip(&copies) {
        copy_tree(shard, copy);
    }
    let prompts = copies[1].join("prompts.jsonl");
    std::fs::remove_file(&prompts).unwrap();
    let name = std::ffi::CString::new(prompts.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
    let out = merge(&dir.path().join("fifo/merged/crux"), &copies);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("FIFO"), "{stderr}");
    let merged = dir.path().join("merged/crux");
    std::fs::rename(&data, dir.path().join("away.jsonl")).unwrap();
    let out = merge(&merged, &shards);
    assert!(!out.status.success(), "merged without the dataset");
    assert!(!merged.exists(), "OUT was written without the dataset");
    std::fs::rename(dir.path().join("away.jsonl"), &data).unwrap();
    let out = merge(&merged, &shards);
    assert!(
        out.status.success(),
        "the retry: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(server.generation_requests(), asked, "the merge asked again");
}
