//! Running one tool call as the loop does, and building the calls and checks tests repeat.

use agent_core::{ModelRequest, PairingError, ToolCall, ToolRegistry, validate_pairing};
use serde_json::Value;

/// The call id [`call_tool`] gives its call.
pub const CALL_ID: &str = "t1";

/// Runs one call to `name` with `arguments` the way the loop does — the registry prepares it
/// (name, JSON, schema) and the handler runs — and returns the text the model would read: the
/// output, or `Error [<code>]: <message>`. No permission gate and no hooks: those are the
/// runner's, tested with the runner.
pub async fn call_tool(registry: &ToolRegistry, name: &str, arguments: Value) -> String {
    let call = tool_call(CALL_ID, name, arguments);
    let result = match registry.prepare(&call) {
        Ok(prepared) => registry.execute(&prepared).await,
        Err(failure) => Err(failure),
    };
    result.unwrap_or_else(|failure| failure.to_string())
}

/// A call as the model would send it, with `arguments` as their compact JSON text.
pub fn tool_call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.to_string(),
    }
}

/// Whether every request keeps the pairing invariant (every call answered once, no orphan
/// result); the first that does not, by its index, with why. Compare it whole:
/// `assert_eq!(paired(&model.requests()), Ok(()))`.
pub fn paired(requests: &[ModelRequest]) -> Result<(), (usize, PairingError)> {
    requests
        .iter()
        .enumerate()
        .try_for_each(|(index, request)| {
            validate_pairing(&request.messages).map_err(|error| (index, error))
        })
}
