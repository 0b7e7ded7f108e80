//! The boundary between the loop and a language model.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::message::{Message, ToolCall};
use crate::tool::ToolSpec;

/// Everything one model call receives. The system prompt is the first message; it is not a
/// separate field, so what is recorded is exactly what is sent.
///
/// Messages are shared with the stored history (`Arc`), so building a request allocates for
/// what it adds (the system prompt, a reminder), not for the whole conversation. They serialize
/// exactly as plain messages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    pub messages: Vec<Arc<Message>>,
    /// Tools offered to the model, in registration order. Empty means "send no tools".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
}

/// Token accounting reported by the server, when it reports any.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub total_tokens: u32,
    /// Prompt tokens served from the provider's prompt cache, when the server says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_prompt_tokens: Option<u32>,
}

/// One assistant reply.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelReply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
}

impl ModelReply {
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: Some(content.into()),
            ..Self::default()
        }
    }

    pub fn tool_calls(calls: Vec<ToolCall>) -> Self {
        Self {
            tool_calls: calls,
            ..Self::default()
        }
    }

    /// The reply as it is stored in history.
    pub fn to_message(&self) -> Message {
        Message::Assistant {
            content: self.content.clone(),
            tool_calls: self.tool_calls.clone(),
        }
    }
}

/// Why a model call failed. Statuses are kept so that a later chapter (recovery) can decide
/// what to retry; messages never contain the API key (adapters redact it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error(
        "the model server rejected the credentials (HTTP {status}): {message}; check OPENAI_API_KEY"
    )]
    Auth { status: u16, message: String },
    #[error("rate limited by the model server (HTTP 429): {message}")]
    RateLimited {
        message: String,
        retry_after: Option<Duration>,
    },
    #[error("the prompt is too long for the model: {message}")]
    PromptTooLong { message: String },
    #[error("the model server failed (HTTP {status}): {message}")]
    Server { status: u16, message: String },
    #[error("the model server rejected the request (HTTP {status}): {message}")]
    Http { status: u16, message: String },
    #[error("could not reach the model server: {message}; check OPENAI_BASE_URL")]
    Transport { message: String },
    #[error("the model server sent a reply this harness cannot use: {message}")]
    InvalidResponse { message: String },
    #[error("the scripted model has no reply left for request #{request}")]
    ScriptExhausted { request: usize },
}

impl ModelError {
    /// The HTTP status behind the error, when there was one.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Auth { status, .. } | Self::Server { status, .. } | Self::Http { status, .. } => {
                Some(*status)
            }
            Self::RateLimited { .. } => Some(429),
            _ => None,
        }
    }
}

/// A language model the loop can call. Implemented by the OpenAI adapter and by
/// [`crate::scripted::ScriptedModel`] for offline runs.
#[async_trait]
pub trait ModelClient: Send + Sync {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError>;
}
