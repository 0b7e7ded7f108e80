//! What runs a tool: the [`ToolHandler`] trait. The spec the model sees, the prepared call and
//! how failures are told are the protocol crate's, re-exported here.

use async_trait::async_trait;
use serde_json::Value;

pub use agent_protocol::tool::*;

/// Runs a tool. Handlers receive already-validated arguments.
#[async_trait]
pub trait ToolHandler: Send + Sync {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure>;

    /// Describes a call with already-validated `arguments` for approval and policy. The
    /// default shows the compact arguments and names no path.
    fn describe(&self, arguments: &Value) -> CallSummary {
        CallSummary::arguments(arguments)
    }
}
