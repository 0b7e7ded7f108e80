//! `connect_mcp` and `disconnect_mcp`: the model names an alias of the trusted `.mcp.json`,
//! never a command, an argument or a folder.

use std::sync::Arc;

use agent_core::ToolRegistryBuilder;
use agent_core::tool::{
    CallSummary, FailureCode, PreparedCall, ToolEffect, ToolFailure, ToolHandler, ToolSpec,
    parse_arguments,
};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{CONNECT_MCP, DISCONNECT_MCP, McpHub};

/// The two specs, in registration order.
pub fn specs() -> [ToolSpec; 2] {
    let alias = json!({
        "type": "object",
        "properties": {"alias": {"type": "string", "minLength": 1, "description": "The server's name in .mcp.json."}},
        "required": ["alias"]
    });
    [
        ToolSpec::new(
            CONNECT_MCP,
            "Start an MCP server the user configured and trusted in .mcp.json; its tools (mcp__<alias>__<name>) are offered from your next request on.",
            ToolEffect::Execute,
            alias.clone(),
        ),
        ToolSpec::new(
            DISCONNECT_MCP,
            "Stop a connected MCP server; its tools are gone from your next request on.",
            ToolEffect::State,
            alias,
        ),
    ]
}

/// Registers `connect_mcp` and `disconnect_mcp` (the lead's; nobody else gets MCP).
pub(crate) fn register(tools: ToolRegistryBuilder, hub: Arc<McpHub>) -> ToolRegistryBuilder {
    let [connect, disconnect] = specs();
    let tool = |kind| {
        Arc::new(HubTool {
            hub: hub.clone(),
            kind,
        })
    };
    tools
        .tool(connect, tool(Kind::Connect))
        .tool(disconnect, tool(Kind::Disconnect))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Connect,
    Disconnect,
}

struct HubTool {
    hub: Arc<McpHub>,
    kind: Kind,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AliasArgs {
    alias: String,
}

#[async_trait]
impl ToolHandler for HubTool {
    fn describe(&self, arguments: &Value) -> CallSummary {
        CallSummary::arguments(arguments)
    }

    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let AliasArgs { alias } = parse_arguments(call)?;
        let known = self
            .hub
            .config
            .as_ref()
            .is_some_and(|config| config.server(&alias).is_some());
        if !known {
            return Err(ToolFailure::new(
                FailureCode::InvalidArguments,
                format!(
                    "no MCP server `{alias}` is configured; configured: {}",
                    self.hub.aliases()
                ),
            ));
        }
        match self.kind {
            Kind::Connect => {
                if self.hub.tools().await.contains_key(&alias) {
                    return Err(ToolFailure::new(
                        FailureCode::InvalidArguments,
                        format!("MCP server `{alias}` is connected already"),
                    ));
                }
                let names = self.hub.connect(&alias).await.map_err(|err| {
                    ToolFailure::new(FailureCode::ToolExecutionError, err.to_string())
                })?;
                Ok(format!(
                    "Connected MCP server `{alias}`: {} tools ({}). They are offered from your next request on.",
                    names.len(),
                    names.join(", ")
                ))
            }
            Kind::Disconnect => match self.hub.disconnect(&alias).await {
                None => Err(ToolFailure::new(
                    FailureCode::InvalidArguments,
                    format!("MCP server `{alias}` is not connected"),
                )),
                Some(Err(err)) => Err(ToolFailure::new(
                    FailureCode::ToolExecutionError,
                    format!("MCP server `{alias}` did not end: {err}"),
                )),
                Some(Ok(count)) => Ok(format!(
                    "Disconnected MCP server `{alias}`; its {count} tools are gone from your next request on."
                )),
            },
        }
    }
}
