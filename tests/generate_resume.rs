//! A generation run killed with SIGKILL mid-way and started again: every
//! prompt comes out exactly once, no answered prompt is requested again, and
//! the cache database is intact.

mod common;

use std::collections::HashMap;
use std::process::{Child, Command};
use std::time::Duration;

use codecal::generate::cache::{Cache, request_key};
use codecal::generate::{BackendId, Params};
use codecal::prompt::Prompt;
use common::server::{Reply, Server, completion, json};

const PROMPTS: usize = 40;

fn prompt_text(i: usize) -> String {
    format!("int f{i}() {{ return {i}; }}\nComment:")
}

fn spawn(server: &Server, dir: &std::path::Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args([
            "generate",
            "--backend",
            "openai",
            "--model",
            "m",
            "--concurrency",
            "3",
        ])
        .args(["--base-url", &server.base_url])
        .arg("--prompts")
        .arg(dir.join("prompts.jsonl"))
        .arg("--out")
        .arg(dir.join("out.jsonl"))
        .arg("--cache")
        .arg(dir.join("cache.sqlite"))
        .spawn()
        .unwrap()
}

#[test]
fn killed_run_resumes_without_repeating_or_losing_prompts() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..PROMPTS)
        .map(|i| {
            format!(
                "{}\n",
                serde_json::json!({"id": format!("q{i}"), "prompt": prompt_text(i)})
            )
        })
        .collect();
    std::fs::write(dir.path().join("prompts.jsonl"), lines).unwrap();
    // Each answer takes 50 ms, so the run is still going when it is killed.
    let server = Server::start(|seen, _| {
        let text = seen.body["prompt"].as_str().unwrap_or("").to_owned();
        let word = text.split_whitespace().nth(1).unwrap_or("f").to_owned();
        Reply::Delay(
            Duration::from_millis(50),
            Box::new(json(
                200,
                &completion(&[(" Returns", 0.5), (&format!(" {word}"), 0.8)]),
            )),
        )
    });

    let mut child = spawn(&server, dir.path());
    server.wait_for_answers(12, Duration::from_secs(60));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(
        !dir.path().join("out.jsonl").exists(),
        "no half-written output"
    );

    let cache = Cache::open(&dir.path().join("cache.sqlite")).unwrap();
    assert_eq!(cache.integrity_check().unwrap(), "ok");
    let backend = BackendId {
        kind: "openai".into(),
        model: "m".into(),
        ..BackendId::default()
    };
    let stored: Vec<String> = (0..PROMPTS)
        .map(prompt_text)
        .filter(|p| {
            let key = request_key(&backend, &Prompt::Completion(p.clone()), &Params::default());
            cache.get(&key).unwrap().is_some()
        })
        .collect();
    // Up to three answers (the concurrency) may be on the wire, not yet stored.
    assert!(
        stored.len() >= 12 - 3 && stored.len() < PROMPTS,
        "{} stored",
        stored.len()
    );
    let before = server.requests();

    let status = spawn(&server, dir.path()).wait().unwrap();
    assert!(status.success());

    let after: Vec<String> = server.seen.lock().unwrap()[before..]
        .iter()
        .map(|s| s.body["prompt"].as_str().unwrap().to_owned())
        .collect();
    for prompt in &stored {
        assert!(
            !after.contains(prompt),
            "{prompt:?} was answered before the kill and asked again"
        );
    }
    let mut asked: HashMap<String, usize> = HashMap::new();
    for s in server.seen.lock().unwrap().iter() {
        *asked
            .entry(s.body["prompt"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    // A prompt in flight at the kill may be asked twice; none more.
    assert!(asked.values().all(|&n| n <= 2), "{asked:?}");
    assert_eq!(asked.len(), PROMPTS);

    let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    let ids: Vec<String> = out
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let expected: Vec<String> = (0..PROMPTS).map(|i| format!("q{i}")).collect();
    assert_eq!(ids, expected, "every prompt exactly once, in order");
    let cached = out
        .lines()
        .filter(|l| l.contains("\"cached\":true"))
        .count();
    assert_eq!(
        cached,
        stored.len(),
        "the answers from before the kill came from the cache"
    );
}

/// The same with the local model decoding four prompts at once
/// (`--parallel 4`): answers are committed one by one as each sequence ends,
/// so a kill loses at most the four in flight, and the restarted run serves
/// every stored answer from the cache without generating it again.
#[cfg(feature = "local")]
#[test]
fn killed_local_run_with_four_in_flight_resumes() {
    if common::smollm2_file().is_none() {
        return;
    }
    const LOCAL_PROMPTS: usize = 16;
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..LOCAL_PROMPTS)
        .map(|i| {
            let prompt = format!("def f{i}(x):\n    return x + {i}\n\n# Summary of f{i}:");
            format!(
                "{}\n",
                serde_json::json!({"id": format!("q{i}"), "prompt": prompt})
            )
        })
        .collect();
    std::fs::write(dir.path().join("prompts.jsonl"), lines).unwrap();
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_codecal"))
            .args(["generate", "--backend", "local", "--parallel", "4"])
            .args(["--max-tokens", "24", "--no-stop"])
            .arg("--prompts")
            .arg(dir.path().join("prompts.jsonl"))
            .arg("--out")
            .arg(dir.path().join("out.jsonl"))
            .arg("--cache")
            .arg(dir.path().join("cache.sqlite"))
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let stored_rows = || -> HashMap<String, i64> {
        let path = dir.path().join("cache.sqlite");
        if !path.exists() {
            return HashMap::new();
        }
        let db = rusqlite::Connection::open(&path).unwrap();
        db.busy_timeout(Duration::from_secs(10)).unwrap();
        // The file exists a moment before its table does.
        let Ok(mut query) = db.prepare("SELECT key, rowid FROM generations") else {
            return HashMap::new();
        };
        query
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };

    let mut child = spawn();
    let deadline = std::time::Instant::now() + Duration::from_secs(600);
    while stored_rows().len() < 5 {
        assert!(std::time::Instant::now() < deadline, "no answers stored");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(
        !dir.path().join("out.jsonl").exists(),
        "no half-written output"
    );
    let before = stored_rows();
    assert!(
        before.len() >= 5 && before.len() < LOCAL_PROMPTS,
        "{} stored",
        before.len()
    );

    assert!(spawn().wait().unwrap().success());
    let after = stored_rows();
    assert_eq!(after.len(), LOCAL_PROMPTS);
    for (key, rowid) in &before {
        assert_eq!(
            after.get(key),
            Some(rowid),
            "a stored answer was made again"
        );
    }
    let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    let rows: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let expected: Vec<String> = (0..LOCAL_PROMPTS).map(|i| format!("q{i}")).collect();
    assert_eq!(ids, expected, "every prompt exactly once, in order");
    let cached = rows.iter().filter(|r| r["cached"] == true).count();
    assert_eq!(cached, before.len());
}
