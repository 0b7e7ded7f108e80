//! What a failed exchange means for the loop: a typed [`ModelError`] with the HTTP status and
//! the server's own message, the key redacted and the text bounded.

use agent_core::ModelError;
use serde_json::Value;

use crate::config::ApiKey;
use crate::http::{HttpError, RawReply};
use crate::stream::StreamError;

/// At most this many bytes of a server's text go into an error message: enough to read the
/// cause, not a megabyte of HTML on the terminal.
const MAX_MESSAGE_BYTES: usize = 2000;

/// The server's text made safe to show: the key replaced first (so a cut can never leave part
/// of it), then bounded.
fn shown(text: &str, key: &ApiKey) -> String {
    let text = key.redact(text);
    if text.len() <= MAX_MESSAGE_BYTES {
        return text;
    }
    let mut end = MAX_MESSAGE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..end], text.len())
}

/// The message and code of an error body: OpenAI's `{"error": {"message", "code"}}` when the
/// server follows it, otherwise the body itself.
fn error_text(body: &[u8]) -> (String, Option<String>) {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let error = parsed.as_ref().and_then(|v| v.get("error"));
    match error.and_then(|e| e.get("message")).and_then(Value::as_str) {
        Some(message) => (
            message.to_string(),
            error
                .and_then(|e| e.get("code"))
                .and_then(Value::as_str)
                .map(str::to_string),
        ),
        None => (String::from_utf8_lossy(body).into_owned(), None),
    }
}

fn looks_like_context_overflow(code: Option<&str>, message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    code == Some("context_length_exceeded")
        || message.contains("context length")
        || message.contains("context window")
        || message.contains("prompt is too long")
        || message.contains("too many tokens")
}

/// Maps a complete non-success reply to a typed error.
pub(crate) fn map_status(reply: &RawReply, key: &ApiKey) -> ModelError {
    let status = reply.status;
    // Server errors are often not JSON (a proxy's HTML page): keep their body as it came.
    let (text, code) = if status >= 500 {
        (String::from_utf8_lossy(&reply.body).into_owned(), None)
    } else {
        error_text(&reply.body)
    };
    let message = shown(&text, key);
    match status {
        401 | 403 => ModelError::Auth { status, message },
        429 => ModelError::RateLimited {
            message,
            retry_after: reply.retry_after,
        },
        413 => ModelError::PromptTooLong { message },
        400 if looks_like_context_overflow(code.as_deref(), &message) => {
            ModelError::PromptTooLong { message }
        }
        s if s >= 500 => ModelError::Server {
            status,
            message,
            retry_after: reply.retry_after,
        },
        _ => ModelError::Http { status, message },
    }
}

/// Maps a failed exchange (no complete reply) to a typed error.
pub(crate) fn map_http_error(error: HttpError, key: &ApiKey) -> ModelError {
    match error {
        HttpError::TooLarge { .. } => ModelError::InvalidResponse {
            message: error.to_string(),
        },
        // Retryable (chapter 11): a stalled stream is a dropped connection by another name.
        HttpError::Build { .. }
        | HttpError::Timeout { .. }
        | HttpError::Idle { .. }
        | HttpError::Transport { .. } => ModelError::Transport {
            message: shown(&error.to_string(), key),
        },
    }
}

/// A stream that gave no reply. A cut stream is a dropped connection: retryable, like one
/// (chapter 11 asks again; the CLI shows the new attempt's text without repeating itself).
/// A stream that arrived whole but does not make a reply is not.
pub(crate) fn map_stream_error(error: StreamError, key: &ApiKey) -> ModelError {
    let message = shown(&error.to_string(), key);
    match error {
        StreamError::Cut => ModelError::Transport { message },
        StreamError::Chunk { .. }
        | StreamError::Server { .. }
        | StreamError::NoChoices
        | StreamError::IncompleteCall { .. } => ModelError::InvalidResponse { message },
    }
}

/// A success status whose body is not a chat completion.
pub(crate) fn unparsable(error: &serde_json::Error, body: &[u8], key: &ApiKey) -> ModelError {
    ModelError::InvalidResponse {
        message: shown(
            &format!(
                "not a chat completion ({error}); the body was: {}",
                String::from_utf8_lossy(body)
            ),
            key,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::RetryAfter;

    #[test]
    fn long_server_text_is_redacted_then_cut() {
        let key = ApiKey::new("sk-abcdef");
        let text = format!("{}sk-abcdef", "x".repeat(MAX_MESSAGE_BYTES - 3));
        assert_eq!(
            shown(&text, &key),
            format!(
                "{}[re… (2007 bytes in all)",
                "x".repeat(MAX_MESSAGE_BYTES - 3)
            )
        );
    }

    #[test]
    fn a_retry_after_date_is_kept_on_an_overloaded_server_error() {
        let at = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_735_689_613);
        let reply = RawReply {
            status: 529,
            retry_after: Some(RetryAfter::At(at)),
            body: b"overloaded".to_vec(),
        };
        assert_eq!(
            map_status(&reply, &ApiKey::new("sk-abcdef")),
            ModelError::Server {
                status: 529,
                message: "overloaded".into(),
                retry_after: Some(RetryAfter::At(at)),
            }
        );
    }

    #[test]
    fn a_retry_after_is_kept_on_a_429() {
        let reply = RawReply {
            status: 429,
            retry_after: Some(RetryAfter::Seconds(std::time::Duration::from_secs(3600))),
            body: br#"{"error":{"message":"slow down","code":"rate_limit_exceeded"}}"#.to_vec(),
        };
        assert_eq!(
            map_status(&reply, &ApiKey::new("sk-abcdef")),
            ModelError::RateLimited {
                message: "slow down".into(),
                retry_after: Some(RetryAfter::Seconds(std::time::Duration::from_secs(3600))),
            }
        );
    }
}
