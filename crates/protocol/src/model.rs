//! The boundary between the loop and a language model.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::message::{Message, ToolCall};
use crate::tool::ToolSpec;

/// Everything one model call receives. The system prompt is the first message; it is not a
/// separate field, so what is recorded is exactly what is sent.
///
/// Messages are shared with the stored history (`Arc`), so building a request allocates for
/// what it adds (the system prompt, a reminder), not for the whole conversation. They serialize
/// exactly as plain messages.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    pub messages: Vec<Arc<Message>>,
    /// Tools offered to the model, in registration order. Empty means "send no tools".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    /// A completion limit for this request only, instead of the configured one: chapter 11's
    /// recovery asks again with a larger one after a reply was cut off. Unset (and absent
    /// from the recorded request) otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
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

/// When the server asked the client to try again (`Retry-After`), in the form it used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAfter {
    /// `Retry-After: 7`.
    Seconds(Duration),
    /// `Retry-After: Wed, 21 Oct 2015 07:28:00 GMT`: a wall-clock time.
    At(SystemTime),
}

impl RetryAfter {
    /// How long to wait from `now` (zero for a time already past).
    pub fn wait_from(self, now: SystemTime) -> Duration {
        match self {
            Self::Seconds(wait) => wait,
            Self::At(at) => at.duration_since(now).unwrap_or(Duration::ZERO),
        }
    }
}

/// Which bound ended a run of retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryLimit {
    /// The attempt limit (`--retry-attempts`) was used up.
    Attempts { max: u32 },
    /// The next wait would have ended past the overall deadline (`--retry-deadline`).
    Deadline { after: Duration },
}

impl std::fmt::Display for RetryLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Attempts { max } => write!(f, "the limit of {max} attempts (--retry-attempts)"),
            Self::Deadline { after } => write!(
                f,
                "the {} s deadline (--retry-deadline)",
                after.as_secs_f64()
            ),
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
        retry_after: Option<RetryAfter>,
    },
    #[error("the prompt is too long for the model: {message}")]
    PromptTooLong { message: String },
    #[error("the model server failed (HTTP {status}): {message}")]
    Server {
        status: u16,
        message: String,
        /// Kept for an overloaded server (503, 529) that says when to come back.
        retry_after: Option<RetryAfter>,
    },
    #[error("the model server rejected the request (HTTP {status}): {message}")]
    Http { status: u16, message: String },
    #[error("could not reach the model server: {message}; check OPENAI_BASE_URL")]
    Transport { message: String },
    #[error("the model server sent a reply this harness cannot use: {message}")]
    InvalidResponse { message: String },
    #[error("the scripted model has no reply left for request #{request}")]
    ScriptExhausted { request: usize },
    /// Chapter 11: transient failures went on until a bound was reached.
    #[error(
        "gave up after {attempts} attempt{} in {:.1} s, at {limit}; the last one failed: {last}",
        if *attempts == 1 { "" } else { "s" },
        elapsed.as_secs_f64()
    )]
    GaveUp {
        attempts: u32,
        elapsed: Duration,
        limit: RetryLimit,
        last: Box<ModelError>,
    },
    /// Chapter 11: the reply was cut off inside its tool calls and nothing usable was left.
    #[error(
        "the reply was cut off at the length limit inside tool call{} {}; a cut-off call is never run (raise --max-tokens)",
        if .calls.len() == 1 { "" } else { "s" },
        .calls.join(", ")
    )]
    TruncatedToolCall { calls: Vec<String> },
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
