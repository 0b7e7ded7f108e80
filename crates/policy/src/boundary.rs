//! The workspace-boundary permission rule: write-effect calls with a path (as their tool lists
//! it) that leaves the workspace are denied before any handler sees them.

use agent_core::{Behavior, PreparedCall, ToolEffect, Verdict};
use agent_workspace::{PathError, Workspace};

use crate::pipeline::{PermissionRule, RuleError};

/// The rule, resolving paths against the workspace the tools use.
#[derive(Debug, Clone)]
pub struct WorkspaceBoundary(pub Workspace);

impl WorkspaceBoundary {
    /// The rule's name, as verdicts and the audit log name it.
    pub const NAME: &'static str = "workspace_boundary";
}

impl PermissionRule for WorkspaceBoundary {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn evaluate(&self, call: &PreparedCall) -> Result<Verdict, RuleError> {
        if call.effect != ToolEffect::Write {
            return Ok(Verdict::passthrough(Self::NAME));
        }
        for path in &call.summary.paths {
            match self.0.resolve(path) {
                Ok(_) => {}
                Err(err @ PathError::Escape { .. }) => {
                    return Ok(Verdict::new(Behavior::Deny, Self::NAME, err.to_string()));
                }
                // Cannot tell where it goes: the pipeline turns this into a deny.
                Err(err) => return Err(err.into()),
            }
        }
        Ok(Verdict::passthrough(Self::NAME))
    }
}
