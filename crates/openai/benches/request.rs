//! What a model request costs the harness as the session grows.
//!
//! - `round_*`, at 10 / 100 / 1,000 / 3,000 rounds of a `read_file` call and its result: one
//!   round's request path, the runner's `prepare_request` (the history shared into the request,
//!   the pairing check, the system prompt, the tool specs) and the body:
//!   - `round_before`: the adapter's old way, `to_chat_request` (every message converted to
//!     async-openai's types) and `serde_json::to_vec`;
//!   - `round_after`: the [`RequestEncoder`] after the previous round's request (the new reply
//!     and result and the system prompt encoded, every other message copied); one encoder for
//!     the whole bench, so its buffers are reused as in a session;
//!   - `round_prepare`: the runner's part alone.
//! - `encode_*`, 1,000 small messages (the 500-round body), bytes per second on the very same
//!   output bytes: `encode_serde` is serde_json on async-openai's types already built (serde's
//!   rate without the conversion), `encode_converted` the old way with the conversion,
//!   `encode_fresh` the encoder writing every message (a first request).
//!
//! `cargo bench -p agent-openai --bench request`
//!
//! Medians of 5 runs of `--sample-count 100` on the shared 2-core machine (load 0.6-3):
//!
//! | rounds | round_before | round_after | round_prepare |
//! |---|---|---|---|
//! | 10 | 35.2 µs | 12.1 µs | 6.0 µs |
//! | 100 | 97.2 µs | 13.5 µs | 7.0 µs |
//! | 1,000 | 691 µs | 39.8 µs | 15.2 µs |
//! | 3,000 | 2,024 µs | 96.0 µs | 34.3 µs |
//!
//! 1,000 messages (116 KB): `encode_serde` 188 µs, `encode_converted` 355 µs, `encode_fresh`
//! 126 µs (1.5x serde's rate on the same bytes). What still grows with the session: the copy
//! of the body (one contiguous buffer for the HTTP layer) and the runner's `Arc` per message.
//!
//! Again after the runner's `Draft` (a request borrows the stored history until it is built;
//! without processors, as here, every message is still sent, so `round_prepare` still takes
//! a pointer to each, and compares one per message for the lineage), medians of one run of
//! `--sample-count 60` (load 3.5): `round_after` 7.8 / 9.3 / 34.8 / 78.1 µs,
//! `round_before` 22.7 / 54.3 / 458 / 1,413 µs, `round_prepare` 4.7 / 5.2 / 12.5 / 29.3 µs at
//! 10 / 100 / 1,000 / 3,000 rounds; two runs of `--bench encode`: `encode_serde` 108.6 /
//! 106.9 µs (1.07 / 1.08 GB/s), `encode_converted` 222 µs, `encode_fresh` 90.3 / 86.3 µs
//! (1.28 / 1.34 GB/s, 1.2x serde's rate on the same bytes).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use agent_core::{
    AgentRunner, FixedPrompt, Message, ModelClient, ModelError, ModelReply, ModelRequest,
    PreparedCall, ToolCall, ToolEffect, ToolFailure, ToolHandler, ToolRegistry, ToolSpec,
};
use agent_openai::{RequestEncoder, Sampling, to_chat_request};
use async_trait::async_trait;
use divan::counter::BytesCount;
use serde_json::json;

fn main() {
    divan::main();
}

const ROUNDS: &[usize] = &[10, 100, 1000, 3000];
const MODEL: &str = "gpt-4o-mini";

fn sampling() -> Sampling {
    Sampling {
        temperature: Some(0.0),
        max_tokens: Some(512),
    }
}

struct Never;

#[async_trait]
impl ModelClient for Never {
    async fn complete(&self, _: &ModelRequest) -> Result<ModelReply, ModelError> {
        Ok(ModelReply::text("unused"))
    }
}

struct Noop;

#[async_trait]
impl ToolHandler for Noop {
    async fn handle(&self, _: &PreparedCall) -> Result<String, ToolFailure> {
        Ok(String::new())
    }
}

/// A runner with ten tools shaped like chapter 2's, and a 1 KB system prompt.
fn runner() -> AgentRunner {
    let tools = [
        "bash",
        "read_file",
        "write_file",
        "edit_file",
        "glob",
        "grep",
        "todo_write",
        "task",
        "load_skill",
        "job_output",
    ]
    .into_iter()
    .fold(ToolRegistry::builder(), |b, name| {
        let spec = ToolSpec::new(
            name,
            "Reads or changes something in the workspace; see the chapter for the details.",
            ToolEffect::Read,
            json!({"type": "object", "properties": {"path": {"type": "string", "description": "A path inside the workspace."}}, "required": ["path"]}),
        );
        b.tool(spec, Arc::new(Noop))
    });
    let prompt = "You are a coding agent. Act, don't explain.\n".repeat(24);
    AgentRunner::builder(
        Arc::new(Never),
        Arc::new(tools.build().unwrap()),
        Arc::new(FixedPrompt(prompt)),
    )
    .build()
}

/// The history after `rounds` rounds of one `read_file` call each.
fn history(rounds: usize) -> Vec<Arc<Message>> {
    let mut history = vec![Arc::new(Message::user("Read notes.txt again and again."))];
    for i in 0..rounds {
        history.push(Arc::new(Message::Assistant {
            content: None,
            tool_calls: vec![ToolCall {
                id: format!("call_{i}"),
                name: "read_file".into(),
                arguments: r#"{"path":"notes.txt"}"#.into(),
            }],
        }));
        history.push(Arc::new(Message::tool_result(
            format!("call_{i}"),
            "alpha\nbeta\n",
        )));
    }
    history
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(future)
}

#[divan::bench(args = ROUNDS, sample_count = 60)]
fn round_before(bencher: divan::Bencher, rounds: usize) {
    let (runner, history) = (runner(), history(rounds));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    bencher.bench_local(|| {
        let request = rt.block_on(runner.prepare_request(&history)).unwrap();
        let mut body = to_chat_request(MODEL, sampling(), &request);
        body.prompt_cache_key = Some("session".into());
        serde_json::to_vec(&body).unwrap()
    });
}

#[divan::bench(args = ROUNDS, sample_count = 60)]
fn round_after(bencher: divan::Bencher, rounds: usize) {
    let (runner, history) = (runner(), history(rounds));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    // One encoder for the whole bench, as a session has: before each measured round it
    // encodes the request of the round before (the newest call and result missing), so the
    // measured one finds two new messages, as a real round does, and reuses its buffers.
    let previous = rt
        .block_on(runner.prepare_request(&history[..history.len() - 2]))
        .unwrap();
    let encoder = RequestEncoder::new(MODEL, sampling(), Some("session".into()));
    bencher
        .with_inputs(|| encoder.encode(&previous).unwrap())
        .bench_local_values(|previous_body| {
            let request = rt.block_on(runner.prepare_request(&history)).unwrap();
            (encoder.encode(&request).unwrap(), previous_body)
        });
}

#[divan::bench(args = ROUNDS, sample_count = 60)]
fn round_prepare(bencher: divan::Bencher, rounds: usize) {
    let (runner, history) = (runner(), history(rounds));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    bencher.bench_local(|| rt.block_on(runner.prepare_request(&history)).unwrap());
}

/// The 500-round request: 1,001 small messages and the system prompt.
fn thousand() -> ModelRequest {
    block_on(runner().prepare_request(&history(500))).unwrap()
}

fn body_len(request: &ModelRequest) -> usize {
    RequestEncoder::new(MODEL, sampling(), None)
        .encode(request)
        .unwrap()
        .len()
}

#[divan::bench]
fn encode_serde(bencher: divan::Bencher) {
    let request = thousand();
    let body = to_chat_request(MODEL, sampling(), &request);
    bencher
        .counter(BytesCount::new(body_len(&request)))
        .bench_local(|| serde_json::to_vec(divan::black_box(&body)).unwrap());
}

#[divan::bench]
fn encode_converted(bencher: divan::Bencher) {
    let request = thousand();
    bencher
        .counter(BytesCount::new(body_len(&request)))
        .bench_local(|| {
            serde_json::to_vec(&to_chat_request(
                MODEL,
                sampling(),
                divan::black_box(&request),
            ))
            .unwrap()
        });
}

#[divan::bench]
fn encode_fresh(bencher: divan::Bencher) {
    let request = thousand();
    bencher
        .counter(BytesCount::new(body_len(&request)))
        .with_inputs(|| RequestEncoder::new(MODEL, sampling(), None))
        .bench_local_values(|encoder| {
            (encoder.encode(divan::black_box(&request)).unwrap(), encoder)
        });
}
