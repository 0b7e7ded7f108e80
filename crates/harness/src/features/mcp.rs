//! Chapter 19: MCP servers, the lead's only.

use std::sync::Arc;

use super::{Assembly, Feature, Features, McpUse, ToolSlot};
use crate::mcp_hub::{McpSync, register};
use crate::{BuildError, Capability};

/// The lead gets `connect_mcp` and `disconnect_mcp` and, before every request, the registry
/// made to match its connected servers (a processor that changes no message). A teammate and
/// a subagent get nothing: a server the user trusted is the lead's, and a tool that appears
/// mid-run in a child's registry would be one its parent never saw. Without a hub (nothing
/// opened) it installs nothing.
pub(crate) struct Mcp;

impl Feature for Mcp {
    fn capability(&self) -> Capability {
        Capability::Mcp
    }

    fn describe(&self, features: &mut Features) {
        features.mcp = McpUse::On;
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        let Some(hub) = agent.deps.mcp.clone() else {
            return Ok(());
        };
        if !agent.deps.id.is_lead() {
            return Ok(());
        }
        let tools = hub.clone();
        agent.tools.add(ToolSlot::Mcp, move |t| register(t, tools));
        let sync = hub.clone();
        agent.runner(move |runner| runner.processor(Arc::new(McpSync(sync))));
        agent.mcp = Some(hub);
        Ok(())
    }
}
