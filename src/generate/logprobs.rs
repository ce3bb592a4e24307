//! Reads an OpenAI-compatible reply's log-probabilities into tokens: the
//! parallel arrays of `/completions` and the per-token objects of
//! `/chat/completions`, with their top alternatives. A value that is not a
//! log-probability is refused, naming where it was. No HTTP here.

use serde_json::Value;

use super::{Alternative, Token};

/// A log-probability as a server reports it: a number at most 0. Servers
/// round, so a value within 1e-4 above 0 is read as 0; anything larger (or
/// NaN) is a broken server, refused rather than turned into a
/// "probability" above 1.
fn checked_logprob(value: f64, what: &str) -> Result<f64, LogprobsError> {
    const ROUNDING: f64 = 1e-4;
    if value.is_nan() || value > ROUNDING {
        return Err(LogprobsError::NotALogprob {
            what: what.to_owned(),
            value,
        });
    }
    Ok(value.min(0.0))
}

/// What is wrong with a reply's log-probabilities.
#[derive(Debug, thiserror::Error)]
pub(super) enum LogprobsError {
    #[error("{0} is not an array")]
    NotAnArray(&'static str),
    #[error("logprobs.tokens and logprobs.token_logprobs differ in length")]
    Lengths,
    #[error("a token is not a string")]
    TokenNotText,
    #[error("{0} is not a number")]
    NotANumber(String),
    #[error("{what} is {value}, not a log-probability (at most 0)")]
    NotALogprob { what: String, value: f64 },
    #[error("{0} lacks a token or a numeric logprob")]
    Incomplete(String),
}

/// `/completions` log-probabilities: parallel arrays, top alternatives as maps.
pub(super) fn completion_tokens(
    logprobs: Option<&Value>,
) -> Result<Option<Vec<Token>>, LogprobsError> {
    let Some(logprobs) = logprobs.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let tokens = logprobs
        .get("tokens")
        .and_then(Value::as_array)
        .ok_or(LogprobsError::NotAnArray("logprobs.tokens"))?;
    let values = logprobs
        .get("token_logprobs")
        .and_then(Value::as_array)
        .ok_or(LogprobsError::NotAnArray("logprobs.token_logprobs"))?;
    let tops = logprobs.get("top_logprobs").and_then(Value::as_array);
    if values.len() != tokens.len() {
        return Err(LogprobsError::Lengths);
    }
    let mut out = Vec::with_capacity(tokens.len());
    for (i, (token, logprob)) in tokens.iter().zip(values).enumerate() {
        let token = token.as_str().ok_or(LogprobsError::TokenNotText)?;
        let logprob = logprob
            .as_f64()
            .ok_or_else(|| LogprobsError::NotANumber(format!("token_logprobs[{i}]")))?;
        let logprob = checked_logprob(logprob, &format!("token_logprobs[{i}]"))?;
        let mut top = Vec::new();
        if let Some(map) = tops.and_then(|t| t.get(i)).and_then(Value::as_object) {
            for (token, lp) in map {
                // A non-numeric alternative is skipped, as before; a
                // numeric one must be a log-probability.
                if let Some(lp) = lp.as_f64() {
                    let what = format!("top_logprobs[{i}][{token:?}]");
                    top.push(Alternative {
                        token: token.clone(),
                        logprob: checked_logprob(lp, &what)?,
                    });
                }
            }
        }
        top.sort_by(|a, b| b.logprob.total_cmp(&a.logprob));
        out.push(Token {
            token: token.to_owned(),
            logprob,
            top,
        });
    }
    Ok(Some(out))
}

/// `/chat/completions` log-probabilities: one object per token.
pub(super) fn chat_tokens(content: Option<&Value>) -> Result<Option<Vec<Token>>, LogprobsError> {
    let Some(content) = content.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let items = content
        .as_array()
        .ok_or(LogprobsError::NotAnArray("logprobs.content"))?;
    let entry = |item: &Value, what: &str| -> Result<(String, f64), LogprobsError> {
        let token = item.get("token").and_then(Value::as_str);
        let logprob = item.get("logprob").and_then(Value::as_f64);
        match (token, logprob) {
            (Some(t), Some(lp)) => Ok((t.to_owned(), checked_logprob(lp, what)?)),
            _ => Err(LogprobsError::Incomplete(what.to_owned())),
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let (token, logprob) = entry(item, &format!("logprobs.content[{i}]"))?;
        let mut top = Vec::new();
        for alt in item
            .get("top_logprobs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (token, logprob) = entry(alt, &format!("logprobs.content[{i}].top_logprobs"))?;
            top.push(Alternative { token, logprob });
        }
        top.sort_by(|a, b| b.logprob.total_cmp(&a.logprob));
        out.push(Token {
            token,
            logprob,
            top,
        });
    }
    Ok(Some(out))
}
