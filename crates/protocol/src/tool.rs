//! What a tool is: the spec the model sees, the handler that runs, and how failures are told.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What running a tool can do to the world; the permission pipeline (chapter 3) keys on it.
/// Not part of a request: the model never sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolEffect {
    /// Reads the workspace or the harness's state and changes nothing.
    Read,
    /// Changes files in the workspace, or state that decides what runs later without the
    /// person (a durable schedule).
    Write,
    /// Runs a command.
    Execute,
    /// Reaches beyond this process and its workspace (a subagent's own model calls).
    External,
    /// Changes only the harness's own bookkeeping for this agent — a plan, a task list, a job
    /// it started itself — and no file the person owns, and runs no command. The permission
    /// pipeline's rules do not ask before it (as for `Read`); a rule can single it out.
    State,
}

/// The part of a tool the model sees. Registered apart from the handler (codex-rs style), so
/// the request bytes depend only on specs and several names can share one handler.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls it by (`^[A-Za-z0-9_]+$`, unique in a registry).
    pub name: String,
    /// What the model reads about when to use it.
    pub description: String,
    /// A JSON schema for the arguments (the subset `agent-core` checks); strict: unknown
    /// fields are rejected unless the schema says `additionalProperties: true`.
    pub parameters: Value,
    /// What a call can do, for the permission pipeline; never sent to the model.
    pub effect: ToolEffect,
}

impl ToolSpec {
    /// A spec from its parts.
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

/// Why a tool call failed, as the model reads it in `Error [<code>]: …`. A closed set: the
/// codes are part of what the model is taught, so a new one is a decision made here, not a
/// string typed somewhere in a feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailureCode {
    /// No tool of that name is registered.
    UnknownTool,
    /// The arguments are not JSON.
    InvalidJson,
    /// The arguments do not match the tool's schema (or the handler's own checks).
    InvalidArguments,
    /// The handler ran and failed.
    ToolExecutionError,
    /// A path leads outside the workspace.
    PathEscape,
    /// The permission pipeline (chapter 3) denied the call.
    PermissionDenied,
    /// A PreToolUse hook failed, so its call does not run (hooks fail closed).
    HookError,
    /// A PreToolUse hook blocked the call.
    HookBlocked,
    /// A PostToolUse hook stopped the run before this call of the batch ran.
    HookStoppedContinuation,
    /// The subagent (chapter 6) failed.
    SubagentExecutionError,
    /// The subagent used all its turns without a final answer.
    SubagentTurnLimit,
    /// The user cancelled the turn (Ctrl-C, chapter 11) before this call finished.
    Cancelled,
    /// Chapter 15: the recipient is not a teammate that can receive mail (unknown, failed or
    /// shut down); the message names the teammates that exist.
    UnknownRecipient,
    /// Chapter 15: the message is over the size limit.
    MessageTooLarge,
    /// Chapter 15: the recipient already has the most messages allowed waiting.
    MailboxFull,
    /// Chapter 15: the session already has the most teammates allowed, or the name is taken.
    TeamFull,
    /// Chapter 16: no protocol request has that id.
    RequestNotFound,
    /// Chapter 16: the request was superseded (a newer plan) and takes no answer.
    RequestStale,
    /// Chapter 16: the request was already answered differently.
    RequestConflict,
    /// Chapter 16: the answer names a different kind of request, or comes from someone who is
    /// not the request's target.
    RequestWrongSender,
    /// Chapter 16: the request expired before the answer came.
    RequestExpired,
    /// Chapter 17: the claim's lease on the task ran out; the claim is void (another
    /// teammate may hold the task now).
    TaskLeaseExpired,
    /// Chapter 17: the claim token is not the live claim of the caller on that task.
    TaskClaimMismatch,
    /// Chapter 19: the MCP server did not answer the call within its tool timeout (the
    /// connection stays usable).
    McpTimeout,
    /// Chapter 19: the MCP server is gone (exited, crashed, or disconnected).
    McpConnectionLost,
    /// Chapter 19: the MCP server answered with an error (a JSON-RPC error or a result
    /// marked `isError`).
    McpRemoteError,
}

impl FailureCode {
    /// Every code, in the order above.
    pub const ALL: [FailureCode; 26] = [
        Self::UnknownTool,
        Self::InvalidJson,
        Self::InvalidArguments,
        Self::ToolExecutionError,
        Self::PathEscape,
        Self::PermissionDenied,
        Self::HookError,
        Self::HookBlocked,
        Self::HookStoppedContinuation,
        Self::SubagentExecutionError,
        Self::SubagentTurnLimit,
        Self::Cancelled,
        Self::UnknownRecipient,
        Self::MessageTooLarge,
        Self::MailboxFull,
        Self::TeamFull,
        Self::RequestNotFound,
        Self::RequestStale,
        Self::RequestConflict,
        Self::RequestWrongSender,
        Self::RequestExpired,
        Self::TaskLeaseExpired,
        Self::TaskClaimMismatch,
        Self::McpTimeout,
        Self::McpConnectionLost,
        Self::McpRemoteError,
    ];

    /// The stable text the model sees.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::UnknownTool => "unknown_tool",
            Self::InvalidJson => "invalid_json",
            Self::InvalidArguments => "invalid_arguments",
            Self::ToolExecutionError => "tool_execution_error",
            Self::PathEscape => "path_escape",
            Self::PermissionDenied => "permission_denied",
            Self::HookError => "hook_error",
            Self::HookBlocked => "hook_blocked",
            Self::HookStoppedContinuation => "hook_stopped_continuation",
            Self::SubagentExecutionError => "subagent_execution_error",
            Self::SubagentTurnLimit => "subagent_turn_limit",
            Self::Cancelled => "cancelled",
            Self::UnknownRecipient => "unknown_recipient",
            Self::MessageTooLarge => "message_too_large",
            Self::MailboxFull => "mailbox_full",
            Self::TeamFull => "team_full",
            Self::RequestNotFound => "request_not_found",
            Self::RequestStale => "request_stale",
            Self::RequestConflict => "request_conflict",
            Self::RequestWrongSender => "request_wrong_sender",
            Self::RequestExpired => "request_expired",
            Self::TaskLeaseExpired => "task_lease_expired",
            Self::TaskClaimMismatch => "task_claim_mismatch",
            Self::McpTimeout => "mcp_timeout",
            Self::McpConnectionLost => "mcp_connection_lost",
            Self::McpRemoteError => "mcp_remote_error",
        }
    }
}

impl fmt::Display for FailureCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure that goes back to the model as the tool result `Error [<code>]: <message>`; the
/// loop goes on. Failures that must end the run are not `ToolFailure`s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Error [{code}]: {message}")]
pub struct ToolFailure {
    /// Which kind of failure.
    pub code: FailureCode,
    /// What the model should know to do better.
    pub message: String,
}

impl ToolFailure {
    /// A failure with its code and message.
    pub fn new(code: FailureCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// The handler ran and failed (`tool_execution_error`).
    pub fn execution(message: impl fmt::Display) -> Self {
        Self::new(FailureCode::ToolExecutionError, message.to_string())
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
    /// What a person must see before approving, beyond `text`: a write's new content, an
    /// edit's unified diff. Raw text, bounded by the tool; whoever shows it escapes it.
    pub detail: Option<String>,
}

impl CallSummary {
    /// The compact arguments and no path: the default for a tool that says nothing better.
    pub fn arguments(arguments: &Value) -> Self {
        Self {
            text: arguments.to_string(),
            paths: Vec::new(),
            detail: None,
        }
    }

    /// `text` as the summary, and no path.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            paths: Vec::new(),
            detail: None,
        }
    }

    /// One path, which is also the summary (the file tools).
    pub fn path(path: impl Into<String>) -> Self {
        let path = path.into();
        Self {
            text: path.clone(),
            paths: vec![path],
            detail: None,
        }
    }

    /// The same summary with `detail` shown under it for approval.
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
}

/// A call that passed the registry's checks: the tool exists and the arguments parse and match
/// the schema. Only prepared calls reach permissions, hooks and handlers.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedCall {
    /// The id of the model's call.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, parsed and checked against the schema.
    pub arguments: Value,
    /// The tool's effect, from its spec.
    pub effect: ToolEffect,
    /// What the handler said about these arguments (the handler's `describe`), computed when
    /// the call is prepared and again when a hook rewrites the input.
    pub summary: CallSummary,
}

/// The string argument `key` of validated arguments, or "" (for a handler's `describe`,
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
        .map_err(|err| ToolFailure::new(FailureCode::InvalidArguments, err.to_string()))
}

#[cfg(test)]
mod effect_tests {
    use super::ToolEffect;

    #[test]
    fn effects_are_named_in_snake_case() {
        let names: Vec<String> = [
            ToolEffect::Read,
            ToolEffect::Write,
            ToolEffect::Execute,
            ToolEffect::External,
            ToolEffect::State,
        ]
        .iter()
        .map(|effect| serde_json::to_string(effect).unwrap_or_default())
        .collect();
        assert_eq!(
            names,
            [
                r#""read""#,
                r#""write""#,
                r#""execute""#,
                r#""external""#,
                r#""state""#
            ]
        );
    }
}

#[cfg(test)]
mod failure_code_tests {
    use super::FailureCode;

    #[test]
    fn every_code_reads_as_the_model_has_always_seen_it() {
        let texts: Vec<&str> = FailureCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            texts,
            [
                "unknown_tool",
                "invalid_json",
                "invalid_arguments",
                "tool_execution_error",
                "path_escape",
                "permission_denied",
                "hook_error",
                "hook_blocked",
                "hook_stopped_continuation",
                "subagent_execution_error",
                "subagent_turn_limit",
                "cancelled",
                "unknown_recipient",
                "message_too_large",
                "mailbox_full",
                "team_full",
                "request_not_found",
                "request_stale",
                "request_conflict",
                "request_wrong_sender",
                "request_expired",
                "task_lease_expired",
                "task_claim_mismatch",
                "mcp_timeout",
                "mcp_connection_lost",
                "mcp_remote_error",
            ]
        );
        // `ALL` lists every variant: this match stops compiling when one is added.
        for code in FailureCode::ALL {
            match code {
                FailureCode::UnknownTool
                | FailureCode::InvalidJson
                | FailureCode::InvalidArguments
                | FailureCode::ToolExecutionError
                | FailureCode::PathEscape
                | FailureCode::PermissionDenied
                | FailureCode::HookError
                | FailureCode::HookBlocked
                | FailureCode::HookStoppedContinuation
                | FailureCode::SubagentExecutionError
                | FailureCode::SubagentTurnLimit
                | FailureCode::Cancelled
                | FailureCode::UnknownRecipient
                | FailureCode::MessageTooLarge
                | FailureCode::MailboxFull
                | FailureCode::TeamFull
                | FailureCode::RequestNotFound
                | FailureCode::RequestStale
                | FailureCode::RequestConflict
                | FailureCode::RequestWrongSender
                | FailureCode::RequestExpired
                | FailureCode::TaskLeaseExpired
                | FailureCode::TaskClaimMismatch
                | FailureCode::McpTimeout
                | FailureCode::McpConnectionLost
                | FailureCode::McpRemoteError => {}
            }
        }
    }
}
