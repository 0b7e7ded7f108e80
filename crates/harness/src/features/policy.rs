//! Chapter 3: the permission pipeline.

use std::sync::Arc;

use agent_core::{Events, ToolEffect};
use agent_policy::{
    ApprovalProvider, Behavior, DestructiveCommands, EffectRule, PermissionPipeline, PromptWrites,
    ProtectedPaths, SecretReads, WorkspaceBoundary,
};
use agent_tools::Workspace;

use super::{Assembly, Feature};
use crate::{BuildError, Capability};

/// Every call is decided by the pipeline; without it, every call is allowed.
pub(crate) struct Policy;

impl Feature for Policy {
    fn capability(&self) -> Capability {
        Capability::Policy
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        let pipeline = permission_gate(
            &agent.deps.workspace,
            agent.deps.approval.as_ref(),
            &agent.events,
        );
        // What other features added (the plan gate), after the pipeline's own rules.
        let pipeline = std::mem::take(&mut agent.rules)
            .into_iter()
            .fold(pipeline, |pipeline, rule| pipeline.rule(rule));
        agent.gate = Arc::new(pipeline);
        Ok(())
    }
}

/// Chapter 3's pipeline: the boundary and the deny list can only deny; `bash` asks by
/// default; P03 adds "writes ask" and "reading a secret-looking file asks".
fn permission_gate(
    workspace: &Workspace,
    approval: Option<&Arc<dyn ApprovalProvider>>,
    events: &Events,
) -> PermissionPipeline {
    let mut pipeline = PermissionPipeline::new()
        .events(events.clone())
        .rule(Arc::new(WorkspaceBoundary(workspace.clone())))
        .rule(Arc::new(DestructiveCommands))
        // Before the effect rules, so their reason is the one shown: writes that change what
        // runs next time (`.git/`, the state folders, hooks, skills) always ask, and a task's
        // text (chapter 12) reaches every future prompt, so it asks like a write.
        .rule(Arc::new(ProtectedPaths(workspace.clone())))
        .rule(Arc::new(PromptWrites::new([
            agent_tasks::TASK_CREATE,
            agent_tasks::TASK_UPDATE,
        ])))
        .rule(Arc::new(EffectRule::new(
            "execute_asks",
            ToolEffect::Execute,
            Behavior::Ask,
            "running a command needs approval",
        )))
        .rule(Arc::new(EffectRule::new(
            "writes_ask",
            ToolEffect::Write,
            Behavior::Ask,
            "changing a file needs approval",
        )))
        .rule(Arc::new(SecretReads::new(workspace.clone())));
    // `None` denies every `ask`.
    if let Some(approval) = approval {
        pipeline = pipeline.approval(approval.clone());
    }
    pipeline
}
