//! What a hook is told: the event, serialized as JSON for shell hooks.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The moments of a turn a hook can be registered for: the key of `hooks.json` and of
/// [`crate::HookRegistry::register`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HookEventKind {
    /// The person submitted a prompt; before it is stored.
    UserPromptSubmit,
    /// A tool call was prepared; before the permission check and the call.
    PreToolUse,
    /// A tool call finished; before its result is stored.
    PostToolUse,
    /// The model gave its final answer.
    Stop,
}

impl fmt::Display for HookEventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// What a hook is told. Serialized as JSON for shell hooks (`{"event": "PreToolUse", …}`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event")]
pub enum HookEvent {
    /// See [`HookEventKind::UserPromptSubmit`].
    UserPromptSubmit {
        /// What the person typed.
        prompt: String,
    },
    /// See [`HookEventKind::PreToolUse`].
    PreToolUse {
        /// The call's id, to pair it with its PostToolUse event.
        call_id: String,
        /// The tool's name.
        tool: String,
        /// The call's arguments, already checked against the tool's schema.
        input: Value,
    },
    /// See [`HookEventKind::PostToolUse`].
    PostToolUse {
        /// The call's id.
        call_id: String,
        /// The tool's name.
        tool: String,
        /// The arguments the call ran with.
        input: Value,
        /// The text the model would read.
        output: String,
        /// The call failed (`output` is the failure's text).
        is_error: bool,
    },
    /// See [`HookEventKind::Stop`].
    Stop {
        /// The model's final answer.
        final_text: String,
    },
}

impl HookEvent {
    /// Which moment this is: what registrations are matched against.
    pub fn kind(&self) -> HookEventKind {
        match self {
            Self::UserPromptSubmit { .. } => HookEventKind::UserPromptSubmit,
            Self::PreToolUse { .. } => HookEventKind::PreToolUse,
            Self::PostToolUse { .. } => HookEventKind::PostToolUse,
            Self::Stop { .. } => HookEventKind::Stop,
        }
    }
}
