//! `--record FILE`: every request the loop sends, one JSON line each, in one of two forms.
//!
//! - [`RecordForm::Full`] (the default): each line is the whole request. Simple to read with
//!   `grep` or `jq`, but a session's file grows with the square of its length: every line
//!   repeats the history before it (1.1 MB at 100 small rounds, 94 MB at 1,000).
//! - [`RecordForm::Delta`]: each line is the request written against the previous line's,
//!   `{"delta":[…],"tools":[…],"max_tokens":N}`: messages that sit at the same places as in the
//!   previous request are a range, `{"same":[from,to]}`, the others are written out; `tools`
//!   is left out when it did not change (`max_tokens`, as in the full form, when unset). The
//!   file grows with what is new. [`expand`] (and
//!   `agent-tutorial record expand FILE`) turns it back into the full form, byte for byte.

use std::io::{BufRead, Write};
use std::sync::Arc;

use agent_core::{Message, ModelRequest, ToolSpec};
use serde::{Deserialize, Serialize};

/// How `--record` writes each request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RecordForm {
    /// The whole request on every line.
    #[default]
    Full,
    /// What changed since the previous line ([`expand`] restores the full form).
    Delta,
}

/// One line of the delta form.
#[derive(Debug, Serialize, Deserialize)]
struct DeltaLine {
    /// The messages (the full form's key is `messages`: the two never mix up).
    delta: Vec<Item>,
    /// Absent: the previous request's tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tools: Option<Vec<ToolSpec>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
}

/// A run of the previous request's messages, or one written out.
#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum Item {
    /// The previous request's messages `from..to`, at the same places in this one.
    Same { same: [usize; 2] },
    /// A message written out.
    Message(Arc<Message>),
}

/// Why a recorded file cannot be turned back into requests.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The file could not be read.
    #[error("cannot read the recording: {0}")]
    Read(#[from] std::io::Error),
    /// A line is not a request in the full or the delta form.
    #[error("line {line}: not a recorded request: {source}")]
    Line {
        /// 1-based.
        line: usize,
        /// What the parser said.
        source: serde_json::Error,
    },
    /// A range points outside the previous request's messages.
    #[error(
        "line {line}: the range {from}..{to} is not within the previous request's {len} messages"
    )]
    Range {
        /// 1-based.
        line: usize,
        /// The range as written.
        from: usize,
        /// The range as written.
        to: usize,
        /// How many messages the previous request had.
        len: usize,
    },
    /// A request has more messages than the limit ([`LIMITS`]).
    #[error("line {line}: a request of more than {limit} messages")]
    TooManyMessages {
        /// 1-based.
        line: usize,
        /// The limit.
        limit: usize,
    },
    /// A request could not be handed on (`record expand` writing to stdout).
    #[error("cannot write the request: {0}")]
    Write(std::io::Error),
    /// A line is longer than the limit ([`MAX_LINE_BYTES`]).
    #[error("line {line} is longer than {limit} bytes")]
    TooLong {
        /// 1-based.
        line: usize,
        /// The limit.
        limit: usize,
    },
}

/// The longest line [`expand`] reads: a request is at most a few megabytes; a longer line is
/// not one of ours.
pub const MAX_LINE_BYTES: usize = 256 * 1024 * 1024;

/// Writes requests in one form, remembering the previous one for the delta form.
#[derive(Debug)]
pub struct RequestLog<W> {
    out: W,
    form: RecordForm,
    previous: ModelRequest,
}

impl<W: Write> RequestLog<W> {
    /// A log writing to `out` (a file opened for appending, for `--record`).
    pub fn new(out: W, form: RecordForm) -> Self {
        Self {
            out,
            form,
            previous: ModelRequest::default(),
        }
    }

    /// Appends `request` as one line.
    pub fn write(&mut self, request: &ModelRequest) -> std::io::Result<()> {
        let line = match self.form {
            RecordForm::Full => serde_json::to_vec(request)?,
            RecordForm::Delta => {
                let line = serde_json::to_vec(&delta(&self.previous, request))?;
                self.previous.clone_from(request);
                line
            }
        };
        self.out.write_all(&line)?;
        self.out.write_all(b"\n")
    }
}

/// `request` against `previous`: runs of messages at the same places as ranges.
fn delta(previous: &ModelRequest, request: &ModelRequest) -> DeltaLine {
    let same = |i: usize| {
        previous.messages.get(i).is_some_and(|old| {
            Arc::ptr_eq(old, &request.messages[i]) || **old == *request.messages[i]
        })
    };
    let mut messages = Vec::new();
    let mut i = 0;
    while i < request.messages.len() {
        let run = (i..request.messages.len())
            .find(|&j| !same(j))
            .unwrap_or(request.messages.len());
        if run > i {
            messages.push(Item::Same { same: [i, run] });
            i = run;
        } else {
            messages.push(Item::Message(request.messages[i].clone()));
            i += 1;
        }
    }
    DeltaLine {
        delta: messages,
        tools: (previous.tools != request.tools).then(|| request.tools.clone()),
        max_tokens: request.max_tokens,
    }
}

/// Every request of a recording, in order, whichever form each line is in: a full line
/// (`messages`) stands alone, a delta line (`delta`) is read against the request before it
/// (an empty one before the first). Holds every request: for a file of one's own (tests);
/// [`expand_each`] holds one at a time.
pub fn expand(input: impl BufRead) -> Result<Vec<ModelRequest>, RecordError> {
    let mut requests = Vec::new();
    expand_each(input, LIMITS, |request| {
        requests.push(request.clone());
        Ok(())
    })?;
    Ok(requests)
}

/// What [`expand_each`] reads at most.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Bytes in one line.
    pub line_bytes: usize,
    /// Messages in one request: a delta line's ranges could otherwise double a request's
    /// length with every line.
    pub messages: usize,
}

/// [`MAX_LINE_BYTES`] and a million messages (a 3,000-round session has 6,001).
pub const LIMITS: Limits = Limits {
    line_bytes: MAX_LINE_BYTES,
    messages: 1_000_000,
};

/// Hands every request of a recording to `each`, in order, holding only the one before.
pub fn expand_each(
    input: impl BufRead,
    limits: Limits,
    mut each: impl FnMut(&ModelRequest) -> std::io::Result<()>,
) -> Result<(), RecordError> {
    let mut previous = ModelRequest::default();
    let mut input = input.take(u64::MAX);
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        number += 1;
        // One byte more than the limit tells a line at the limit from a longer one.
        input.set_limit(limits.line_bytes as u64 + 1);
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        if line.len() > limits.line_bytes {
            return Err(RecordError::TooLong {
                line: number,
                limit: limits.line_bytes,
            });
        }
        let parse = |source| RecordError::Line {
            line: number,
            source,
        };
        let value: serde_json::Value = serde_json::from_slice(&line).map_err(parse)?;
        let request = if value.get("delta").is_some() {
            let delta: DeltaLine = serde_json::from_value(value).map_err(parse)?;
            apply(&previous, delta, number, limits.messages)?
        } else {
            serde_json::from_value(value).map_err(parse)?
        };
        each(&request).map_err(RecordError::Write)?;
        previous = request;
    }
}

fn apply(
    previous: &ModelRequest,
    delta: DeltaLine,
    line: usize,
    max_messages: usize,
) -> Result<ModelRequest, RecordError> {
    let mut messages: Vec<Arc<Message>> = Vec::new();
    let room = |have: usize, more: usize| {
        if have + more > max_messages {
            Err(RecordError::TooManyMessages {
                line,
                limit: max_messages,
            })
        } else {
            Ok(())
        }
    };
    for item in delta.delta {
        match item {
            Item::Message(message) => {
                room(messages.len(), 1)?;
                messages.push(message);
            }
            Item::Same { same: [from, to] } => {
                let run = previous.messages.get(from..to).ok_or(RecordError::Range {
                    line,
                    from,
                    to,
                    len: previous.messages.len(),
                })?;
                room(messages.len(), run.len())?;
                messages.extend_from_slice(run);
            }
        }
    }
    Ok(ModelRequest {
        messages,
        tools: delta.tools.unwrap_or_else(|| previous.tools.clone()),
        max_tokens: delta.max_tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::{ToolCall, ToolEffect};
    use serde_json::json;

    fn tools(n: usize) -> Vec<ToolSpec> {
        ["read_file", "bash", "glob"][..n]
            .iter()
            .map(|name| {
                ToolSpec::new(
                    *name,
                    "A tool.",
                    ToolEffect::Read,
                    json!({"type": "object", "properties": {"b": {}, "a": {"x": 1.5}}}),
                )
            })
            .collect()
    }

    /// A session whose requests grow, change their system prompt, limit and tools, and lose
    /// messages to a compaction.
    fn session() -> Vec<ModelRequest> {
        let mut history: Vec<Arc<Message>> = vec![Message::user("read it \u{1b}[31m").into()];
        let request = |system: &str, history: &[Arc<Message>], tools, max_tokens| {
            let mut messages = vec![Arc::new(Message::system(system))];
            messages.extend(history.iter().cloned());
            ModelRequest {
                messages,
                tools,
                max_tokens,
            }
        };
        let mut requests = vec![request("A", &history, tools(2), None)];
        for i in 0..4 {
            let id = format!("c{i}");
            history.push(
                Message::Assistant {
                    content: (i == 2).then(String::new),
                    tool_calls: vec![ToolCall {
                        id: id.clone(),
                        name: "bash".into(),
                        arguments: "{\"command\":\"ls\"}".into(),
                    }],
                }
                .into(),
            );
            history.push(Message::tool_result(id, format!("result {i}\n")).into());
            requests.push(request("A", &history, tools(2), None));
        }
        requests.push(request("B", &history, tools(2), Some(4096)));
        requests.push(request("B", &history, tools(3), None));
        requests.push(request("B", &history, Vec::new(), None));
        let compacted = [Message::user("<summary>").into(), history[8].clone()];
        requests.push(request("B", &compacted, tools(1), None));
        requests.push(request("B", &history[3..], tools(1), None));
        requests
    }

    fn written(form: RecordForm, requests: &[ModelRequest]) -> Vec<u8> {
        let mut log = RequestLog::new(Vec::new(), form);
        for request in requests {
            log.write(request).unwrap();
        }
        log.out
    }

    fn full_lines(requests: &[ModelRequest]) -> String {
        requests
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n")
            .collect()
    }

    #[test]
    fn the_delta_form_expands_to_the_full_form_byte_for_byte() {
        let requests = session();
        let full = written(RecordForm::Full, &requests);
        assert_eq!(
            String::from_utf8(full.clone()).unwrap(),
            full_lines(&requests)
        );
        let delta = written(RecordForm::Delta, &requests);
        assert_eq!(
            full_lines(&expand(delta.as_slice()).unwrap()),
            full_lines(&requests)
        );
        // And the full form expands to itself.
        assert_eq!(
            full_lines(&expand(full.as_slice()).unwrap()),
            full_lines(&requests)
        );
    }

    #[test]
    fn a_delta_line_writes_only_what_changed() {
        let requests = session();
        let delta = String::from_utf8(written(RecordForm::Delta, &requests[..3])).unwrap();
        let lines: Vec<&str> = delta.lines().collect();
        assert_eq!(
            lines[2],
            r#"{"delta":[{"same":[0,4]},{"role":"assistant","tool_calls":[{"id":"c1","name":"bash","arguments":"{\"command\":\"ls\"}"}]},{"role":"tool","tool_call_id":"c1","content":"result 1\n"}]}"#
        );
    }

    #[test]
    fn a_range_outside_the_previous_request_is_refused() {
        let text = "{\"delta\":[{\"role\":\"user\",\"content\":\"hi\"}]}\n{\"delta\":[{\"same\":[0,9]}]}\n";
        assert_eq!(
            expand(text.as_bytes()).unwrap_err().to_string(),
            "line 2: the range 0..9 is not within the previous request's 1 messages"
        );
        assert_eq!(
            expand("{\"delta\":[{\"same\":[3,1]}]}\n".as_bytes())
                .unwrap_err()
                .to_string(),
            "line 1: the range 3..1 is not within the previous request's 0 messages"
        );
    }

    fn count(text: &str, limits: Limits) -> Result<usize, RecordError> {
        let mut n = 0;
        expand_each(text.as_bytes(), limits, |_| {
            n += 1;
            Ok(())
        })?;
        Ok(n)
    }

    #[test]
    fn a_line_over_the_limit_is_refused_before_it_is_parsed() {
        let line = "{\"messages\":[]}\n";
        let limits = |line_bytes| Limits {
            line_bytes,
            messages: 10,
        };
        assert_eq!(count(line, limits(line.len())).unwrap(), 1);
        assert_eq!(
            count(line, limits(line.len() - 1)).unwrap_err().to_string(),
            format!("line 1 is longer than {} bytes", line.len() - 1)
        );
    }

    #[test]
    fn ranges_cannot_grow_a_request_past_the_message_limit() {
        // Each line repeats the request before it twice: 1, 2, 4, 8 messages.
        let mut text = String::from("{\"delta\":[{\"role\":\"user\",\"content\":\"hi\"}]}\n");
        for n in [1, 2, 4] {
            text.push_str(&format!(
                "{{\"delta\":[{{\"same\":[0,{n}]}},{{\"same\":[0,{n}]}}]}}\n"
            ));
        }
        let limits = |messages| Limits {
            line_bytes: 1000,
            messages,
        };
        assert_eq!(count(&text, limits(8)).unwrap(), 4);
        assert_eq!(
            count(&text, limits(7)).unwrap_err().to_string(),
            "line 4: a request of more than 7 messages"
        );
    }
}
