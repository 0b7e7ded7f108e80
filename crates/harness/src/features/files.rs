//! Chapter 2: the workspace-confined file tools.

use std::sync::Arc;

use agent_tools::add_file_tools;

use super::{Assembly, Feature, ToolSlot};
use crate::routing::add_routed;
use crate::{BuildError, Capability};

/// `read_file`, `write_file`, `edit_file` and `glob`, for the agent and its subagents.
pub(crate) struct Files;

impl Feature for Files {
    fn capability(&self) -> Capability {
        Capability::Files
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        let workspace = agent.deps.workspace.clone();
        match agent.route.clone() {
            None => agent
                .tools
                .add(ToolSlot::Files, move |t| add_file_tools(t, &workspace)),
            // Chapter 18: the same tools, each call run in the teammate's worktree.
            Some(router) => agent.tools.add(ToolSlot::Files, move |t| {
                add_routed(t, router, Arc::new(add_file_tools))
            }),
        }
        let workspace = agent.deps.workspace.clone();
        agent.for_children(move |child| {
            let workspace = workspace.clone();
            child
                .tools
                .add(ToolSlot::Files, move |t| add_file_tools(t, &workspace));
        });
        Ok(())
    }
}
