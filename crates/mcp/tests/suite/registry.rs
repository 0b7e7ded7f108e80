//! The tools in a real registry, registered the way the harness will: the spec, the handler
//! and the schema mode the connection checked them in.

use std::sync::Arc;

use agent_core::tool::{FailureCode, ToolEffect, ToolFailure, ToolHandler, ToolSpec};
use agent_core::{ToolCall, ToolRegistry};
use async_trait::async_trait;
use serde_json::json;

use super::Fixture;

struct Builtin;

#[async_trait]
impl ToolHandler for Builtin {
    async fn handle(&self, _call: &agent_core::tool::PreparedCall) -> Result<String, ToolFailure> {
        Ok("builtin".into())
    }
}

#[tokio::test]
async fn the_tools_register_and_run_through_the_registry() {
    let fixture = Fixture::new();
    let registry = ToolRegistry::builder()
        .tool(
            ToolSpec::new(
                "bash",
                "Runs a command.",
                ToolEffect::Execute,
                json!({"type": "object"}),
            ),
            Arc::new(Builtin),
        )
        .build()
        .unwrap();
    let reserved: Vec<String> = registry.names();
    let reserved: Vec<&str> = reserved.iter().map(String::as_str).collect();
    let config = fixture.config(None, json!({}));
    let connection = fixture.connect_with(&config, &reserved).await.unwrap();
    for tool in connection.tools() {
        let spec = tool.spec().clone();
        let mode = tool.schema_mode();
        registry.register_in(spec, Arc::new(tool), mode).unwrap();
    }
    assert_eq!(registry.names().len(), 13);

    let call = |arguments: &str| ToolCall {
        id: "call_1".into(),
        name: "mcp__srv__echo".into(),
        arguments: arguments.into(),
    };
    let prepared = registry
        .prepare(&call(r#"{"text": "through the registry"}"#))
        .unwrap();
    assert_eq!(prepared.effect, ToolEffect::External);
    assert_eq!(
        registry.execute(&prepared).await,
        Ok("through the registry".to_string())
    );
    // The registry's own checker refuses what it knows before the handler runs.
    assert_eq!(
        registry.prepare(&call(r#"{"text": 5}"#)).unwrap_err(),
        ToolFailure::new(
            FailureCode::InvalidArguments,
            "$.text: expected string, got number"
        )
    );
    assert_eq!(fixture.calls(), "call echo\n");
    connection.close().await.unwrap();
}
