//! What can go wrong when a hook runs. Messages reach the model (a failing PreToolUse hook
//! blocks its call with `Error [hook_error]: <HookFailed>`), so they say what the hook did.

use std::error::Error;
use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use crate::event::HookEventKind;

/// Why one hook gave no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// The answer set a field the event's output does not have. `allowed` comes from the
    /// event's output struct itself, so it cannot drift from what is accepted.
    #[error("`{field}` is not a {event} result field (allowed: {})", .allowed.join(", "))]
    FieldNotForEvent {
        event: HookEventKind,
        field: String,
        allowed: &'static [&'static str],
    },
    /// A Rust hook answered with the output of another event.
    #[error("answered a {answered} result to a {event} event")]
    WrongEvent {
        event: HookEventKind,
        answered: HookEventKind,
    },
    /// The answer is not JSON, or a field has the wrong type.
    #[error("answered invalid JSON ({source})")]
    InvalidJson { source: serde_json::Error },
    #[error("cannot encode the event as JSON: {source}")]
    EncodeEvent { source: serde_json::Error },
    #[error("cannot start `{command}`: {source}")]
    Spawn { command: String, source: io::Error },
    /// Waiting for the command or reading its output failed.
    #[error("{source}")]
    Supervise { source: io::Error },
    /// The command ran past its deadline; everything it started was killed.
    #[error("timed out after {}s", .after.as_secs_f64())]
    TimedOut { after: Duration },
    #[error("exited with {status}: {}", .stderr.trim())]
    Exited { status: ExitStatus, stderr: String },
    /// A Rust hook's own failure.
    #[error(transparent)]
    Failed(Box<dyn Error + Send + Sync>),
}

impl HookError {
    /// A Rust hook's own failure, from any error or message.
    pub fn failed(err: impl Into<Box<dyn Error + Send + Sync>>) -> Self {
        Self::Failed(err.into())
    }
}

/// A hook failed: which one, at which event, and why. This is the text reported (and, for a
/// PreToolUse hook, sent to the model).
#[derive(Debug, thiserror::Error)]
#[error("{event} hook `{hook}` failed: {source}")]
pub struct HookFailed {
    pub event: HookEventKind,
    pub hook: String,
    pub source: HookError,
}
