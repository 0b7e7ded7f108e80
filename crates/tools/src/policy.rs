//! The workspace-boundary permission rule (chapter 3): write-effect calls whose `path` leaves
//! the workspace are denied before any handler sees them.

use agent_core::permissions::{Behavior, PermissionRule, Verdict};
use agent_core::{PreparedCall, ToolEffect};
use serde_json::Value;

use crate::{PathError, Workspace};

#[derive(Debug, Clone)]
pub struct WorkspaceBoundary(pub Workspace);

impl PermissionRule for WorkspaceBoundary {
    fn name(&self) -> &str {
        "workspace_boundary"
    }

    fn evaluate(&self, call: &PreparedCall) -> Result<Verdict, String> {
        if call.effect != ToolEffect::Write {
            return Ok(Verdict::passthrough(self.name()));
        }
        let Some(path) = call.arguments.get("path").and_then(Value::as_str) else {
            return Ok(Verdict::passthrough(self.name()));
        };
        match self.0.resolve(path) {
            Ok(_) => Ok(Verdict::passthrough(self.name())),
            Err(err @ PathError::Escape { .. }) => {
                Ok(Verdict::new(Behavior::Deny, self.name(), err.to_string()))
            }
            // Cannot tell where it goes: the pipeline turns this into a deny.
            Err(err) => Err(err.to_string()),
        }
    }
}
