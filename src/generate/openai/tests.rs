//! Tests of the OpenAI-compatible backend's parsing and retries that need
//! no server (the HTTP ones are in `tests/generate_openai.rs`).

#[test]
fn retry_after_parsing_is_total() {
    use std::time::{Duration, UNIX_EPOCH};
    let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
    let parse = |v: &str| parse_retry_after(v, now);
    assert_eq!(parse("7"), Some(Duration::from_secs(7)));
    assert_eq!(parse("1.5"), Some(Duration::from_millis(1500)));
    assert_eq!(parse("-3"), Some(Duration::ZERO));
    assert_eq!(parse("18446744073709551615"), Some(Duration::MAX));
    assert_eq!(parse("1e30"), Some(Duration::MAX));
    assert_eq!(parse(&"9".repeat(400)), Some(Duration::MAX));
    assert_eq!(parse("Sun, 06 Nov 1994 08:49:37 GMT"), Some(Duration::ZERO));
    assert_eq!(
        parse("Sun, 06 Nov 1994 08:50:07 GMT"),
        Some(Duration::from_secs(30))
    );
    assert_eq!(
        parse("Mon, 07 Nov 1994 08:49:37 GMT"),
        Some(Duration::from_secs(86_400))
    );
    assert_eq!(parse("Sat, 05 Nov 1994 08:49:37 GMT"), Some(Duration::ZERO));
    for bad in [
        "",
        "soon",
        "NaN",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 25:00:00 GMT",
    ] {
        assert_eq!(parse(bad), None, "{bad:?}");
    }
}

use super::*;
use crate::prompt::Message;

#[test]
fn completion_response_tokens_and_alternatives() {
    let value = json!({
        "choices": [{"text": " Returns x.", "finish_reason": "stop", "logprobs": {
            "tokens": [" Returns", " x", "."],
            "token_logprobs": [-0.5, -1.0, -0.1],
            "top_logprobs": [{" Returns": -0.5, " Gets": -1.2}, {" x": -1.0}, {".": -0.1}]
        }}],
        "usage": {"prompt_tokens": 40, "completion_tokens": 3}
    });
    let g = parse_response("u", &Prompt::Completion("p".into()), &value, true).unwrap();
    assert_eq!(g.text, " Returns x.");
    assert_eq!(g.tokens.len(), 3);
    assert_eq!(g.tokens[0].top[1].token, " Gets");
    assert_eq!((g.prompt_tokens, g.completion_tokens), (Some(40), Some(3)));
}

#[test]
fn chat_response_without_logprobs_is_an_error_when_required() {
    let value = json!({"choices": [{"message": {"content": "Hi"}, "logprobs": null}]});
    let chat = Prompt::Chat(vec![Message::new("user", "q")]);
    assert!(matches!(
        parse_response("u", &chat, &value, true),
        Err(GenerateError::NoLogprobs { .. })
    ));
    assert!(parse_response("u", &chat, &value, false).is_ok());
}

#[test]
fn request_asks_for_logprobs_in_each_dialect() {
    let params = Params::default();
    let c = request_body("m", &Prompt::Completion("p".into()), &params);
    assert_eq!(
        (c["logprobs"].clone(), c["stop"][0].clone()),
        (json!(5), json!("\n"))
    );
    let chat = request_body("m", &Prompt::Chat(vec![Message::new("user", "q")]), &params);
    assert_eq!(chat["logprobs"], json!(true));
    assert_eq!(chat["top_logprobs"], json!(5));
    assert_eq!(chat["messages"][0]["role"], "user");
}

#[test]
fn a_log_probability_above_zero_is_refused_and_rounding_is_read_as_zero() {
    let completion = |lp: f64, alt: f64| {
        json!({"choices": [{"text": " x", "logprobs": {
            "tokens": [" x"], "token_logprobs": [lp], "top_logprobs": [{" x": alt}]
        }}]})
    };
    let prompt = Prompt::Completion("p".into());
    // +5 would make an "average probability" of e^5 = 148.
    let err = parse_response("u", &prompt, &completion(5.0, -0.1), true).unwrap_err();
    assert!(err.to_string().contains("token_logprobs[0] is 5"), "{err}");
    let err = parse_response("u", &prompt, &completion(-0.1, 0.5), true).unwrap_err();
    assert!(err.to_string().contains("top_logprobs[0]"), "{err}");
    let g = parse_response("u", &prompt, &completion(3e-7, 1e-6), true).unwrap();
    assert_eq!(
        (g.tokens[0].logprob, g.tokens[0].top[0].logprob),
        (0.0, 0.0)
    );
    let chat = json!({"choices": [{"message": {"content": "Hi"}, "logprobs": {"content": [
        {"token": "Hi", "logprob": 2.0, "top_logprobs": []}]}}]});
    let prompt = Prompt::Chat(vec![Message::new("user", "q")]);
    let err = parse_response("u", &prompt, &chat, true).unwrap_err();
    assert!(
        err.to_string().contains("logprobs.content[0] is 2"),
        "{err}"
    );
}

#[test]
fn a_port_out_of_range_is_refused_not_taken_for_port_80() {
    for good in [
        "http://127.0.0.1:8000/v1",
        "https://api.example.org/v1",
        "http://[::1]:8080/v1",
        "http://user:pw@host:65535",
    ] {
        assert!(check_base_url(good).is_ok(), "{good}");
    }
    for (bad, port) in [
        ("http://127.0.0.1:99999/v1", "99999"),
        ("http://127.0.0.1:0/v1", "0"),
        ("http://host:80a", "80a"),
        ("http://[::1]:/v1", ""),
    ] {
        let err = check_base_url(bad).unwrap_err().to_string();
        assert!(err.contains(&format!("port {port:?}")), "{bad}: {err}");
    }
    assert!(matches!(
        check_base_url("ftp://host"),
        Err(OpenAiConfigError::BadUrl(_))
    ));
}

#[test]
fn a_reply_naming_another_model_is_refused_and_a_dated_snapshot_is_not() {
    let named = |model: &str| serde_json::json!({ "model": model, "choices": [] });
    assert!(check_model_named("u", "gpt-4o", &named("gpt-4o")).is_ok());
    assert!(check_model_named("u", "gpt-4o", &named("gpt-4o-2024-08-06")).is_ok());
    assert!(check_model_named("u", "m", &serde_json::json!({ "choices": [] })).is_ok());
    for same in ["gpt-4", "gpt-4-0613", "gpt-4-2024-04-09"] {
        assert!(
            check_model_named("u", "gpt-4", &named(same)).is_ok(),
            "{same}"
        );
    }
    for other in ["gpt-4o-mini", "gpt-4-turbo", "gpt-4-", "qwen"] {
        let message = check_model_named("u", "gpt-4", &named(other))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains(other) && message.contains("gpt-4"),
            "{message}"
        );
    }
}
