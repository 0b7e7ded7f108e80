//! Chapter 6: `task{description}` runs a child agent.
//!
//! The child starts with an empty history, gets a registry built without `task` (so it cannot
//! recurse), shares the parent's workspace, permission gate and hooks, and is bounded in
//! turns. Only its final text comes back: the parent's context grows by one tool result, not
//! by the child's whole exploration — that is the point of a subagent.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;

use crate::runner::{AgentRunner, RunError};
use crate::tool::{PreparedCall, ToolEffect, ToolFailure, ToolHandler, ToolSpec, parse_arguments};

/// The bound on a child's model requests.
pub const SUBAGENT_MAX_TURNS: usize = 30;

pub fn spec() -> ToolSpec {
    ToolSpec::new(
        "task",
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

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    description: String,
}

type Factory = dyn Fn() -> Result<AgentRunner, String> + Send + Sync;

/// `task`: builds a fresh child runner per call.
pub struct TaskTool {
    factory: Arc<Factory>,
}

impl std::fmt::Debug for TaskTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskTool").finish_non_exhaustive()
    }
}

impl TaskTool {
    /// `factory` must build a runner whose registry has no `task` tool.
    pub fn new(factory: impl Fn() -> Result<AgentRunner, String> + Send + Sync + 'static) -> Self {
        Self {
            factory: Arc::new(factory),
        }
    }
}

#[async_trait]
impl ToolHandler for TaskTool {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: Args = parse_arguments(call)?;
        let child = (self.factory)().map_err(|err| {
            ToolFailure::new(
                "subagent_execution_error",
                format!("cannot build the subagent: {err}"),
            )
        })?;
        if child.tools().spec("task").is_some() {
            return Err(ToolFailure::new(
                "subagent_execution_error",
                "refusing to start a subagent that could start subagents",
            ));
        }
        let mut history = Vec::new();
        match child.run_turn(&mut history, &args.description).await {
            Ok(outcome) => Ok(outcome.final_text),
            Err(RunError::TurnLimit { limit }) => Err(ToolFailure::new(
                "subagent_turn_limit",
                format!("the subagent did not finish within {limit} requests"),
            )),
            Err(err) => Err(ToolFailure::new(
                "subagent_execution_error",
                err.to_string(),
            )),
        }
    }
}
