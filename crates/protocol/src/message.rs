//! The conversation as the harness stores it.
//!
//! These types are provider-neutral on purpose: the OpenAI adapter converts them to
//! Chat Completions JSON, the scripted model replays them, and the snapshots render them.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// One tool call requested by the model. `arguments` is kept as the raw JSON text the model
/// produced, because a malformed string must reach the registry (and become an
/// `invalid_json` tool result) rather than fail while the reply is parsed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The id its result must answer (unique in a conversation; the loop renames repeats).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model wrote them: JSON text, perhaps malformed.
    pub arguments: String,
}

/// A message in the stored history or in a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// Instructions from the harness (the system prompt, a feature's block).
    System {
        /// The text.
        content: String,
    },
    /// What the person typed, or text the harness sends in the user's role.
    User {
        /// The text.
        content: String,
    },
    /// A reply of the model: text, tool calls, or both.
    Assistant {
        /// The reply's text, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        /// The calls it asked for, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call.
    Tool {
        /// The call it answers.
        tool_call_id: String,
        /// The text the model reads (`Error [<code>]: …` for a failure).
        content: String,
    },
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::System {
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::User {
            content: content.into(),
        }
    }

    /// An assistant message with text and no tool call.
    pub fn assistant_text(content: impl Into<String>) -> Self {
        Self::Assistant {
            content: Some(content.into()),
            tool_calls: Vec::new(),
        }
    }

    /// The result of the call `tool_call_id`.
    pub fn tool_result(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self::Tool {
            tool_call_id: tool_call_id.into(),
            content: content.into(),
        }
    }

    /// The role name as the Chat Completions API spells it.
    pub fn role(&self) -> &'static str {
        match self {
            Self::System { .. } => "system",
            Self::User { .. } => "user",
            Self::Assistant { .. } => "assistant",
            Self::Tool { .. } => "tool",
        }
    }

    /// The text of the message (empty for an assistant message with only tool calls).
    pub fn text(&self) -> &str {
        match self {
            Self::System { content } | Self::User { content } | Self::Tool { content, .. } => {
                content
            }
            Self::Assistant { content, .. } => content.as_deref().unwrap_or(""),
        }
    }
}

/// Lets code that takes messages accept both stored (`Arc<Message>`) and plain ones.
impl AsRef<Message> for Message {
    fn as_ref(&self) -> &Message {
        self
    }
}

/// History and requests hold `Arc<Message>` (a request shares the stored messages instead of
/// copying them); these let a shared message be compared with a plain one directly.
impl PartialEq<Message> for Arc<Message> {
    fn eq(&self, other: &Message) -> bool {
        **self == *other
    }
}

impl PartialEq<Arc<Message>> for Message {
    fn eq(&self, other: &Arc<Message>) -> bool {
        *self == **other
    }
}
