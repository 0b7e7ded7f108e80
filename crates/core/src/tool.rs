//! What a tool is: the spec the model sees, the handler that runs, and how failures are told.

use std::fmt;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What running a tool can do to the world; the permission pipeline (chapter 3) keys on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolEffect {
    Read,
    Write,
    Execute,
    External,
}

/// The part of a tool the model sees. Registered apart from the handler (codex-rs style), so
/// the request bytes depend only on specs and several names can share one handler.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// A JSON schema for the arguments (the subset in [`crate::schema`]); strict: unknown
    /// fields are rejected unless the schema says `additionalProperties: true`.
    pub parameters: Value,
    pub effect: ToolEffect,
}

impl ToolSpec {
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        effect: ToolEffect,
        parameters: Value,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
            effect,
        }
    }
}

/// Error codes a tool result can carry. Codes are stable strings because the model reads them.
pub mod codes {
    pub const UNKNOWN_TOOL: &str = "unknown_tool";
    pub const INVALID_JSON: &str = "invalid_json";
    pub const INVALID_ARGUMENTS: &str = "invalid_arguments";
    pub const TOOL_EXECUTION_ERROR: &str = "tool_execution_error";
    pub const PATH_ESCAPE: &str = "path_escape";
    pub const PERMISSION_DENIED: &str = "permission_denied";
    /// A PreToolUse hook failed, so its call does not run (hooks fail closed).
    pub const HOOK_ERROR: &str = "hook_error";
    /// A PreToolUse hook blocked the call.
    pub const HOOK_BLOCKED: &str = "hook_blocked";
    /// A PostToolUse hook stopped the run before this call of the batch ran.
    pub const HOOK_STOPPED_CONTINUATION: &str = "hook_stopped_continuation";
}

/// A failure that goes back to the model as the tool result `Error [<code>]: <message>`; the
/// loop goes on. Failures that must end the run are not `ToolFailure`s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Error [{code}]: {message}")]
pub struct ToolFailure {
    pub code: &'static str,
    pub message: String,
}

impl ToolFailure {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    pub fn execution(message: impl fmt::Display) -> Self {
        Self::new(codes::TOOL_EXECUTION_ERROR, message.to_string())
    }
}

/// How a call shows itself to a person and to policy, in the tool's own words: only the tool
/// knows which of its arguments is the command or the file, so policy never guesses names.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CallSummary {
    /// One line for the approval question: the command, the path, the pattern, … Raw text:
    /// whoever shows it to a person escapes it.
    pub text: String,
    /// The workspace paths the call reads or writes, as the model gave them. The boundary and
    /// secret-reads rules check these; a tool that touches files must list them.
    pub paths: Vec<String>,
}

impl CallSummary {
    /// The compact arguments and no path: the default for a tool that says nothing better.
    pub fn arguments(arguments: &Value) -> Self {
        Self {
            text: arguments.to_string(),
            paths: Vec::new(),
        }
    }

    /// `text` as the summary, and no path.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            paths: Vec::new(),
        }
    }

    /// One path, which is also the summary (the file tools).
    pub fn path(path: impl Into<String>) -> Self {
        let path = path.into();
        Self {
            text: path.clone(),
            paths: vec![path],
        }
    }
}

/// A call that passed the registry's checks: the tool exists and the arguments parse and match
/// the schema. Only prepared calls reach permissions, hooks and handlers.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedCall {
    pub call_id: String,
    pub name: String,
    pub arguments: Value,
    pub effect: ToolEffect,
    /// What the handler said about these arguments ([`ToolHandler::describe`]), computed when
    /// the call is prepared and again when a hook rewrites the input.
    pub summary: CallSummary,
}

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

/// The string argument `key` of validated arguments, or "" (for [`ToolHandler::describe`],
/// which runs after the schema check, so a required string is there).
pub fn string_argument<'a>(arguments: &'a Value, key: &str) -> &'a str {
    arguments
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Deserializes validated arguments into a handler's typed struct. The schema check has run
/// already, so a failure here means the schema and the struct disagree; it still becomes an
/// `invalid_arguments` result rather than a crash.
pub fn parse_arguments<T: serde::de::DeserializeOwned>(
    call: &PreparedCall,
) -> Result<T, ToolFailure> {
    serde_json::from_value(call.arguments.clone())
        .map_err(|err| ToolFailure::new(codes::INVALID_ARGUMENTS, err.to_string()))
}
