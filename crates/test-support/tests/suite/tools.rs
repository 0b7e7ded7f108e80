use std::sync::Arc;

use agent_core::{
    Message, ModelRequest, PairingError, PreparedCall, ToolEffect, ToolFailure, ToolHandler,
    ToolRegistry, ToolSpec,
};
use agent_test_support::{call_tool, paired, tool_call};
use async_trait::async_trait;
use serde_json::json;

/// Echoes `text`, or fails when it is "fail".
struct Echo;

#[async_trait]
impl ToolHandler for Echo {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        match call.arguments["text"].as_str().unwrap_or_default() {
            "fail" => Err(ToolFailure::execution("asked to fail")),
            text => Ok(format!("echo: {text}")),
        }
    }
}

fn registry() -> ToolRegistry {
    let spec = ToolSpec::new(
        "echo",
        "Echo the text back.",
        ToolEffect::Read,
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    );
    ToolRegistry::builder()
        .tool(spec, Arc::new(Echo))
        .build()
        .unwrap()
}

#[tokio::test]
async fn call_tool_returns_what_the_model_would_read() {
    let registry = registry();
    let results = [
        call_tool(&registry, "echo", json!({"text": "hi"})).await,
        call_tool(&registry, "echo", json!({"text": "fail"})).await,
        call_tool(&registry, "echo", json!({"text": 1})).await,
        call_tool(&registry, "nope", json!({})).await,
    ];
    assert_eq!(
        results,
        [
            "echo: hi",
            "Error [tool_execution_error]: asked to fail",
            "Error [invalid_arguments]: $.text: expected string, got number",
            "Error [unknown_tool]: no tool named `nope`; available: echo",
        ]
    );
}

#[test]
fn paired_names_the_first_request_that_breaks_the_invariant() {
    let call = tool_call("c1", "echo", json!({"text": "hi"}));
    let asked = ModelRequest {
        messages: vec![
            Arc::new(Message::user("go")),
            Arc::new(Message::Assistant {
                content: None,
                tool_calls: vec![call],
            }),
        ],
        ..ModelRequest::default()
    };
    let answered = ModelRequest {
        messages: [
            asked.messages.clone(),
            vec![Arc::new(Message::tool_result("c1", "echo: hi"))],
        ]
        .concat(),
        ..ModelRequest::default()
    };
    assert_eq!(paired(std::slice::from_ref(&answered)), Ok(()));
    assert_eq!(
        paired(&[answered, asked]),
        Err((
            1,
            PairingError::Unanswered {
                index: 1,
                id: "c1".into()
            }
        ))
    );
}
