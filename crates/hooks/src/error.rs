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
        /// The event the hook was run for.
        event: HookEventKind,
        /// The field it set.
        field: String,
        /// The fields that event's output has.
        allowed: &'static [&'static str],
    },
    /// A Rust hook answered with the output of another event.
    #[error("answered a {answered} result to a {event} event")]
    WrongEvent {
        /// The event the hook was run for.
        event: HookEventKind,
        /// The event whose output it returned.
        answered: HookEventKind,
    },
    /// The answer is not JSON, or a field has the wrong type.
    #[error("answered invalid JSON ({source})")]
    InvalidJson {
        /// The parser's error.
        source: serde_json::Error,
    },
    /// The event could not be written as JSON for a shell hook's stdin.
    #[error("cannot encode the event as JSON: {source}")]
    EncodeEvent {
        /// The encoder's error.
        source: serde_json::Error,
    },
    /// The shell hook's command could not be started.
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        /// The command line from `hooks.json`.
        command: String,
        /// The operating system's error.
        source: io::Error,
    },
    /// Waiting for the command or reading its output failed.
    #[error("{source}")]
    Supervise {
        /// The operating system's error.
        source: io::Error,
    },
    /// The command ran past its deadline; everything it started was killed.
    #[error("timed out after {}s", .after.as_secs_f64())]
    TimedOut {
        /// The hook's time limit.
        after: Duration,
    },
    /// The command exited unsuccessfully; its stderr says why.
    #[error("exited with {status}: {}", .stderr.trim())]
    Exited {
        /// How it exited.
        status: ExitStatus,
        /// Its stderr, bounded like all captured output.
        stderr: String,
    },
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
    /// The event the hook was run for.
    pub event: HookEventKind,
    /// The hook's name (from `hooks.json`, or given to [`crate::FnHook::new`]).
    pub hook: String,
    /// Why it failed.
    pub source: HookError,
}
