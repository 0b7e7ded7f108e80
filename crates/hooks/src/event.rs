//! What a hook is told: the event, serialized as JSON for shell hooks.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HookEventKind {
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
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
    UserPromptSubmit {
        prompt: String,
    },
    PreToolUse {
        call_id: String,
        tool: String,
        input: Value,
    },
    PostToolUse {
        call_id: String,
        tool: String,
        input: Value,
        output: String,
        is_error: bool,
    },
    Stop {
        final_text: String,
    },
}

impl HookEvent {
    pub fn kind(&self) -> HookEventKind {
        match self {
            Self::UserPromptSubmit { .. } => HookEventKind::UserPromptSubmit,
            Self::PreToolUse { .. } => HookEventKind::PreToolUse,
            Self::PostToolUse { .. } => HookEventKind::PostToolUse,
            Self::Stop { .. } => HookEventKind::Stop,
        }
    }
}
