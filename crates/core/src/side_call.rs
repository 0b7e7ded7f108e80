//! Side calls: the harness asking the model something for itself (which memories matter, what
//! to remember, a summary of old messages), outside the conversation and without tools.
//!
//! One request shape, one "JSON between the first and the last bracket" rule and one
//! transcript renderer, shared by memory (chapter 9) and compaction (chapter 8).

use std::sync::Arc;

use serde::de::DeserializeOwned;

use crate::message::Message;
use crate::model::{ModelClient, ModelError, ModelRequest};

/// Why a side call gave no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum SideCallError {
    /// The model call failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The reply is not JSON of the expected type. The parser's message is part of this
    /// message (it has no cause of its own), so it is not also a `source`.
    #[error("the reply is not valid: {0}")]
    Reply(serde_json::Error),
}

/// The JSON value a reply holds: an array or an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonShape {
    /// `[...]`.
    Array,
    /// `{...}`.
    Object,
}

impl JsonShape {
    fn brackets(self) -> (char, char) {
        match self {
            Self::Array => ('[', ']'),
            Self::Object => ('{', '}'),
        }
    }
}

/// The request of a side call: the trimmed instructions as the system message, the input as
/// the user message, and no tools (a side call must not act).
pub fn request(system: &str, input: String) -> ModelRequest {
    ModelRequest {
        messages: vec![
            Arc::new(Message::system(system.trim())),
            Arc::new(Message::user(input)),
        ],
        ..ModelRequest::default()
    }
}

/// One side call; the reply's text (empty when the reply has none).
pub async fn ask_text(
    model: &dyn ModelClient,
    system: &str,
    input: String,
) -> Result<String, ModelError> {
    let reply = model.complete(&request(system, input)).await?;
    Ok(reply.content.unwrap_or_default())
}

/// One side call whose reply must be JSON of type `T`, found by [`json_part`].
pub async fn ask_json<T: DeserializeOwned>(
    model: &dyn ModelClient,
    system: &str,
    input: String,
    shape: JsonShape,
) -> Result<T, SideCallError> {
    let text = ask_text(model, system, input).await?;
    parse_json(&text, shape)
}

/// Parses the JSON part of a reply.
pub fn parse_json<T: DeserializeOwned>(reply: &str, shape: JsonShape) -> Result<T, SideCallError> {
    serde_json::from_str(json_part(reply, shape)).map_err(SideCallError::Reply)
}

/// The JSON value in a reply: the part from the first opening to the last closing bracket
/// (models like code fences and prose around it), or the trimmed reply when there is no such
/// pair in that order, so the parser names what is wrong.
pub fn json_part(reply: &str, shape: JsonShape) -> &str {
    let (open, close) = shape.brackets();
    match (reply.find(open), reply.rfind(close)) {
        (Some(start), Some(end)) if end > start => &reply[start..=end],
        _ => reply.trim(),
    }
}

/// How a transcript shows messages to a side call. The two layouts differ because their
/// callers always sent different text; they are kept as they were so no request changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TranscriptStyle {
    /// Memory extraction: `assistant: <text>` with each call indented below it as
    /// `  called <name> <arguments>`; `tool result: <text>` cut to 500 characters without a
    /// marker; other messages `<role>: <text>` whole.
    Brief,
    /// Compaction summary: every text and argument list cut to 2,000 characters, marked ` […]`;
    /// `assistant: <text>` only when there is text, each call on its own line as
    /// `assistant called <name> <arguments>`; `tool result [<id>]: <text>`.
    Detailed,
}

/// The first `max` characters of `text`, with `marker` appended when something was cut.
fn cut(text: &str, max: usize, marker: &str) -> String {
    let mut out: String = text.chars().take(max).collect();
    if out.len() < text.len() {
        out.push_str(marker);
    }
    out
}

/// One message as transcript text (several lines for an assistant with tool calls).
pub fn render_message(message: &Message, style: TranscriptStyle) -> String {
    match style {
        TranscriptStyle::Brief => brief(message),
        TranscriptStyle::Detailed => detailed(message),
    }
}

/// The messages one after another, separated by newlines.
pub fn transcript(messages: &[Message], style: TranscriptStyle) -> String {
    messages
        .iter()
        .map(|m| render_message(m, style))
        .collect::<Vec<_>>()
        .join("\n")
}

fn brief(message: &Message) -> String {
    match message {
        Message::Assistant {
            content,
            tool_calls,
        } => {
            let mut line = format!("assistant: {}", content.as_deref().unwrap_or(""));
            for call in tool_calls {
                line.push_str(&format!("\n  called {} {}", call.name, call.arguments));
            }
            line
        }
        Message::Tool { content, .. } => format!("tool result: {}", cut(content, 500, "")),
        other => format!("{}: {}", other.role(), other.text()),
    }
}

fn detailed(message: &Message) -> String {
    const MAX: usize = 2_000;
    const MARK: &str = " […]";
    match message {
        Message::Assistant {
            content,
            tool_calls,
        } => {
            let mut parts: Vec<String> = content
                .iter()
                .map(|c| format!("assistant: {}", cut(c, MAX, MARK)))
                .collect();
            parts.extend(tool_calls.iter().map(|c| {
                format!(
                    "assistant called {} {}",
                    c.name,
                    cut(&c.arguments, MAX, MARK)
                )
            }));
            parts.join("\n")
        }
        Message::Tool {
            tool_call_id,
            content,
        } => format!("tool result [{tool_call_id}]: {}", cut(content, MAX, MARK)),
        other => format!("{}: {}", other.role(), cut(other.text(), MAX, MARK)),
    }
}
