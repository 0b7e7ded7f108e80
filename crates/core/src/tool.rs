//! What runs a tool: the [`ToolHandler`] trait. The spec the model sees, the prepared call and
//! how failures are told are the protocol crate's, re-exported here.

use async_trait::async_trait;
use serde_json::Value;

pub use agent_protocol::output::{OutputPart, ToolOutput};
pub use agent_protocol::tool::*;

/// Runs a tool. Handlers receive already-validated arguments.
///
/// A handler writes [`handle`](ToolHandler::handle) and returns text; the registry calls
/// [`call`](ToolHandler::call), whose default wraps that text as a one-part [`ToolOutput`]
/// (the model then reads exactly the same bytes). A tool with structured output (MCP content
/// blocks, chapter 19) overrides `call` too, and makes `handle` its text-only rendering.
#[async_trait]
pub trait ToolHandler: Send + Sync {
    /// Runs the call and returns the text the model reads, or the failure it is told.
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure>;

    /// Runs the call and returns its output as parts. What the registry runs.
    async fn call(&self, call: &PreparedCall) -> Result<ToolOutput, ToolFailure> {
        self.handle(call).await.map(ToolOutput::text)
    }

    /// Describes a call with already-validated `arguments` for approval and policy. The
    /// default shows the compact arguments and names no path.
    fn describe(&self, arguments: &Value) -> CallSummary {
        CallSummary::arguments(arguments)
    }
}
