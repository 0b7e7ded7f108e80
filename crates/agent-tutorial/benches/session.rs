//! What the harness costs per tool round as a session grows: a scripted session of
//! N `read_file` rounds and a final answer, built the way `run` builds chapter 2, 8 or 10.
//! The reported time is the whole turn; `items/s` (N rounds) gives the time per round. The
//! model answers instantly, so what is measured is the harness: building and checking each
//! request, the processors, the tool call on a tiny file, storing the result.
//!
//! `cargo bench -p agent-tutorial --bench session`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use agent_core::{ModelReply, ToolCall};
use agent_test_support::ScriptedModel;
use agent_tools::Workspace;
use agent_tutorial::{Agent, AgentDeps, Profile, build_agent};
use tempfile::TempDir;

fn main() {
    divan::main();
}

fn session(chapter: u8, rounds: usize) -> (TempDir, Agent) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    let mut replies: Vec<ModelReply> = (0..rounds)
        .map(|i| {
            ModelReply::tool_calls(vec![ToolCall {
                id: format!("c{i}"),
                name: "read_file".into(),
                arguments: r#"{"path":"notes.txt"}"#.into(),
            }])
        })
        .collect();
    replies.push(ModelReply::text("done"));
    let model = Arc::new(ScriptedModel::replies(replies));
    let mut deps = AgentDeps::new(model, Workspace::new(dir.path()).unwrap());
    deps.max_turns = rounds + 1;
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
