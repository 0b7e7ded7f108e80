mod call_ids;
mod cancel;
mod output;
mod prompt_error;
mod registry;
mod runner;
mod side_call;

use std::sync::Arc;

use agent_core::{
    FixedPrompt, PreparedCall, ToolCall, ToolEffect, ToolFailure, ToolHandler, ToolRegistry,
    ToolSpec,
};
use async_trait::async_trait;
use serde_json::json;

/// A tool that echoes its `text` argument, or fails when `text` is "fail".
pub struct Echo;

#[async_trait]
impl ToolHandler for Echo {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let text = call.arguments["text"].as_str().unwrap_or_default();
        if text == "fail" {
            return Err(ToolFailure::execution("echo was asked to fail"));
        }
        Ok(format!("echo: {text}"))
    }
}

pub fn echo_spec(name: &str) -> ToolSpec {
    ToolSpec::new(
        name,
        "Echo the text back.",
        ToolEffect::Read,
        json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"]
        }),
    )
}

pub fn echo_registry() -> Arc<ToolRegistry> {
    Arc::new(
        ToolRegistry::builder()
            .tool(echo_spec("echo"), Arc::new(Echo))
            .build()
            .unwrap(),
    )
}

pub fn prompt() -> Arc<FixedPrompt> {
    Arc::new(FixedPrompt("You are a test agent.".into()))
}

pub fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}
