//! A local Chat Completions server on 127.0.0.1 that answers with real server-sent events,
//! written in pieces as small as one byte, so the client meets lines split across reads, cut
//! streams and stalls as it would on a network. One answer per request, in order; every
//! request body is kept. Shared with the CLI's acceptance tests (`#[path]`).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One reply, sent as one JSON body or as a stream, whichever the request asked for.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    /// The text, streamed three characters a chunk.
    pub content: Option<String>,
    /// `(id, name, arguments)`, the arguments streamed four characters a fragment.
    pub tool_calls: Vec<(String, String, String)>,
    /// `finish_reason`.
    pub finish: String,
}

impl Reply {
    /// A text reply that stopped on its own.
    pub fn text(text: &str) -> Self {
        Self {
            content: Some(text.into()),
            tool_calls: Vec::new(),
            finish: "stop".into(),
        }
    }

    /// The JSON of the non-streaming reply.
    pub fn json(&self) -> String {
        let mut message = json!({"role": "assistant", "content": self.content});
        if !self.tool_calls.is_empty() {
            message["tool_calls"] = self
                .tool_calls
                .iter()
                .map(|(id, name, args)| {
                    json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
                })
                .collect();
        }
        json!({
            "id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish}],
            "usage": usage()
        })
        .to_string()
    }

    /// The event stream of the same reply: a role chunk, the text in pieces, each tool call's
    /// id and name then its arguments in fragments, the finish reason, the usage chunk,
    /// `[DONE]`, with a keepalive comment among them.
    pub fn sse(&self) -> String {
        let mut chunks = vec![json!({"role": "assistant", "content": ""})];
        if let Some(text) = &self.content {
            let chars: Vec<char> = text.chars().collect();
            for piece in chars.chunks(3) {
                chunks.push(json!({"content": piece.iter().collect::<String>()}));
            }
        }
        for (index, (id, name, args)) in self.tool_calls.iter().enumerate() {
            chunks.push(
                json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                "function": {"name": name, "arguments": ""}}]}),
            );
            let chars: Vec<char> = args.chars().collect();
            for piece in chars.chunks(4) {
                chunks.push(json!({"tool_calls": [{"index": index,
                    "function": {"arguments": piece.iter().collect::<String>()}}]}));
            }
        }
        let mut out = String::from(": keepalive\n\n");
        for delta in chunks {
            out.push_str(&event(
                &json!({"index": 0, "delta": delta, "finish_reason": null}),
            ));
        }
        out.push_str(&event(
            &json!({"index": 0, "delta": {}, "finish_reason": self.finish}),
        ));
        out.push_str(&format!(
            "data: {}\n\n",
            json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                   "choices": [], "usage": usage()})
        ));
        out.push_str("data: [DONE]\n\n");
        out
    }
}

/// The usage every reply reports.
pub fn usage() -> Value {
    json!({"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18,
           "prompt_tokens_details": {"cached_tokens": 4}})
}

fn event(choice: &Value) -> String {
    format!(
        "data: {}\n\n",
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [choice]})
    )
}

/// What the server does with one request.
#[derive(Debug, Clone)]
pub enum Answer {
    /// The reply as JSON or as events, as the request's `"stream"` asks; events go out
    /// `piece` bytes at a time (1: byte by byte).
    Reply { reply: Reply, piece: usize },
    /// These bytes as a 200 event stream, `piece` bytes at a time, then the connection
    /// closed (a cut stream when they hold no `[DONE]`).
    Raw { body: Vec<u8>, piece: usize },
    /// These bytes as a 200 event stream, then nothing more: the connection stays open until
    /// the client closes it.
    Stall { body: Vec<u8> },
    /// A failure status with this body.
    Status { status: u16, body: String },
    /// A keepalive comment every 50 ms and nothing else, until the client hangs up: never
    /// idle, never done.
    Trickle,
}

/// The running server.
pub struct SseServer {
    /// `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    bodies: Arc<Mutex<Vec<String>>>,
    closed: tokio::sync::watch::Receiver<usize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SseServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl SseServer {
    /// Listens and answers each request with the next answer (then closes each connection).
    pub async fn start(answers: Vec<Answer>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let (closed_tx, closed) = tokio::sync::watch::channel(0usize);
        let kept = bodies.clone();
        let task = tokio::spawn(async move {
            let closed_tx = Arc::new(closed_tx);
            for answer in answers {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                socket.set_nodelay(true).unwrap();
                let Some(body) = read_request(&mut socket).await else {
                    continue;
                };
                let stream = body.contains(r#""stream":true"#);
                kept.lock().unwrap().push(body);
                let closed_tx = closed_tx.clone();
                // Answered on its own task: a stalled answer must not hold up the next one.
                tokio::spawn(async move {
                    answer_with(&mut socket, answer, stream).await;
                    closed_tx.send_modify(|n| *n += 1);
                });
            }
        });
        Self {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            bodies,
            closed,
            task,
        }
    }

    /// Every request body received so far, in order.
    pub fn bodies(&self) -> Vec<String> {
        self.bodies.lock().unwrap().clone()
    }

    /// Waits until `n` answers are over: written and closed, or (a stall) closed by the client.
    pub async fn answered(&self, n: usize) {
        let mut closed = self.closed.clone();
        closed.wait_for(|done| *done >= n).await.unwrap();
    }
}

async fn read_request(socket: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    while buf.len() < head_end + length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Some(String::from_utf8(buf[head_end..head_end + length].to_vec()).unwrap())
}

const SSE_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";

async fn answer_with(socket: &mut TcpStream, answer: Answer, stream: bool) {
    match answer {
        Answer::Reply { reply, piece } if stream => {
            write_events(socket, reply.sse().as_bytes(), piece).await;
        }
        Answer::Reply { reply, .. } => write_status(socket, 200, &reply.json()).await,
        Answer::Raw { body, piece } => write_events(socket, &body, piece).await,
        Answer::Status { status, body } => write_status(socket, status, &body).await,
        Answer::Trickle => {
            if socket.write_all(SSE_HEAD).await.is_err() {
                return;
            }
            while socket.write_all(b": keepalive\n\n").await.is_ok() {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
        Answer::Stall { body } => {
            if socket.write_all(SSE_HEAD).await.is_err() || socket.write_all(&body).await.is_err() {
                return;
            }
            // Nothing more is sent; the answer is over when the client hangs up.
            let mut sink = [0u8; 256];
            while matches!(socket.read(&mut sink).await, Ok(n) if n > 0) {}
        }
    }
}

async fn write_events(socket: &mut TcpStream, body: &[u8], piece: usize) {
    if socket.write_all(SSE_HEAD).await.is_err() {
        return;
    }
    for part in body.chunks(piece.max(1)) {
        // The client may stop reading (a size limit): the rest is not needed.
        if socket.write_all(part).await.is_err() || socket.flush().await.is_err() {
            return;
        }
    }
    let _ = socket.shutdown().await;
}

async fn write_status(socket: &mut TcpStream, status: u16, body: &str) {
    let head = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = socket.write_all(head.as_bytes()).await;
    let _ = socket.write_all(body.as_bytes()).await;
    let _ = socket.shutdown().await;
}
