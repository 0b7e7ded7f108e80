//! What rendering costs at 8, 64 and 512 tools: a cache hit (the common case: nothing changed
//! since the last request) against a cold assembly of the same inputs, for
//! - `renderer_*`: `render`, an arbitrary `Serialize` context (checked on every call) and a
//!   tool list (compared name by name);
//! - `checked_*`: `render_checked`, a validated context and a registry (compared by stamp);
//! - `provider_*`: what chapter 10 runs before every request (`render_checked` plus the memory
//!   source, the event and the owned copy of the text the provider trait hands out).
//!
//! `cargo bench -p agent-prompting`
//!
//! The render miss made cheaper (the prompt written once into a pre-sized buffer, the registry's names
//! borrowed instead of copied, a tool list keyed in two allocations), medians of 5 interleaved
//! runs of `--bench miss --sample-count 200` on the shared 2-core machine, before → after:
//!
//! | tools | renderer_miss | checked_miss | provider_miss |
//! |---|---|---|---|
//! | 8 | 2.90 → 2.10 µs | 1.07 → 0.23 µs | 1.29 → 0.48 µs |
//! | 64 | 8.77 → 2.65 µs | 6.05 → 0.48 µs | 6.91 → 0.83 µs |
//! | 512 | 48.6 → 6.28 µs | 46.1 → 2.49 µs | 47.5 → 3.00 µs |
//!
//! (`renderer_miss` also validates an arbitrary `Serialize` context on every call: ~1.9 µs.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use agent_core::{PreparedCall, ToolEffect, ToolFailure, ToolHandler, ToolRegistry, ToolSpec};
use agent_prompting::{
    CheckedInputs, DynamicPromptProvider, DynamicPromptRenderer, PromptContext, PromptInputs,
    PromptSection, SectionBody, SectionOrder, SectionText, ToolNames,
};
use serde_json::{Value, json};

fn main() {
    divan::main();
}

const TOOLS: &[usize] = &[8, 64, 512];
const IDENTITY: &str = "You are a coding agent. Act, don't explain.";
const WORKSPACE: &str = "/work/project";
const SKILLS: &str =
    "- **rust-test**: Add a focused Rust test\n- **commit-message**: Write a commit message";
const MEMORY: &str = "<relevant_memories>\n## prefers-tabs (feedback)\nThe user wants tabs\nUse tabs.\n</relevant_memories>";

fn context() -> Value {
    json!({"chapter": 10, "mode": {"name": "default", "flags": {"strict": true, "beta": null}}, "greeting": "你好，世界", "ratio": 1.5})
}

/// `n` tool names shaped like real ones (`read_file_17`).
fn names(n: usize) -> Vec<String> {
    const BASE: [&str; 8] = [
        "bash",
        "read_file",
        "write_file",
        "edit_file",
        "glob",
        "todo_write",
        "task",
        "load_skill",
    ];
    (0..n)
        .map(|i| format!("{}_{}", BASE[i % BASE.len()], i / BASE.len()))
        .collect()
}

struct Fixture {
    context: Value,
    tools: Vec<String>,
}

fn fixture(n: usize) -> Fixture {
    Fixture {
        context: context(),
        tools: names(n),
    }
}

/// The skill catalog and a memory block, as the harness gives them.
const SECTIONS: &[SectionText<'static>] = &[
    SectionText {
        heading: "skills",
        body: SKILLS,
    },
    SectionText {
        heading: "memory",
        body: MEMORY,
    },
];

fn inputs(f: &Fixture) -> PromptInputs<'_, Value> {
    PromptInputs {
        identity: IDENTITY,
        context: &f.context,
        tools: &f.tools,
        workspace: WORKSPACE,
        sections: SECTIONS,
    }
}

#[divan::bench(args = TOOLS)]
fn renderer_hit(bencher: divan::Bencher, n: usize) {
    let f = fixture(n);
    let renderer = DynamicPromptRenderer::new();
    renderer.render(&inputs(&f)).unwrap();
    bencher.bench_local(|| renderer.render(divan::black_box(&inputs(&f))).unwrap());
}

#[divan::bench(args = TOOLS)]
fn renderer_miss(bencher: divan::Bencher, n: usize) {
    let f = fixture(n);
    bencher
        .with_inputs(DynamicPromptRenderer::new)
        .bench_local_values(|renderer| renderer.render(divan::black_box(&inputs(&f))).unwrap());
}

fn checked<'a>(context: &'a PromptContext, tools: &'a ToolRegistry) -> CheckedInputs<'a> {
    CheckedInputs {
        identity: IDENTITY,
        context,
        tools: ToolNames::Registry(tools),
        workspace: WORKSPACE,
        sections: SECTIONS,
    }
}

#[divan::bench(args = TOOLS)]
fn checked_hit(bencher: divan::Bencher, n: usize) {
    let (context, tools) = (PromptContext::from_value(context()).unwrap(), registry(n));
    let renderer = DynamicPromptRenderer::new();
    renderer.render_checked(&checked(&context, &tools)).unwrap();
    bencher.bench_local(|| {
        renderer
            .render_checked(divan::black_box(&checked(&context, &tools)))
            .unwrap()
    });
}

#[divan::bench(args = TOOLS)]
fn checked_miss(bencher: divan::Bencher, n: usize) {
    let (context, tools) = (PromptContext::from_value(context()).unwrap(), registry(n));
    bencher
        .with_inputs(DynamicPromptRenderer::new)
        .bench_local_values(|renderer| {
            renderer
                .render_checked(divan::black_box(&checked(&context, &tools)))
                .unwrap()
        });
}

struct Noop;

#[async_trait::async_trait]
impl ToolHandler for Noop {
    async fn handle(&self, _: &PreparedCall) -> Result<String, ToolFailure> {
        Ok(String::new())
    }
}

fn registry(n: usize) -> ToolRegistry {
    let builder = names(n)
        .into_iter()
        .fold(ToolRegistry::builder(), |b, name| {
            let spec = ToolSpec::new(
                name,
                "A tool.",
                ToolEffect::Read,
                json!({"type": "object", "properties": {}}),
            );
            b.tool(spec, Arc::new(Noop))
        });
    builder.build().unwrap()
}

fn provider(tools: &Arc<ToolRegistry>) -> DynamicPromptProvider {
    DynamicPromptProvider::new(
        Arc::new(DynamicPromptRenderer::new()),
        IDENTITY,
        PromptContext::from_value(context()).unwrap(),
        tools.clone(),
        WORKSPACE,
    )
    .section(PromptSection::new(
        "skills",
        SectionOrder::new(1),
        SectionBody::Fixed(SKILLS.into()),
    ))
    .section(PromptSection::new(
        "memory",
        SectionOrder::new(2),
        SectionBody::Live(Arc::new(|| Some(MEMORY.to_string()))),
    ))
}

#[divan::bench(args = TOOLS)]
fn provider_hit(bencher: divan::Bencher, n: usize) {
    let tools = Arc::new(registry(n));
    let provider = provider(&tools);
    provider.render().unwrap();
    bencher.bench_local(|| divan::black_box(&provider).render().unwrap());
}

#[divan::bench(args = TOOLS)]
fn provider_miss(bencher: divan::Bencher, n: usize) {
    let tools = Arc::new(registry(n));
    bencher
        .with_inputs(|| provider(&tools))
        .bench_local_values(|provider| divan::black_box(&provider).render().unwrap());
}
