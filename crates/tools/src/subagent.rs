//! Chapter 6: `task{description}` runs a child agent.
//!
//! The child starts with an empty history, gets a registry built without `task` (so it cannot
//! recurse), shares the parent's workspace, permission gate and hooks, and is bounded in
//! turns. Only its final text comes back: the parent's context grows by one tool result, not
//! by the child's whole exploration — that is the point of a subagent.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use async_trait::async_trait;
use serde_json::{Value, json};

use agent_core::tool::{parse_arguments, string_argument};
use agent_core::{
    AgentEvent, AgentId, AgentRunner, CallSummary, Events, FailureCode, PreparedCall,
    RegistryError, RunError, ToolEffect, ToolFailure, ToolHandler, ToolSpec,
};

/// The bound on a child's model requests.
pub const SUBAGENT_MAX_TURNS: usize = 30;

/// `task` as the model sees it: one `description`, the child's whole brief.
pub fn spec() -> ToolSpec {
    ToolSpec::new(
        TaskTool::NAME,
        "Delegate a self-contained task to a subagent with a fresh context. It can use the same tools (except task) and returns only its final report.",
        ToolEffect::External,
        json!({
            "type": "object",
            "properties": {
                "description": {"type": "string", "minLength": 1, "description": "What the subagent should do and what it should report back."}
            },
            "required": ["description"]
        }),
    )
}

/// Why a child runner could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ChildBuildError {
    /// The child's tools do not register (a bug in the composition root).
    #[error(transparent)]
    Registry(#[from] RegistryError),
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    description: String,
}

type Factory = dyn Fn() -> Result<AgentRunner, ChildBuildError> + Send + Sync;

/// `task`: builds a fresh child runner per call.
pub struct TaskTool {
    factory: Arc<Factory>,
    /// Told when a subagent starts and ends, so a watcher knows which events are the child's
    /// (they go through the parent's sink) without guessing from tool names.
    events: Events,
    /// The agent whose tool this is; its subagents are `<parent>-sub<n>`.
    parent: AgentId,
    /// Subagents started so far.
    started: AtomicU32,
}

impl std::fmt::Debug for TaskTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskTool").finish_non_exhaustive()
    }
}

impl TaskTool {
    /// The tool's name, as the model calls it (and the name a child's registry must not hold).
    pub const NAME: &'static str = "task";

    /// `factory` must build a runner whose registry has no `task` tool.
    pub fn new(
        factory: impl Fn() -> Result<AgentRunner, ChildBuildError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            factory: Arc::new(factory),
            events: Events::default(),
            parent: AgentId::lead(),
            started: AtomicU32::new(0),
        }
    }

    /// Tells `events` when each subagent of `parent` starts and ends.
    pub fn events(mut self, events: Events, parent: AgentId) -> Self {
        self.events = events;
        self.parent = parent;
        self
    }
}

/// Tells that the subagent ended however its call ends: answered, failed, or dropped when the
/// turn is cancelled.
struct Finished<'a> {
    events: &'a Events,
    call_id: &'a str,
    agent: AgentId,
}

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.events.emit(AgentEvent::SubagentFinished {
            call_id: self.call_id.to_string(),
            agent: self.agent.clone(),
        });
    }
}

#[async_trait]
impl ToolHandler for TaskTool {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: Args = parse_arguments(call)?;
        let child = (self.factory)().map_err(|err| {
            ToolFailure::new(
                FailureCode::SubagentExecutionError,
                format!("cannot build the subagent: {err}"),
            )
        })?;
        if child.tools().spec(Self::NAME).is_some() {
            return Err(ToolFailure::new(
                FailureCode::SubagentExecutionError,
                "refusing to start a subagent that could start subagents",
            ));
        }
        let agent = self
            .parent
            .subagent(self.started.fetch_add(1, Ordering::Relaxed) + 1);
        self.events.emit(AgentEvent::SubagentStarted {
            call_id: call.call_id.clone(),
            agent: agent.clone(),
            description: args.description.clone(),
        });
        let _finished = Finished {
            events: &self.events,
            call_id: &call.call_id,
            agent,
        };
        let mut history = Vec::new();
        match child.run_turn(&mut history, &args.description).await {
            Ok(outcome) => Ok(outcome.final_text),
            Err(RunError::TurnLimit { limit }) => Err(ToolFailure::new(
                FailureCode::SubagentTurnLimit,
                format!("the subagent did not finish within {limit} requests"),
            )),
            Err(err) => Err(ToolFailure::new(
                FailureCode::SubagentExecutionError,
                err.to_string(),
            )),
        }
    }

    /// The task as given: it is what the child is asked to do. The child's own calls go
    /// through the same gate, each described by its own tool.
    fn describe(&self, arguments: &Value) -> CallSummary {
        CallSummary::text(string_argument(arguments, "description"))
    }
}
