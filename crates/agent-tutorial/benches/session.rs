//! What the harness costs per tool round as a session grows: a scripted session of
//! N `read_file` rounds and a final answer, built the way `run` builds chapter 2, 8 or 10.
//! The reported time is the whole turn; `items/s` (N rounds) gives the time per round. The
//! model answers instantly, so what is measured is the harness: building and checking each
//! request, the processors, the tool call on a tiny file, storing the result.
//!
//! `round` is the cost of one more round once a session holds N (a round used to cost more the
//! longer the session): chapter 10's agent, after a first turn of N `read_file` rounds
//! (untimed), runs a turn of one `read_file` round and the answer (two requests). Its model writes every request's body with
//! the OpenAI adapter's encoder before it answers, as the real client does, so the request
//! path is measured whole except the network.
//!
//! `cargo bench -p agent-tutorial --bench session -- round --sample-count 40`, two interleaved
//! runs of the binaries before and after on the shared 2-core machine (load 2-5), medians:
//!
//! | rounds before | before (walks the history) | after (`Draft`, `Lineage`) |
//! |---|---|---|
//! | 10 | 81.3 / 58.4 µs | 83.3 / 59.0 µs |
//! | 100 | 97.6 / 96.8 µs | 93.8 / 89.3 µs |
//! | 1,000 | 183.8 / 169.8 µs | 125.4 / 107.6 µs |
//! | 3,000 | 424.6 / 460.5 µs | 189.4 / 123.4 µs |
//!
//! (fastest of 40 at 100 / 3,000: before 90.4 / 361 µs, after 84.8 / 99.3 µs). Two more
//! interleaved runs of `--sample-count 60` (load 2-3.5): before 147.6 / 98.6 µs at 100 and
//! 640.7 / 409.1 µs at 3,000, after 127.1 / 130.1 µs and 147.3 / 119.2 µs. Across the four
//! runs after, 3,000 rounds over 100: 2.02, 1.38, 1.16, 0.92 on the medians (1.23 on their
//! medians), 1.12 to 1.21 on the fastest; before, 4.0 to 4.7. What still
//! grows is one pointer comparison per stored message at a turn's first request (the
//! history's lineage) and the caches a larger heap misses.
//!
//! `cargo bench -p agent-tutorial --bench session`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use agent_core::{ModelClient, ModelError, ModelReply, ModelRequest, ToolCall};
use agent_openai::{RequestEncoder, Sampling};
use agent_test_support::ScriptedModel;
use agent_tools::Workspace;
use agent_tutorial::{Agent, AgentDeps, Profile, build_agent};
use async_trait::async_trait;
use tempfile::TempDir;

fn main() {
    divan::main();
}

fn read_call(i: usize) -> ModelReply {
    ModelReply::tool_calls(vec![ToolCall {
        id: format!("c{i}"),
        name: "read_file".into(),
        arguments: r#"{"path":"notes.txt"}"#.into(),
    }])
}

fn session(chapter: u8, rounds: usize) -> (TempDir, Agent) {
    let mut replies: Vec<ModelReply> = (0..rounds).map(read_call).collect();
    replies.push(ModelReply::text("done"));
    agent(
        chapter,
        Arc::new(ScriptedModel::replies(replies)),
        rounds + 1,
    )
}

fn agent(chapter: u8, model: Arc<dyn ModelClient>, max_turns: usize) -> (TempDir, Agent) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    let mut deps = AgentDeps::new(model, Workspace::new(dir.path()).unwrap());
    deps.max_turns = max_turns;
    let agent = build_agent(Profile::for_chapter(chapter).unwrap(), deps).unwrap();
    (dir, agent)
}

fn run(bencher: divan::Bencher, chapter: u8, rounds: usize) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    bencher
        .counter(divan::counter::ItemsCount::new(rounds))
        .with_inputs(|| session(chapter, rounds))
        .bench_local_values(|(dir, mut agent)| {
            let outcome = rt.block_on(agent.run_turn("go")).unwrap();
            assert_eq!(outcome.final_text, "done");
            // Dropped outside the timing: the temporary workspace and the agent.
            (dir, agent)
        });
}

#[divan::bench(args = [10, 100, 1000], sample_count = 10, sample_size = 1)]
fn ch02(bencher: divan::Bencher, rounds: usize) {
    run(bencher, 2, rounds);
}

#[divan::bench(args = [10, 100, 1000], sample_count = 10, sample_size = 1)]
fn ch08(bencher: divan::Bencher, rounds: usize) {
    run(bencher, 8, rounds);
}

#[divan::bench(args = [10, 100, 1000], sample_count = 10, sample_size = 1)]
fn ch10(bencher: divan::Bencher, rounds: usize) {
    run(bencher, 10, rounds);
}

/// A scripted model that first writes each request's body as the OpenAI client does.
struct Encoding {
    encoder: RequestEncoder,
    script: ScriptedModel,
}

#[async_trait]
impl ModelClient for Encoding {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        let body = self.encoder.encode(request).unwrap();
        divan::black_box(body);
        self.script.complete(request).await
    }
}

#[divan::bench(args = [10, 100, 1000, 3000], sample_count = 10, sample_size = 1)]
fn round(bencher: divan::Bencher, rounds: usize) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    bencher
        .with_inputs(|| {
            let mut replies: Vec<ModelReply> = (0..rounds).map(read_call).collect();
            replies.extend([
                ModelReply::text("done"),
                read_call(rounds),
                ModelReply::text("done again"),
            ]);
            let model = Encoding {
                encoder: RequestEncoder::new(
                    "gpt-4o-mini",
                    Sampling {
                        temperature: Some(0.0),
                        max_tokens: Some(512),
                    },
                    Some("session".into()),
                ),
                script: ScriptedModel::replies(replies),
            };
            let (dir, mut agent) = agent(10, Arc::new(model), rounds + 1);
            rt.block_on(agent.run_turn("go")).unwrap();
            (dir, agent)
        })
        .bench_local_values(|(dir, mut agent)| {
            let outcome = rt.block_on(agent.run_turn("once more")).unwrap();
            assert_eq!(outcome.final_text, "done again");
            (dir, agent)
        });
}
