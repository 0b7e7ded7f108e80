//! A cache hit on the validated path allocates nothing, whatever the number of tools: its own
//! test binary, because it installs a counting global allocator.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

use agent_core::{
    CacheUse, PreparedCall, ToolEffect, ToolFailure, ToolHandler, ToolRegistry, ToolSpec,
};
use agent_prompting::{
    CheckedInputs, DynamicPromptRenderer, PromptContext, SectionText, ToolNames,
};
use serde_json::json;

/// Counts allocations made by the current thread, so tests running in parallel on other
/// threads do not disturb the count.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded unchanged to the system allocator; the counter is a
// const-initialized thread-local `Cell`, which neither allocates nor needs a destructor.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

struct Noop;

#[async_trait::async_trait]
impl ToolHandler for Noop {
    async fn handle(&self, _: &PreparedCall) -> Result<String, ToolFailure> {
        Ok(String::new())
    }
}

fn registry(n: usize) -> ToolRegistry {
    (0..n)
        .fold(ToolRegistry::builder(), |b, i| {
            let spec = ToolSpec::new(
                format!("tool_{i}"),
                "A tool.",
                ToolEffect::Read,
                json!({"type": "object", "properties": {}}),
            );
            b.tool(spec, Arc::new(Noop))
        })
        .build()
        .unwrap()
}

#[test]
fn a_cache_hit_allocates_nothing_at_8_or_512_tools() {
    let context = PromptContext::from_value(json!({"chapter": 10, "mode": "default"})).unwrap();
    let mut counts = Vec::new();
    for n in [8, 512] {
        let tools = registry(n);
        let inputs = CheckedInputs {
            identity: "Be brief.",
            context: &context,
            tools: ToolNames::Registry(&tools),
            workspace: "/work/project",
            sections: &[
                SectionText {
                    heading: "skills",
                    body: "- **rust-test**: Add a test",
                },
                SectionText {
                    heading: "memory",
                    body: "<relevant_memories>\nx\n</relevant_memories>",
                },
            ],
        };
        let renderer = DynamicPromptRenderer::new();
        let miss = renderer.render_checked(&inputs).unwrap();
        // The first hit registers tracing's call site; the measured one comes after it.
        renderer.render_checked(&inputs).unwrap();
        let before = allocations();
        let hit = renderer.render_checked(&inputs).unwrap();
        counts.push(allocations() - before);
        assert_eq!(
            (hit.cache, Arc::ptr_eq(&hit.text, &miss.text)),
            (CacheUse::Hit, true)
        );
    }
    assert_eq!(counts, vec![0, 0]);
}
