//! A real HTTP/1.1 server on loopback that answers the way the test says,
//! and records every request it got and every response it finished.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// One request as the server read it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub authorization: Option<String>,
    pub body: Value,
}

/// What to do with a request.
pub enum Reply {
    /// Status, extra headers, body.
    Respond(u16, Vec<(String, String)>, String),
    /// Wait, then respond.
    Delay(Duration, Box<Reply>),
    /// Close the connection without a word.
    Drop,
}

pub fn json(status: u16, body: &Value) -> Reply {
    Reply::Respond(status, Vec::new(), body.to_string())
}

type Handler = dyn Fn(&Seen, usize) -> Reply + Send + Sync;

pub struct Server {
    pub base_url: String,
    /// Requests in arrival order.
    pub seen: Arc<Mutex<Vec<Seen>>>,
    /// Requests whose 2xx response was written in full.
    pub answered: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    /// Starts serving; `handler` gets each request and its 0-based arrival number.
    pub fn start(handler: impl Fn(&Seen, usize) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let answered = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let (s, a) = (seen.clone(), answered.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (handler, s, a) = (handler.clone(), s.clone(), a.clone());
                std::thread::spawn(move || serve(stream, &*handler, &s, &a));
            }
        });
        Server {
            base_url,
            seen,
            answered,
        }
    }

    /// Generation requests seen (the config check's GET /models aside).
    pub fn generation_requests(&self) -> usize {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .filter(|s| s.path.ends_with("/completions"))
            .count()
    }

    pub fn requests(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    /// Blocks until `count` 2xx answers were written, panicking after `limit`.
    pub fn wait_for_answers(&self, count: usize, limit: Duration) {
        let start = std::time::Instant::now();
        while self.answered.lock().unwrap().len() < count {
            assert!(
                start.elapsed() < limit,
                "only {} answers after {limit:?}",
                self.answered.lock().unwrap().len()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

fn serve(
    stream: TcpStream,
    handler: &Handler,
    seen: &Mutex<Vec<Seen>>,
    answered: &Mutex<Vec<Seen>>,
) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    let mut stream = stream;
    loop {
        let Some(request) = read_request(&mut reader) else {
            return;
        };
        let number = {
            let mut seen = seen.lock().unwrap();
            seen.push(request.clone());
            seen.len() - 1
        };
        let mut reply = handler(&request, number);
        while let Reply::Delay(wait, next) = reply {
            std::thread::sleep(wait);
            reply = *next;
        }
        match reply {
            Reply::Drop | Reply::Delay(..) => return,
            Reply::Respond(status, headers, body) => {
                let mut head = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
                    body.len()
                );
                for (k, v) in headers {
                    head += &format!("{k}: {v}\r\n");
                }
                head += "\r\n";
                let written = stream
                    .write_all(head.as_bytes())
                    .and_then(|_| stream.write_all(body.as_bytes()))
                    .and_then(|_| stream.flush());
                if written.is_err() {
                    return;
                }
                if (200..300).contains(&status) {
                    answered.lock().unwrap().push(request);
                }
            }
        }
    }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Seen> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let path = line.split_whitespace().nth(1)?.to_owned();
    let mut length = 0;
    let mut authorization = None;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "authorization" => authorization = Some(value.trim().to_owned()),
            _ => {}
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Seen {
        path,
        authorization,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

/// A `/completions` answer whose tokens have the given probabilities.
pub fn completion(text_tokens: &[(&str, f64)]) -> Value {
    let text: String = text_tokens.iter().map(|(t, _)| *t).collect();
    serde_json::json!({
        "choices": [{
            "text": text,
            "finish_reason": "stop",
            "logprobs": {
                "tokens": text_tokens.iter().map(|(t, _)| *t).collect::<Vec<_>>(),
                "token_logprobs": text_tokens.iter().map(|(_, p)| p.ln()).collect::<Vec<_>>(),
                "top_logprobs": text_tokens.iter().map(|(t, p)| serde_json::json!({ *t: p.ln() })).collect::<Vec<_>>(),
            }
        }],
        "usage": {"prompt_tokens": 10, "completion_tokens": text_tokens.len()}
    })
}

/// A `/chat/completions` answer whose tokens have the given probabilities.
pub fn chat(text_tokens: &[(&str, f64)]) -> Value {
    let text: String = text_tokens.iter().map(|(t, _)| *t).collect();
    serde_json::json!({
        "choices": [{
            "message": {"role": "assistant", "content": text},
            "finish_reason": "stop",
            "logprobs": {"content": text_tokens.iter().map(|(t, p)| serde_json::json!({
                "token": t, "logprob": p.ln(),
                "top_logprobs": [{"token": t, "logprob": p.ln()}]
            })).collect::<Vec<_>>()}
        }],
        "usage": {"prompt_tokens": 12, "completion_tokens": text_tokens.len()}
    })
}
