//! What rendering costs: a cache hit (the common case: nothing changed since the last
//! request) against a cold assembly of the same fixture.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agent_prompting::{DynamicPromptRenderer, PromptInputs};
use serde_json::{Value, json};

fn main() {
    divan::main();
}

struct Fixture {
    context: Value,
    tools: Vec<String>,
    memory: String,
}

fn fixture() -> Fixture {
    Fixture {
        context: json!({"chapter": 10, "mode": {"name": "default", "flags": {"strict": true, "beta": null}}, "greeting": "你好，世界", "ratio": 1.5}),
        tools: ["bash", "read_file", "write_file", "edit_file", "glob", "todo_write", "task", "load_skill"]
            .map(String::from)
            .to_vec(),
        memory: "<relevant_memories>\n## prefers-tabs (feedback)\nThe user wants tabs\nUse tabs.\n</relevant_memories>".into(),
    }
}

fn inputs(f: &Fixture) -> PromptInputs<'_, Value> {
    PromptInputs {
        identity: "You are a coding agent. Act, don't explain.",
        context: &f.context,
        tools: &f.tools,
        workspace: "/work/project",
        skills: Some(
            "- **rust-test**: Add a focused Rust test\n- **commit-message**: Write a commit message",
        ),
        memory: Some(&f.memory),
    }
}

#[divan::bench]
fn render_cache_hit(bencher: divan::Bencher) {
    let f = fixture();
    let renderer = DynamicPromptRenderer::new();
    renderer.render(&inputs(&f)).unwrap();
    bencher.bench_local(|| renderer.render(divan::black_box(&inputs(&f))).unwrap());
}

#[divan::bench]
fn render_cold(bencher: divan::Bencher) {
    let f = fixture();
    bencher
        .with_inputs(DynamicPromptRenderer::new)
        .bench_local_values(|renderer| renderer.render(divan::black_box(&inputs(&f))).unwrap());
}
