//! Chapter 6: the `task` tool, which runs a subagent.

use std::sync::Arc;

use agent_core::{AgentRunner, Events, ModelClient, PermissionGate, TurnHooks};
use agent_tools::Workspace;
use agent_tools::subagent::{self, ChildBuildError, SUBAGENT_MAX_TURNS, TaskTool};

use super::assembly::{ChildInstall, Tools};
use super::{Assembly, ChildAssembly, Feature, ToolSlot};
use crate::prompts::{SUBAGENT_SYSTEM_PROMPT, fixed_prompt};
use crate::{BuildError, Capability};

/// `task`: a fresh agent for one delegated job, with what the features before this one give
/// children. It has no `task` of its own: a subagent cannot start subagents.
pub(crate) struct Subagent;

impl Feature for Subagent {
    fn capability(&self) -> Capability {
        Capability::Subagent
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        let child = ChildParts {
            model: agent.deps.model.clone(),
            workspace: agent.deps.workspace.clone(),
            gate: agent.gate.clone(),
            hooks: agent.hooks.clone(),
            events: agent.events.clone(),
            features: agent.children.clone(),
        };
        let tool = TaskTool::new(move || child.runner())
            .events(agent.events.clone(), agent.deps.id.clone());
        agent.tools.add(ToolSlot::Subagent, move |t| {
            t.tool(subagent::spec(), Arc::new(tool))
        });
        Ok(())
    }
}

/// What a subagent shares with its parent (chapter 6): model, workspace, permission gate and
/// hooks. Its registry, plan and history are its own, built fresh for every `task` call.
struct ChildParts {
    model: Arc<dyn ModelClient>,
    workspace: Workspace,
    gate: Arc<dyn PermissionGate>,
    hooks: Arc<dyn TurnHooks>,
    events: Events,
    /// What each feature gives a child, in installation order.
    features: Vec<ChildInstall>,
}

impl ChildParts {
    fn runner(&self) -> Result<AgentRunner, ChildBuildError> {
        let mut child = ChildAssembly {
            events: self.events.clone(),
            tools: Tools::default(),
            runner: Vec::new(),
        };
        for install in &self.features {
            install(&mut child);
        }
        let mut runner = AgentRunner::builder(
            self.model.clone(),
            Arc::new(child.tools.build()?),
            fixed_prompt(SUBAGENT_SYSTEM_PROMPT, &self.workspace),
        )
        .max_turns(SUBAGENT_MAX_TURNS)
        .gate(self.gate.clone())
        .hooks(self.hooks.clone())
        .events(self.events.sink().clone());
        for step in child.runner {
            runner = step(runner);
        }
        Ok(runner.build())
    }
}
