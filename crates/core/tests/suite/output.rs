//! `ToolOutput`: a handler that returns parts is read by the model as their joined text; a
//! handler that returns text (through the provided `call`) sends exactly that text.

use std::sync::Arc;

use agent_core::{
    AgentRunner, Message, ModelReply, OutputPart, PreparedCall, ToolFailure, ToolHandler,
    ToolOutput, ToolRegistry,
};
use agent_test_support::{Recording, ScriptedModel};
use async_trait::async_trait;

use super::{Echo, call, echo_spec, prompt};

/// Answers with two text parts, as an MCP tool with two text blocks would.
struct TwoBlocks;

#[async_trait]
impl ToolHandler for TwoBlocks {
    async fn handle(&self, _call: &PreparedCall) -> Result<String, ToolFailure> {
        Ok("text-only rendering (not what the registry runs)".into())
    }

    async fn call(&self, _call: &PreparedCall) -> Result<ToolOutput, ToolFailure> {
        Ok(ToolOutput::from_parts(vec![
            OutputPart::Text("block one".into()),
            OutputPart::Text("block two".into()),
        ]))
    }
}

#[tokio::test]
async fn the_registry_runs_call_and_the_model_reads_the_parts_joined() {
    let registry = Arc::new(
        ToolRegistry::builder()
            .tool(echo_spec("echo"), Arc::new(Echo))
            .tool(echo_spec("blocks"), Arc::new(TwoBlocks))
            .build()
            .unwrap(),
    );
    let model = Arc::new(
        ScriptedModel::replies([
            ModelReply::tool_calls(vec![
                call("c1", "echo", r#"{"text":"line\n"}"#),
                call("c2", "blocks", r#"{"text":"x"}"#),
            ]),
            ModelReply::text("done"),
        ])
        .recording(Recording::Requests),
    );
    let runner = AgentRunner::builder(model.clone(), registry, prompt()).build();
    runner.run_turn(&mut Vec::new(), "go").await.unwrap();
    let last = model.requests().pop().unwrap();
    let results: Vec<Message> = last.messages[3..]
        .iter()
        .map(|m| m.as_ref().clone())
        .collect();
    assert_eq!(
        results,
        [
            Message::tool_result("c1", "echo: line\n"),
            Message::tool_result("c2", "block one\nblock two"),
        ]
    );
}

#[tokio::test]
async fn execute_output_keeps_the_parts_and_execute_renders_them() {
    let registry = ToolRegistry::builder()
        .tool(echo_spec("blocks"), Arc::new(TwoBlocks))
        .build()
        .unwrap();
    let prepared = registry
        .prepare(&call("c1", "blocks", r#"{"text":"x"}"#))
        .unwrap();
    assert_eq!(
        (
            registry.execute_output(&prepared).await,
            registry.execute(&prepared).await
        ),
        (
            Ok(ToolOutput::from_parts(vec![
                OutputPart::Text("block one".into()),
                OutputPart::Text("block two".into()),
            ])),
            Ok("block one\nblock two".to_string())
        )
    );
}
