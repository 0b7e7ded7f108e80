//! Chapter 1: the `bash` tool.

use std::sync::Arc;

use agent_tools::{add_bash, add_bash_with};

use super::{Assembly, Feature, ToolSlot};
use crate::routing::add_routed;
use crate::{BuildError, Capability};

/// `bash`, able to start background jobs once chapter 13's are installed; a subagent's never
/// is.
pub(crate) struct Bash;

impl Feature for Bash {
    fn capability(&self) -> Capability {
        Capability::Bash
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        let (workspace, config) = (agent.deps.workspace.clone(), agent.deps.bash);
        match (agent.route.clone(), agent.jobs.clone()) {
            // Chapter 18: a teammate's `bash` (a teammate starts no background job) runs in
            // its worktree.
            (Some(router), _) => agent.tools.add(ToolSlot::Bash, move |t| {
                add_routed(t, router, Arc::new(move |t, ws| add_bash(t, ws, config)))
            }),
            (None, None) => agent
                .tools
                .add(ToolSlot::Bash, move |t| add_bash(t, &workspace, config)),
            (None, Some(jobs)) => agent.tools.add(ToolSlot::Bash, move |t| {
                add_bash_with(t, &workspace, config, agent_tools::Background::On(jobs))
            }),
        }
        let workspace = agent.deps.workspace.clone();
        agent.for_children(move |child| {
            let workspace = workspace.clone();
            child
                .tools
                .add(ToolSlot::Bash, move |t| add_bash(t, &workspace, config));
        });
        Ok(())
    }
}
