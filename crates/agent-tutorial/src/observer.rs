//! What the CLI shows on stderr while a turn runs: each tool call and a one-line result.

use std::io::Write;

use agent_core::{ModelReply, RunObserver, ToolCall, ToolFailure};
use agent_policy::escape_controls;
use agent_tools::todo::TodoWrite;

/// Prints tool activity to stderr, so stdout carries only the final answer; with `--record`,
/// also appends every request as one JSON line.
#[derive(Debug, Default)]
pub struct CliObserver {
    record: Option<std::sync::Mutex<std::fs::File>>,
    /// The plan last shown, so an unchanged `todo_write` prints nothing.
    plan: std::sync::Mutex<String>,
}

impl CliObserver {
    pub fn new(record: Option<&std::path::Path>) -> std::io::Result<Self> {
        let record = match record {
            Some(path) => Some(std::sync::Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?,
            )),
            None => None,
        };
        Ok(Self {
            record,
            plan: std::sync::Mutex::default(),
        })
    }
}

/// A short log line. Model-chosen text is escaped (after the cut, so no escape is split):
/// a raw escape sequence in a tool's arguments must not be able to rewrite the terminal
/// above the approval question.
fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > max {
        let cut: String = flat.chars().take(max).collect();
        format!("{}…", escape_controls(&cut))
    } else {
        escape_controls(&flat)
    }
}

/// The stderr notice for a final answer the server cut at its token limit.
pub const LENGTH_NOTICE: &str = "note: the model's answer was cut off at its token limit (finish_reason=length); raise --max-tokens";

/// The notice to print for `reply`, if any: only a final answer (no tool calls) that the
/// server reports as cut by the token limit. A cut tool-call reply shows up as a tool error.
pub fn reply_notice(reply: &ModelReply) -> Option<&'static str> {
    let cut = reply.finish_reason.as_deref() == Some("length");
    (cut && reply.tool_calls.is_empty()).then_some(LENGTH_NOTICE)
}

/// `ok: 3 lines, 42 bytes` or the first line of the error.
pub fn summarize(result: &Result<String, ToolFailure>) -> String {
    match result {
        Ok(text) => format!("ok: {} lines, {} bytes", text.lines().count(), text.len()),
        Err(failure) => one_line(&failure.to_string(), 160),
    }
}

impl RunObserver for CliObserver {
    fn on_request(&self, _index: usize, request: &agent_core::ModelRequest) {
        let Some(file) = &self.record else {
            return;
        };
        let mut file = file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Ok(line) = serde_json::to_string(request) {
            let _ = writeln!(file, "{line}");
        }
    }

    fn on_reply(&self, reply: &ModelReply) {
        if let Some(notice) = reply_notice(reply) {
            let _ = writeln!(std::io::stderr(), "{notice}");
        }
    }

    fn on_tool_call(&self, call: &ToolCall) {
        let _ = writeln!(
            std::io::stderr(),
            "[tool] {} {}",
            call.name,
            one_line(&call.arguments, 160)
        );
    }

    fn on_tool_result(&self, call: &ToolCall, result: &Result<String, ToolFailure>) {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "[result] {}", summarize(result));
        if let (Ok(text), TodoWrite::NAME) = (result, call.name.as_str()) {
            let plan = render_plan(text);
            let mut last = self
                .plan
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if *last != plan {
                let _ = write!(err, "{plan}");
                *last = plan;
            }
        }
    }
}

/// The plan as `todo_write` stored it (its result is the list as JSON), one line per step.
pub fn render_plan(json: &str) -> String {
    let Ok(items) = serde_json::from_str::<Vec<agent_tools::todo::TodoItem>>(json) else {
        return String::new();
    };
    let mut out = String::from("[plan]\n");
    for item in items {
        let mark = match item.status {
            agent_tools::todo::TodoStatus::Completed => "[x]",
            agent_tools::todo::TodoStatus::InProgress => "[>]",
            agent_tools::todo::TodoStatus::Pending => "[ ]",
        };
        out.push_str(&format!("  {mark} {}\n", item.content));
    }
    out
}
