//! The boundary between the loop and a language model.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::message::{Message, ToolCall};
use crate::tool::ToolSpec;

/// Everything one model call receives. The system prompt is the first message; it is not a
/// separate field, so what is recorded is exactly what is sent.
///
/// ```
/// use agent_protocol::{Message, ModelRequest};
///
/// let request = ModelRequest {
///     messages: vec![Message::system("Be brief.").into(), Message::user("Hi").into()],
///     ..ModelRequest::default()
/// };
/// // No tools and no limit: neither appears in what is recorded.
/// assert_eq!(
///     serde_json::to_string(&request).unwrap(),
///     r#"{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}]}"#
/// );
/// ```
///
/// Messages are shared with the stored history (`Arc`), so building a request allocates for
/// what it adds (the system prompt, a reminder), not for the whole conversation. They serialize
/// exactly as plain messages.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The conversation as sent, the system prompt first.
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
    /// Tokens of the request.
    pub prompt_tokens: u32,
    /// Tokens of the reply.
    pub completion_tokens: u32,
    /// Both, as the server counts them.
    pub total_tokens: u32,
    /// Prompt tokens served from the provider's prompt cache, when the server says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_prompt_tokens: Option<u32>,
}

/// One assistant reply.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelReply {
    /// The reply's text, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The tool calls it asks for, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Token accounting, when the server sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Why the reply ended, as the server said it (`stop`, `length`, `tool_calls`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
}

impl ModelReply {
    /// A reply of text only.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: Some(content.into()),
            ..Self::default()
        }
    }

    /// A reply of tool calls only.
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
    /// The attempt limit was used up.
    Attempts {
        /// The limit.
        max: u32,
    },
    /// The next wait would have ended past the overall deadline.
    Deadline {
        /// The deadline, counted from the first attempt.
        after: Duration,
    },
}

impl std::fmt::Display for RetryLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Attempts { max } => write!(f, "the limit of {max} attempts"),
            Self::Deadline { after } => write!(f, "the {} s deadline", after.as_secs_f64()),
        }
    }
}

/// Why a model call failed. Statuses are kept so that a later chapter (recovery) can decide
/// what to retry; messages never contain the API key (adapters redact it).
///
/// The texts say what failed, never which setting or flag to change: those belong to the
/// program that configured the client (the CLI adds them as hints).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// 401 or 403: the key is wrong, missing or not allowed this model.
    #[error("the model server rejected the credentials (HTTP {status}): {message}")]
    Auth {
        /// The HTTP status.
        status: u16,
        /// The server's message (the key redacted).
        message: String,
    },
    /// 429.
    #[error("rate limited by the model server (HTTP 429): {message}")]
    RateLimited {
        /// The server's message.
        message: String,
        /// When the server said to come back, if it did.
        retry_after: Option<RetryAfter>,
    },
    /// The request does not fit the model's context (413, or the server's own words).
    #[error("the prompt is too long for the model: {message}")]
    PromptTooLong {
        /// The server's message.
        message: String,
    },
    /// 5xx.
    #[error("the model server failed (HTTP {status}): {message}")]
    Server {
        /// The HTTP status.
        status: u16,
        /// The server's message.
        message: String,
        /// Kept for an overloaded server (503, 529) that says when to come back.
        retry_after: Option<RetryAfter>,
    },
    /// Any other HTTP failure (400, 404, …): the request itself is wrong.
    #[error("the model server rejected the request (HTTP {status}): {message}")]
    Http {
        /// The HTTP status.
        status: u16,
        /// The server's message.
        message: String,
    },
    /// No answer: the connection failed or timed out.
    #[error("could not reach the model server: {message}")]
    Transport {
        /// What failed.
        message: String,
    },
    /// An answer that is not a usable reply (not JSON, no choice, too large, …).
    #[error("the model server sent a reply this harness cannot use: {message}")]
    InvalidResponse {
        /// What is wrong with it.
        message: String,
    },
    /// The model client itself failed, not the server: a client that is not an HTTP adapter
    /// (the scripted model of `agent-test-support` when its script runs out) says why in its
    /// own error type, carried here and shown as it is.
    #[error(transparent)]
    Client(ClientError),
    /// Chapter 11: transient failures went on until a bound was reached.
    #[error(
        "gave up after {attempts} attempt{} in {:.1} s, at {limit}; the last one failed: {last}",
        if *attempts == 1 { "" } else { "s" },
        elapsed.as_secs_f64()
    )]
    GaveUp {
        /// Attempts made.
        attempts: u32,
        /// Time from the first attempt to giving up.
        elapsed: Duration,
        /// The bound that was reached.
        limit: RetryLimit,
        /// The last attempt's failure.
        last: Box<ModelError>,
    },
    /// Chapter 11: the reply was cut off inside its tool calls and nothing usable was left.
    #[error(
        "the reply was cut off at the length limit inside tool call{} {}; a cut-off call is never run",
        if .calls.len() == 1 { "" } else { "s" },
        .calls.join(", ")
    )]
    TruncatedToolCall {
        /// The cut-off calls, as `name (id)`.
        calls: Vec<String>,
    },
}

/// A model client's own failure, kept as the client's typed error behind a shared pointer so
/// that [`ModelError`] stays `Clone` (recovery keeps the last error of a run of retries).
///
/// Shown exactly as the inner error; two values are equal when they share the same failure
/// (cloned from one another), since an arbitrary error has no equality of its own. A test
/// that wants the typed error back asks [`ClientError::downcast_ref`].
#[derive(Clone)]
pub struct ClientError(Arc<dyn std::error::Error + Send + Sync + 'static>);

impl ClientError {
    /// Wraps a client's own error.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self(Arc::new(error))
    }

    /// The client's error as its own type, when it is one.
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.0.downcast_ref::<E>()
    }
}

impl std::fmt::Debug for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.0, f)
    }
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl PartialEq for ClientError {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for ClientError {}

impl ModelError {
    /// A [`ModelError::Client`] carrying `error`.
    pub fn client(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Client(ClientError::new(error))
    }

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
