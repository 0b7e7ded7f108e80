//! Chapter 2: the workspace-confined file tools.

use agent_tools::add_file_tools;

use super::{Assembly, Feature, ToolSlot};
use crate::{BuildError, Capability};

/// `read_file`, `write_file`, `edit_file` and `glob`, for the agent and its subagents.
pub(crate) struct Files;

impl Feature for Files {
    fn capability(&self) -> Capability {
        Capability::Files
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        let workspace = agent.deps.workspace.clone();
        agent
            .tools
            .add(ToolSlot::Files, move |t| add_file_tools(t, &workspace));
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
