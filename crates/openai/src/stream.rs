//! Streamed replies (`--stream`): server-sent events read on our own transport, assembled into
//! the very [`ModelReply`] the non-streaming path returns.
//!
//! Three layers, each testable alone: [`SseParser`] cuts the bytes into events (a line may be
//! split across reads; comments are keepalives; `data:` lines are joined), [`Assembler`] folds
//! each chunk's JSON into the reply (text deltas told as they come; tool-call fragments joined
//! by index, checked only once the reply is complete), and [`StreamError`] says why a stream
//! gave no reply, typed so that chapter 11's recovery retries what is worth retrying.

use std::collections::BTreeMap;

use agent_core::{AgentEvent, EventSink, ModelReply, ToolCall, Usage};
use serde::Deserialize;

/// Whether replies are streamed (`--stream` / `--no-stream`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Streaming {
    /// One JSON reply, read whole: the request bytes of chapters 1–19's snapshots.
    #[default]
    Off,
    /// `"stream":true` with `"stream_options":{"include_usage":true}`; the reply read as
    /// server-sent events.
    On,
}

/// How long a streamed reply may send nothing before it counts as stalled (at most the
/// request timeout, which bounds the whole exchange as without streaming).
pub const DEFAULT_STREAM_IDLE: std::time::Duration = std::time::Duration::from_secs(60);

/// Why a stream produced no reply (besides an HTTP failure, which keeps its own type).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    /// The body ended before `data: [DONE]`: the connection was cut mid-way. Retryable.
    #[error("the streamed reply was cut off before its end (no [DONE])")]
    Cut,
    /// An event whose data is not a chat completion chunk.
    #[error("a streamed chunk is not a chat completion chunk ({message})")]
    Chunk {
        /// What the JSON parser said.
        message: String,
    },
    /// The server sent an error object in the middle of the stream.
    #[error("the server reported an error mid-stream: {message}")]
    Server {
        /// The error, as JSON text.
        message: String,
    },
    /// The stream ended without any choice.
    #[error("the reply has no choices")]
    NoChoices,
    /// A tool call whose fragments never carried its id or name.
    #[error("streamed tool call {index} has no {missing}")]
    IncompleteCall {
        /// The call's index in the stream.
        index: u32,
        /// `id` or `name`.
        missing: &'static str,
    },
}

/// Cuts a byte stream into server-sent events (the WHATWG event-stream format): lines end in
/// `\n`, `\r\n` or `\r`, an empty line ends an event, `data:` lines are joined with `\n`,
/// lines starting with `:` are comments (keepalives), other fields (`event`, `id`, `retry`)
/// are ignored. Bytes held between reads are at most one unfinished line and one unfinished
/// event, both within the reply limit the caller counts.
#[derive(Debug, Default)]
pub struct SseParser {
    /// The unfinished line carried over from the last read.
    line: Vec<u8>,
    /// The last read ended in `\r`: a `\n` starting the next one belongs to that line end.
    after_cr: bool,
    /// The data lines of the event being read.
    data: Vec<u8>,
    /// Whether the event being read had a `data` field (an empty one counts).
    has_data: bool,
}

impl SseParser {
    /// Feeds one read; `on_event` gets each complete event's data, in order, and may stop
    /// the parse (`Some`) — the value is handed back and the rest of the read is left alone.
    pub fn feed<T>(
        &mut self,
        mut bytes: &[u8],
        mut on_event: impl FnMut(&[u8]) -> Option<T>,
    ) -> Option<T> {
        if self.after_cr && bytes.first() == Some(&b'\n') {
            bytes = &bytes[1..];
        }
        self.after_cr = false;
        while let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            let line_end = bytes[end];
            let stop = if self.line.is_empty() {
                self.line_done(&bytes[..end], &mut on_event)
            } else {
                self.line.extend_from_slice(&bytes[..end]);
                let line = std::mem::take(&mut self.line);
                let stop = self.line_done(&line, &mut on_event);
                self.line = line;
                self.line.clear();
                stop
            };
            if stop.is_some() {
                return stop;
            }
            let mut next = end + 1;
            if line_end == b'\r' {
                match bytes.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            bytes = &bytes[next..];
        }
        self.line.extend_from_slice(bytes);
        None
    }

    fn line_done<T>(
        &mut self,
        line: &[u8],
        on_event: &mut impl FnMut(&[u8]) -> Option<T>,
    ) -> Option<T> {
        if line.is_empty() {
            if !std::mem::take(&mut self.has_data) {
                return None;
            }
            let stop = on_event(&self.data);
            self.data.clear();
            return stop;
        }
        if line[0] == b':' {
            return None;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        if field == b"data" {
            if self.has_data {
                self.data.push(b'\n');
            }
            self.data.extend_from_slice(value);
            self.has_data = true;
        }
        None
    }
}

/// The data of the event that ends a stream.
pub const DONE: &[u8] = b"[DONE]";

#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<ChoiceDelta>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct ChoiceDelta {
    #[serde(default)]
    index: u32,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: u32,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Debug, Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WireUsage {
    prompt_tokens: u32,
    completion_tokens: u32,
    total_tokens: u32,
    #[serde(default)]
    prompt_tokens_details: Option<UsageDetails>,
}

#[derive(Debug, Deserialize)]
struct UsageDetails {
    #[serde(default)]
    cached_tokens: Option<u32>,
}

/// A tool call while its fragments arrive.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Folds the chunks of one stream into one [`ModelReply`].
#[derive(Debug, Default)]
pub struct Assembler {
    saw_choice: bool,
    content: String,
    /// By the index the server gave each call; the reply lists them in that order.
    calls: BTreeMap<u32, PartialCall>,
    usage: Option<Usage>,
    finish_reason: Option<String>,
}

impl Assembler {
    /// Folds in one event's data (a chunk's JSON); its text goes to `deltas` at once.
    pub fn apply(&mut self, data: &[u8], deltas: &dyn EventSink) -> Result<(), StreamError> {
        let chunk: Chunk = serde_json::from_slice(data).map_err(|err| StreamError::Chunk {
            message: err.to_string(),
        })?;
        if let Some(error) = chunk.error {
            return Err(StreamError::Server {
                message: error.to_string(),
            });
        }
        if let Some(u) = chunk.usage {
            self.usage = Some(Usage {
                prompt_tokens: u.prompt_tokens,
                completion_tokens: u.completion_tokens,
                total_tokens: u.total_tokens,
                cached_prompt_tokens: u.prompt_tokens_details.and_then(|d| d.cached_tokens),
            });
        }
        // The first choice is the reply, as on the non-streaming path (`n` is never set).
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            self.saw_choice = true;
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
            }
            let Some(delta) = choice.delta else { continue };
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                self.content.push_str(&text);
                deltas.emit(&AgentEvent::TextDelta { text });
            }
            for fragment in delta.tool_calls.unwrap_or_default() {
                let call = self.calls.entry(fragment.index).or_default();
                if let Some(id) = fragment.id.filter(|id| !id.is_empty()) {
                    call.id = id;
                }
                if let Some(function) = fragment.function {
                    if let Some(name) = function.name.filter(|n| !n.is_empty()) {
                        call.name = name;
                    }
                    if let Some(arguments) = function.arguments {
                        call.arguments.push_str(&arguments);
                    }
                }
            }
        }
        Ok(())
    }

    /// The reply, once `[DONE]` came: each tool call checked now that it is whole (its
    /// arguments are left to the loop's schema check, as on the non-streaming path).
    pub fn finish(self) -> Result<ModelReply, StreamError> {
        if !self.saw_choice {
            return Err(StreamError::NoChoices);
        }
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (index, call) in self.calls {
            if call.id.is_empty() {
                return Err(StreamError::IncompleteCall {
                    index,
                    missing: "id",
                });
            }
            if call.name.is_empty() {
                return Err(StreamError::IncompleteCall {
                    index,
                    missing: "name",
                });
            }
            tool_calls.push(ToolCall {
                id: call.id,
                name: call.name,
                arguments: call.arguments,
            });
        }
        Ok(ModelReply {
            content: (!self.content.is_empty()).then_some(self.content),
            tool_calls,
            usage: self.usage,
            finish_reason: self.finish_reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(reads: &[&[u8]]) -> Vec<String> {
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        for read in reads {
            let stop: Option<()> = parser.feed(read, |data| {
                out.push(String::from_utf8_lossy(data).into_owned());
                None
            });
            assert_eq!(stop, None);
        }
        out
    }

    #[test]
    fn events_are_the_same_however_the_bytes_are_split() {
        let stream: &[u8] =
            b": keepalive\r\n\r\ndata: {\"a\":1}\r\n\r\nevent: x\nid: 7\ndata:one\ndata: two\n\n\
                              data: [DONE]\r\r";
        let expected = ["{\"a\":1}", "one\ntwo", "[DONE]"];
        assert_eq!(events(&[stream]), expected);
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(events(&bytes), expected);
        for cut in 0..stream.len() {
            assert_eq!(
                events(&[&stream[..cut], &stream[cut..]]),
                expected,
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn a_line_without_its_empty_line_is_no_event_yet() {
        assert_eq!(events(&[b"data: partial\n"]), Vec::<String>::new());
    }

    #[test]
    fn the_parse_stops_where_the_caller_says() {
        let mut parser = SseParser::default();
        let mut seen = Vec::new();
        let stop = parser.feed(b"data: 1\n\ndata: [DONE]\n\ndata: 3\n\n", |data| {
            seen.push(data.to_vec());
            (data == DONE).then_some("done")
        });
        assert_eq!(
            (stop, seen),
            (Some("done"), vec![b"1".to_vec(), DONE.to_vec()])
        );
    }

    #[test]
    fn a_call_without_a_name_is_refused_once_complete() {
        let mut assembler = Assembler::default();
        assembler
            .apply(
                br#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"arguments":"{}"}}]}}]}"#,
                &agent_core::NoEvents,
            )
            .unwrap();
        assert_eq!(
            assembler.finish(),
            Err(StreamError::IncompleteCall {
                index: 0,
                missing: "name"
            })
        );
    }
}
