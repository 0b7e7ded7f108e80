//! What the registry costs per tool call: parsing and schema-checking the model's arguments,
//! and the pairing check that runs on every request.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use agent_core::{
    Message, PreparedCall, ToolCall, ToolEffect, ToolFailure, ToolHandler, ToolRegistry, ToolSpec,
    validate_pairing,
};
use async_trait::async_trait;
use serde_json::json;

fn main() {
    divan::main();
}

struct Nop;

#[async_trait]
impl ToolHandler for Nop {
    async fn handle(&self, _call: &PreparedCall) -> Result<String, ToolFailure> {
        Ok(String::new())
    }
}

fn registry() -> ToolRegistry {
    let mut builder = ToolRegistry::builder();
    for name in ["bash", "read_file", "write_file", "edit_file", "glob"] {
        let spec = ToolSpec::new(
            name,
            "bench",
            ToolEffect::Read,
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "old_text": {"type": "string", "minLength": 1},
                    "new_text": {"type": "string"}
                },
                "required": ["path", "old_text", "new_text"]
            }),
        );
        builder = builder.tool(spec, Arc::new(Nop));
    }
    builder.build().unwrap()
}

#[divan::bench]
fn prepare_edit_call(bencher: divan::Bencher) {
    let registry = registry();
    let call = ToolCall {
        id: "c1".into(),
        name: "edit_file".into(),
        arguments: r#"{"path":"src/main.rs","old_text":"println!(\"hi\")","new_text":"println!(\"hello\")"}"#.into(),
    };
    bencher.bench_local(|| registry.prepare(divan::black_box(&call)).unwrap());
}

#[divan::bench(args = [10, 100, 1000])]
fn pairing_check(bencher: divan::Bencher, rounds: usize) {
    let mut messages = vec![Message::system("s"), Message::user("u")];
    for i in 0..rounds {
        let id = format!("c{i}");
        messages.push(Message::Assistant {
            content: None,
            tool_calls: vec![ToolCall {
                id: id.clone(),
                name: "bash".into(),
                arguments: "{}".into(),
            }],
        });
        messages.push(Message::tool_result(id, "ok"));
    }
    bencher.bench_local(|| validate_pairing(divan::black_box(&messages)).unwrap());
}
