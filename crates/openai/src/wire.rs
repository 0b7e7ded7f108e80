//! The request body, written straight from our messages, each stored message encoded once.
//!
//! [`crate::to_chat_request`] converts the whole history to async-openai's types (copying every
//! string) and serde encodes the lot, on every request: a round's cost grew with the session.
//! Here each message is written as Chat Completions JSON directly (no conversion), and the
//! [`RequestEncoder`] keeps the bytes of the previous request's messages beside them: a message
//! that is the same stored message (the same `Arc`) at the same place is copied, not encoded
//! again. A round encodes what is new (the system prompt, the reply and its results) and copies
//! the rest once, into the body it sends.
//!
//! The bytes are exactly those of `serde_json::to_vec(&to_chat_request(..))` (tests compare the
//! two over fixtures and generated messages): a server sees no difference.

use std::sync::{Arc, Mutex, PoisonError};

use agent_core::{Message, ModelRequest, ToolSpec};
use bytes::Bytes;

use crate::client::to_chat_request;
use crate::config::Sampling;
use crate::stream::Streaming;
use async_openai::types::chat::ChatCompletionStreamOptions;

/// Appends `text` as a JSON string, escaped exactly as serde_json escapes it: `"` and `\`,
/// the control characters below U+0020 (`\b \t \n \f \r` by name, the others as `\u00XX` in
/// lower-case hex); everything else, U+007F and non-ASCII included, as it is.
pub fn write_json_str(out: &mut Vec<u8>, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let named: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        if named.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        } else {
            out.extend_from_slice(named);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Appends one message as Chat Completions JSON, the bytes serde writes for
/// `to_chat_message(message)`: the role first, an assistant's content never `null`.
pub fn encode_message(out: &mut Vec<u8>, message: &Message) {
    match message {
        Message::System { content } => {
            out.extend_from_slice(br#"{"role":"system","content":"#);
            write_json_str(out, content);
        }
        Message::User { content } => {
            out.extend_from_slice(br#"{"role":"user","content":"#);
            write_json_str(out, content);
        }
        Message::Assistant {
            content,
            tool_calls,
        } => {
            out.extend_from_slice(br#"{"role":"assistant","content":"#);
            write_json_str(out, content.as_deref().unwrap_or(""));
            if !tool_calls.is_empty() {
                out.extend_from_slice(br#","tool_calls":["#);
                for (i, call) in tool_calls.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    out.extend_from_slice(br#"{"type":"function","id":"#);
                    write_json_str(out, &call.id);
                    out.extend_from_slice(br#","function":{"name":"#);
                    write_json_str(out, &call.name);
                    out.extend_from_slice(br#","arguments":"#);
                    write_json_str(out, &call.arguments);
                    out.extend_from_slice(b"}}");
                }
                out.push(b']');
            }
        }
        Message::Tool {
            tool_call_id,
            content,
        } => {
            out.extend_from_slice(br#"{"role":"tool","content":"#);
            write_json_str(out, content);
            out.extend_from_slice(br#","tool_call_id":"#);
            write_json_str(out, tool_call_id);
        }
    }
    out.push(b'}');
}

/// What every body of one model starts with before its messages.
const HEAD: &[u8] = br#"{"messages":["#;

/// Why no body was written.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// serde could not write the part after the messages (the tools).
    #[error("cannot encode the request: {0}")]
    Serialize(#[from] serde_json::Error),
    /// async-openai's request type no longer writes its messages first.
    #[error("cannot encode the request: the request type does not start with its messages")]
    Layout,
}

/// Writes request bodies for one model, remembering the previous one.
pub struct RequestEncoder {
    model: String,
    sampling: Sampling,
    cache_key: Option<String>,
    stream: Streaming,
    previous: Mutex<Previous>,
}

impl std::fmt::Debug for RequestEncoder {
    /// The model only: the previous body is the whole conversation, not for a log line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestEncoder")
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

/// The previous body and what it was made of.
#[derive(Default)]
struct Previous {
    /// Its messages, held so that a pointer equal to one of them is that very message: an
    /// `Arc` cannot be freed, reused or changed while this is held.
    messages: Vec<Arc<Message>>,
    /// Where each message's bytes end in `body` (they start where the one before ends, after
    /// its comma).
    ends: Vec<usize>,
    body: Bytes,
    /// The body before that one, whose buffer the next body is written into once the HTTP
    /// layer has let go of it: a large body in a fresh allocation costs a page fault per 4 KB
    /// written, more than the copying.
    older: Bytes,
    /// The part after the messages (`],"model":…}`), and what it was written from.
    tail: Vec<u8>,
    tools: Vec<ToolSpec>,
    max_tokens: Option<u32>,
}

impl RequestEncoder {
    /// An encoder for requests to `model`; `cache_key` is sent as `prompt_cache_key`.
    pub fn new(model: impl Into<String>, sampling: Sampling, cache_key: Option<String>) -> Self {
        Self {
            model: model.into(),
            sampling,
            cache_key,
            stream: Streaming::Off,
            previous: Mutex::new(Previous::default()),
        }
    }

    /// Asks for a streamed reply ([`Streaming::On`]): the body gains `"stream":true` and
    /// `"stream_options":{"include_usage":true}`, and nothing else changes. Off (the
    /// default) writes exactly the non-streaming bytes.
    pub fn streaming(mut self, stream: Streaming) -> Self {
        self.stream = stream;
        self
    }

    /// The body for `request`, byte for byte what serde writes for
    /// [`to_chat_request`] (with the cache key). A message that sits at the same place in the
    /// previous request as the same stored `Arc` is copied from the previous body.
    pub fn encode(&self, request: &ModelRequest) -> Result<Bytes, EncodeError> {
        let mut previous = self.previous.lock().unwrap_or_else(PoisonError::into_inner);
        let previous = &mut *previous;
        if previous.body.is_empty()
            || previous.tools != request.tools
            || previous.max_tokens != request.max_tokens
        {
            previous.tail = self.tail(request)?;
            previous.tools.clone_from(&request.tools);
            previous.max_tokens = request.max_tokens;
        }
        // The previous body's size is a close guess for this one; a quarter more leaves room
        // for the rounds to come, so a reused buffer rarely grows.
        let guess = previous.body.len() + previous.tail.len() + 4096;
        let mut body = match std::mem::take(&mut previous.older).try_into_mut() {
            Ok(buffer) => Vec::from(buffer),
            Err(_) => Vec::new(),
        };
        body.clear();
        body.reserve(guess + guess / 4);
        body.extend_from_slice(HEAD);
        let messages = &request.messages;
        let same = |i: usize| {
            previous
                .messages
                .get(i)
                .is_some_and(|old| Arc::ptr_eq(old, &messages[i]))
        };
        let mut ends = Vec::with_capacity(messages.len());
        let mut i = 0;
        while i < messages.len() {
            if i > 0 {
                body.push(b',');
            }
            // A run of messages that were at these places last time: their bytes (commas
            // between them included) are one slice of the previous body, copied at once.
            let run = (i..messages.len())
                .find(|&j| !same(j))
                .unwrap_or(messages.len());
            if run > i {
                let from = if i == 0 {
                    HEAD.len()
                } else {
                    previous.ends[i - 1] + 1
                };
                let to = previous.ends[run - 1];
                let at = body.len();
                body.extend_from_slice(&previous.body[from..to]);
                ends.extend(previous.ends[i..run].iter().map(|&end| end - from + at));
                i = run;
            } else {
                encode_message(&mut body, &messages[i]);
                ends.push(body.len());
                i += 1;
            }
        }
        body.extend_from_slice(&previous.tail);
        let body = Bytes::from(body);
        // Only the places that changed are taken: an unchanged `Arc` is not cloned again.
        previous.messages.truncate(messages.len());
        for (j, message) in messages.iter().enumerate() {
            match previous.messages.get_mut(j) {
                Some(old) if Arc::ptr_eq(old, message) => {}
                Some(old) => *old = message.clone(),
                None => previous.messages.push(message.clone()),
            }
        }
        previous.ends = ends;
        previous.older = std::mem::replace(&mut previous.body, body.clone());
        Ok(body)
    }

    /// `],"model":…}`: the request without its messages, as serde writes it, after the
    /// empty message list.
    fn tail(&self, request: &ModelRequest) -> Result<Vec<u8>, EncodeError> {
        let empty = ModelRequest {
            messages: Vec::new(),
            tools: request.tools.clone(),
            max_tokens: request.max_tokens,
        };
        let mut envelope = to_chat_request(&self.model, self.sampling, &empty);
        envelope.prompt_cache_key.clone_from(&self.cache_key);
        if self.stream == Streaming::On {
            envelope.stream = Some(true);
            envelope.stream_options = Some(ChatCompletionStreamOptions {
                include_usage: Some(true),
                ..ChatCompletionStreamOptions::default()
            });
        }
        let bytes = serde_json::to_vec(&envelope)?;
        // `messages` is the first field of async-openai's request type; an update that moved
        // it fails here (and every body test) instead of sending a broken body.
        bytes
            .strip_prefix(HEAD)
            .map(<[u8]>::to_vec)
            .ok_or(EncodeError::Layout)
    }
}
