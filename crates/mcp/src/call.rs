//! One `tools/call`: bounded by the tool timeout, ended at once when the connection is lost,
//! and every way it can fail told to the model as a typed failure.

use agent_core::tool::{FailureCode, ToolFailure};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::ServiceError;

use crate::client::{Shared, State};
use crate::tool::cut;

impl Shared {
    /// One `tools/call` under the tool timeout, ended early if the connection is lost.
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<CallToolResult, ToolFailure> {
        let mut state = self.state.subscribe();
        if *state.borrow_and_update() != State::Connected {
            return Err(self.gone());
        }
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let timeout = self.server.tool_timeout;
        let call = tokio::time::timeout(timeout, self.peer.call_tool(params));
        let lost = state.wait_for(|state| *state != State::Connected);
        tokio::select! {
            // Dropping the call sends `notifications/cancelled`: the server may stop, and the
            // connection stays usable for the next call.
            result = call => match result {
                Err(_) => Err(ToolFailure::new(
                    FailureCode::McpTimeout,
                    format!(
                        "MCP server `{}` did not answer `{tool}` within {} s",
                        self.alias,
                        timeout.as_secs()
                    ),
                )),
                Ok(Ok(result)) => Ok(result),
                Ok(Err(err)) => Err(self.failure(tool, err)),
            },
            _ = lost => Err(self.gone()),
        }
    }

    fn failure(&self, tool: &str, err: ServiceError) -> ToolFailure {
        match err {
            // The JSON-RPC error's message (a sentence, by the spec) is the server's to the
            // caller; its `data` (traces, internals) is not passed on.
            ServiceError::McpError(error) => ToolFailure::new(
                FailureCode::McpRemoteError,
                format!(
                    "MCP server `{}` refused `{tool}`: {} (JSON-RPC error {})",
                    self.alias,
                    cut(&error.message, 500),
                    error.code.0
                ),
            ),
            ServiceError::Timeout { .. } => ToolFailure::new(
                FailureCode::McpTimeout,
                format!(
                    "MCP server `{}` did not answer `{tool}` in time",
                    self.alias
                ),
            ),
            ServiceError::TransportClosed
            | ServiceError::TransportSend(_)
            | ServiceError::Cancelled { .. } => self.gone(),
            other => ToolFailure::new(
                FailureCode::McpRemoteError,
                format!(
                    "MCP server `{}` answered `{tool}` unexpectedly: {}",
                    self.alias,
                    cut(&other.to_string(), 200)
                ),
            ),
        }
    }

    /// The failure for a call to a server that is gone or was disconnected.
    fn gone(&self) -> ToolFailure {
        let how = match *self.state.borrow() {
            State::Closed => "was disconnected",
            State::Connected | State::Lost => "is gone (it exited or closed its output)",
        };
        ToolFailure::new(
            FailureCode::McpConnectionLost,
            format!(
                "MCP server `{}` {how}; its tools cannot be called until it is connected again",
                self.alias
            ),
        )
    }
}
