//! The OpenAI-compatible backend against a real HTTP server on loopback:
//! both dialects, every failure the issue names, and the API key's secrecy.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use codecal::confidence::average_token_probability;
use codecal::generate::openai::{OpenAiBackend, OpenAiConfig};
use codecal::generate::{Backend, GenerateError, Params};
use codecal::prompt::{Message, Prompt};
use common::server::{Reply, Server, chat, completion, json};
use serde_json::json;

fn backend(server: &Server) -> OpenAiBackend {
    let mut config = OpenAiConfig::new(&server.base_url, "test-model");
    config.retry_base = Duration::from_millis(10);
    config.retry_max = Duration::from_secs(5);
    config.max_retries = 3;
    config.timeout = Duration::from_millis(800);
    OpenAiBackend::new(config).unwrap()
}

/// `codecal generate` against `server` on `tests/fixtures/prompts_small.jsonl`
/// with `extra` flags, which must succeed: its output and its rows.
fn generate_small(
    server: &Server,
    extra: &[&str],
) -> (std::process::Output, Vec<serde_json::Value>) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    let output = Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args(["generate", "--backend", "openai", "--model", "m"])
        .args(["--base-url", &server.base_url, "--retry-base-ms", "10"])
        .args(["--prompts", "tests/fixtures/prompts_small.jsonl"])
        .args(extra)
        .arg("--out")
        .arg(&out)
        .arg("--cache")
        .arg(dir.path().join("cache.sqlite"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rows = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (output, rows)
}

fn completion_prompt() -> Prompt {
    Prompt::Completion("int f() { return 1; }\nComment:".into())
}

fn ok_completion() -> Reply {
    json(200, &completion(&[(" Returns", 0.5), (" one", 0.9)]))
}

/// Answers a completion with " Returns one" and a chat with "Returns one".
fn completion_and_chat_server() -> Server {
    Server::start(|seen, _| {
        if seen.path.ends_with("/chat/completions") {
            json(200, &chat(&[("Returns", 0.25), (" one", 0.75)]))
        } else {
            ok_completion()
        }
    })
}

#[test]
fn completions_and_chat_parse_and_reach_the_measures() {
    let server = completion_and_chat_server();
    let backend = backend(&server);
    let params = Params::default();
    let g = backend.generate(&completion_prompt(), &params).unwrap();
    assert_eq!(g.text, " Returns one");
    assert!((average_token_probability(&g.tokens).unwrap() - 0.7).abs() < 1e-12);
    let messages = Prompt::Chat(vec![Message::new("user", "Summarize f.")]);
    let g = backend.generate(&messages, &params).unwrap();
    assert_eq!(g.text, "Returns one");
    assert!((average_token_probability(&g.tokens).unwrap() - 0.5).abs() < 1e-12);
    assert_eq!(g.prompt_tokens, Some(12));
    let seen = server.seen.lock().unwrap();
    assert_eq!(seen[0].path, "/v1/completions");
    assert_eq!(seen[0].body["logprobs"], json!(5));
    assert_eq!(seen[0].body["temperature"], json!(0.0));
    assert_eq!(seen[0].body["max_tokens"], json!(100));
    assert_eq!(seen[0].body["stop"], json!(["\n"]));
    assert_eq!(seen[1].path, "/v1/chat/completions");
    assert_eq!(seen[1].body["logprobs"], json!(true));
    assert_eq!(seen[1].body["top_logprobs"], json!(5));
}

#[test]
fn retry_after_on_429_is_honoured() {
    let server = Server::start(|_, n| {
        if n == 0 {
            Reply::Respond(
                429,
                vec![("Retry-After".into(), "1".into())],
                "{\"error\": \"slow down\"}".into(),
            )
        } else {
            ok_completion()
        }
    });
    let start = Instant::now();
    let g = backend(&server)
        .generate(&completion_prompt(), &Params::default())
        .unwrap();
    assert_eq!(g.text, " Returns one");
    assert_eq!(server.requests(), 2);
    // The backoff alone would be ~10 ms; the server asked for a second.
    assert!(
        start.elapsed() >= Duration::from_millis(950),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_retry_after_beyond_the_cap_fails_at_once_naming_the_wait() {
    let server = Server::start(|_, _| {
        Reply::Respond(
            429,
            vec![("Retry-After".into(), "100000".into())],
            "{\"error\": \"come back tomorrow\"}".into(),
        )
    });
    let start = Instant::now();
    let err = backend(&server)
        .generate(&completion_prompt(), &Params::default())
        .unwrap_err();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert!(matches!(err, GenerateError::WaitRefused { .. }), "{err}");
    let message = err.to_string();
    assert!(message.contains("100000 s (Retry-After)"), "{message}");
    assert_eq!(server.requests(), 1);
}

#[test]
fn server_errors_timeouts_and_dropped_connections_are_retried() {
    for (name, failure) in [("500", 0), ("timeout", 1), ("dropped connection", 2)] {
        let server = Server::start(move |_, n| match (n, failure) {
            (0, 0) => json(500, &json!({"error": "boom"})),
            (0, 1) => Reply::Delay(Duration::from_secs(3), Box::new(ok_completion())),
            (0, _) => Reply::Drop,
            _ => ok_completion(),
        });
        let g = backend(&server).generate(&completion_prompt(), &Params::default());
        assert_eq!(g.unwrap().text, " Returns one", "{name}");
        assert_eq!(server.requests(), 2, "{name}: one retry");
    }
}

#[test]
fn persistent_5xx_gives_up_after_the_retries() {
    let server = Server::start(|_, _| json(503, &json!({"error": "down"})));
    let err = backend(&server)
        .generate(&completion_prompt(), &Params::default())
        .unwrap_err();
    assert!(
        matches!(err, GenerateError::RetriesExhausted { attempts: 4, .. }),
        "{err}"
    );
    assert_eq!(server.requests(), 4);
    assert!(err.to_string().contains("HTTP 503"), "{err}");
    // The total wait is bounded and reported.
    assert!(err.to_string().contains("s of waiting"), "{err}");
}

#[test]
fn other_4xx_malformed_json_and_missing_logprobs_are_errors_without_retry() {
    let cases: Vec<(&str, Reply)> = vec![
        (
            "400",
            json(400, &json!({"error": {"message": "bad model"}})),
        ),
        (
            "malformed",
            Reply::Respond(200, Vec::new(), "{\"choices\": [".into()),
        ),
        (
            "no logprobs",
            json(
                200,
                &json!({"choices": [{"text": " Hi", "logprobs": null}]}),
            ),
        ),
    ];
    for (name, reply) in cases {
        let reply = std::sync::Mutex::new(Some(reply));
        let server = Server::start(move |_, _| {
            reply
                .lock()
                .unwrap()
                .take()
                .unwrap_or_else(|| json(500, &json!({})))
        });
        let err = backend(&server)
            .generate(&completion_prompt(), &Params::default())
            .unwrap_err();
        let expected = match name {
            "400" => matches!(err, GenerateError::Status { status: 400, .. }),
            "malformed" => matches!(err, GenerateError::Malformed { .. }),
            _ => matches!(err, GenerateError::NoLogprobs { .. }),
        };
        assert!(expected, "{name}: {err}");
        assert_eq!(server.requests(), 1, "{name}: not retried");
    }
}

#[test]
fn the_api_key_is_sent_but_never_shown() {
    const KEY: &str = "sk-test-5ecret-key-123";
    // A hostile server that echoes the key back in its error.
    let server = Server::start(|seen, _| {
        json(
            401,
            &json!({"error": format!("bad key {:?}", seen.authorization)}),
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let prompts = dir.path().join("p.jsonl");
    std::fs::write(&prompts, "{\"id\": \"a\", \"prompt\": \"x\"}\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args(["generate", "--backend", "openai", "--model", "m"])
        .args(["--base-url", &server.base_url])
        .args(["--api-key-env", "CODECAL_TEST_API_KEY"])
        .arg("--prompts")
        .arg(&prompts)
        .arg("--out")
        .arg(dir.path().join("out.jsonl"))
        .arg("--cache")
        .arg(dir.path().join("cache.sqlite"))
        .env("CODECAL_TEST_API_KEY", KEY)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stderr.contains("HTTP 401"), "{stderr}");
    assert!(
        stderr.contains("prompt a"),
        "the error names the prompt: {stderr}"
    );
    assert!(!stderr.contains(KEY) && !stdout.contains(KEY), "{stderr}");
    assert!(
        !dir.path().join("out.jsonl").exists(),
        "no output on failure"
    );
    let seen = server.seen.lock().unwrap();
    assert_eq!(
        seen[0].authorization.as_deref(),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[test]
fn a_missing_key_variable_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    let output = Command::new(env!("CARGO_BIN_EXE_codecal"))
        .args(["generate", "--backend", "openai", "--model", "m"])
        .args(["--base-url", "http://127.0.0.1:9/v1"])
        .args(["--api-key-env", "CODECAL_TEST_UNSET_KEY_VAR"])
        .args(["--prompts", "tests/fixtures/prompts_small.jsonl", "--out"])
        .arg(&out)
        .env_remove("CODECAL_TEST_UNSET_KEY_VAR")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("CODECAL_TEST_UNSET_KEY_VAR is not set"),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing is written when the key is missing");
}

#[test]
fn generate_command_writes_measures_and_reflective_answers() {
    // Main answers, an Ask-True judge, and a verbalized probability that never parses.
    let server = Server::start(|seen, _| {
        if seen.path.ends_with("/chat/completions") {
            return json(200, &chat(&[("Tells", 0.9)]));
        }
        let prompt = seen.body["prompt"].as_str().unwrap_or("");
        if prompt.contains("Answer True or False") {
            let top = json!([{" True": 0.6f64.ln(), " False": 0.2f64.ln(), " Maybe": 0.1f64.ln()}]);
            let mut reply = completion(&[(" True", 0.6)]);
            reply["choices"][0]["logprobs"]["top_logprobs"] = top;
            json(200, &reply)
        } else if prompt.contains("What is the probability") {
            json(200, &completion(&[(" not", 0.5), (" sure", 0.5)]))
        } else {
            ok_completion()
        }
    });
    let (_, rows) = generate_small(
        &server,
        &[
            "--reflective",
            "ask-true",
            "--reflective",
            "verbalized-probability",
            "--first-k",
            "1",
        ],
    );
    let first = &rows[0];
    assert_eq!(first["id"], "p1");
    assert_eq!(
        first["reference"], "Adds two numbers .",
        "the prompt line's fields carry over"
    );
    let confidence = &first["confidence"];
    assert!((confidence["average_token_probability"].as_f64().unwrap() - 0.7).abs() < 1e-12);
    assert!(
        (confidence["average_token_probability_first1"]
            .as_f64()
            .unwrap()
            - 0.5)
            .abs()
            < 1e-12
    );
    let ask = &first["reflective"]["ask-true"];
    assert!((ask["confidence"].as_f64().unwrap() - 0.6).abs() < 1e-12);
    assert!((ask["p_true_normalized"].as_f64().unwrap() - 0.75).abs() < 1e-12);
    assert_eq!(ask["template_sha256"].as_str().unwrap().len(), 64);
    let verbal = &first["reflective"]["verbalized-probability"];
    assert_eq!(verbal["confidence"], json!(0.5));
    assert_eq!(verbal["fallback"], json!(true));
    assert_eq!(verbal["attempts"], json!(4));
    // The retries were asked at temperature 1, three for each of the three
    // prompts (the chat one's replies hold no number either); p3 went to chat.
    let seen = server.seen.lock().unwrap();
    let retries = seen
        .iter()
        .filter(|s| s.body["temperature"] == json!(1.0))
        .count();
    assert_eq!(retries, 3 * 3);
    assert!(seen.iter().any(|s| s.path.ends_with("/chat/completions")));
}

/// `--extra-body` (issue: local generation, item 4): llama.cpp's server
/// applies `repeat_penalty = 1.1` unless told otherwise, so greedy decoding
/// there needs `{"repeat_penalty": 1.0}` in every request. The fields reach
/// the server as given, change the cache key (a cached reply without them is
/// not reused), and may not replace a field codecal sets itself.
#[test]
fn an_extra_body_reaches_every_request_and_the_cache_key() {
    let server = completion_and_chat_server();
    let dir = tempfile::tempdir().unwrap();
    let generate = |extra: Option<&str>, backend: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_codecal"));
        command
            .args(["generate", "--backend", backend, "--model", "m"])
            .args(["--base-url", &server.base_url])
            .args(["--prompts", "tests/fixtures/prompts_small.jsonl"])
            .arg("--out")
            .arg(dir.path().join("out.jsonl"))
            .arg("--cache")
            .arg(dir.path().join("cache.sqlite"));
        if let Some(extra) = extra {
            command.args(["--extra-body", extra]);
        }
        command.output().unwrap()
    };
    let prompts = std::fs::read_to_string("tests/fixtures/prompts_small.jsonl")
        .unwrap()
        .lines()
        .count();

    let succeeds = |extra: Option<&str>| {
        let output = generate(extra, "openai");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{extra:?}: {stderr}");
    };
    succeeds(None);
    let unpenalised = r#"{"repeat_penalty": 1.0, "cache_prompt": false}"#;
    succeeds(Some(unpenalised));
    // A second run with the same extra body is answered from the cache.
    succeeds(Some(unpenalised));
    {
        let seen = server.seen.lock().unwrap();
        assert_eq!(seen.len(), 2 * prompts, "one request per prompt and body");
        for request in &seen[..prompts] {
            assert!(request.body.get("repeat_penalty").is_none());
        }
        for request in &seen[prompts..] {
            assert_eq!(request.body["repeat_penalty"], json!(1.0));
            assert_eq!(request.body["cache_prompt"], json!(false));
            assert_eq!(request.body["max_tokens"], json!(100));
        }
    }

    for (extra, backend, named) in [
        (r#"{"temperature": 1.0}"#, "openai", "\"temperature\""),
        (r#"{"stream": true}"#, "openai", "\"stream\""),
        ("[1, 2]", "openai", "--extra-body"),
        ("{repeat_penalty: 1}", "openai", "--extra-body"),
        (r#"{"repeat_penalty": 1.0}"#, "local", "--extra-body"),
    ] {
        let output = generate(Some(extra), backend);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{extra} was accepted");
        assert!(stderr.contains(named), "{extra}: {stderr}");
    }
    assert_eq!(server.seen.lock().unwrap().len(), 2 * prompts);
}

/// Issue "hardening, second round": a redirected POST is not followed (it
/// would be re-sent where the config never named); the error names the new
/// location. Credentials in the base URL appear in no message.
#[test]
fn redirects_are_refused_naming_the_location_and_url_credentials_are_never_shown() {
    let server = Server::start(|_, _| {
        Reply::Respond(
            307,
            vec![(
                "Location".into(),
                "http://alice:s3cret@127.0.0.1:9/elsewhere/v1/completions".into(),
            )],
            String::new(),
        )
    });
    let with_credentials = server
        .base_url
        .replacen("http://", "http://alice:s3cret@", 1);
    let mut config = OpenAiConfig::new(&with_credentials, "test-model");
    config.max_retries = 0;
    let err = OpenAiBackend::new(config)
        .unwrap()
        .generate(&completion_prompt(), &Params::default())
        .unwrap_err();
    let message = err.to_string();
    assert!(
        matches!(err, GenerateError::Redirected { status: 307, .. }),
        "{message}"
    );
    assert!(
        message.contains("127.0.0.1:9/elsewhere/v1/completions"),
        "{message}"
    );
    assert!(
        !message.contains("s3cret") && !message.contains("alice"),
        "{message}"
    );
    assert_eq!(server.requests(), 1, "the redirect was followed");

    // A refused connection's message carries no credentials either.
    let mut config = OpenAiConfig::new("http://bob:hunter2@127.0.0.1:9/v1", "m");
    config.max_retries = 0;
    config.timeout = Duration::from_millis(500);
    let message = OpenAiBackend::new(config)
        .unwrap()
        .generate(&completion_prompt(), &Params::default())
        .unwrap_err()
        .to_string();
    assert!(
        !message.contains("hunter2") && !message.contains("bob"),
        "{message}"
    );
    assert!(message.contains("127.0.0.1:9"), "{message}");
    let bad = codecal::generate::openai::check_base_url("http://eve:pw@h:99999/v1")
        .unwrap_err()
        .to_string();
    assert!(!bad.contains("pw"), "{bad}");
}

/// Issue "hardening, second round": a reply whose token texts do not join to
/// its text is stored with `"token_text_mismatch": true`, and `generate`
/// counts such replies in a warning; replies that join carry no flag.
#[test]
fn replies_whose_tokens_do_not_join_to_their_text_are_flagged_and_counted() {
    let server = Server::start(|seen, _| {
        if seen.path.ends_with("/chat/completions") {
            return json(200, &chat(&[(" Returns", 0.5), (" one", 0.9)]));
        }
        let prompt = seen.body["prompt"].as_str().unwrap_or("");
        let mut reply = completion(&[(" Returns", 0.5), (" one", 0.9)]);
        if prompt.contains("f2") || prompt.len() % 2 == 0 {
            reply["choices"][0]["text"] = json!("Returns one.");
        }
        json(200, &reply)
    });
    let (output, rows) = generate_small(&server, &[]);
    let flagged = rows
        .iter()
        .filter(|r| r["token_text_mismatch"] == true)
        .count();
    for row in &rows {
        let joins = row["text"] == " Returns one";
        assert_eq!(row.get("token_text_mismatch").is_none(), joins, "{row}");
    }
    assert!(
        flagged > 0 && flagged < rows.len(),
        "{flagged} of {}",
        rows.len()
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "in {flagged} of {} replies the token texts do not join",
            rows.len()
        )),
        "{stderr}"
    );
}
