//! Human-readable views of what the model receives: `agent-tutorial prompt` and the request
//! snapshots in the acceptance tests use the same functions.

use std::fmt::Write as _;

use agent_core::{Message, ModelRequest};

/// One short line per message: `00 system  You are …`, `02 assistant  tool_call read_file`.
/// Long texts are cut to their first line; this is for diffs in review, not for reading a
/// prompt in full (use [`full`] for that).
pub fn labels(request: &ModelRequest) -> Vec<String> {
    request
        .messages
        .iter()
        .enumerate()
        .map(|(i, message)| {
            let body = match message.as_ref() {
                Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => tool_calls
                    .iter()
                    .map(|c| format!("tool_call {} {}", c.name, c.arguments))
                    .collect::<Vec<_>>()
                    .join(" | "),
                Message::Tool {
                    tool_call_id,
                    content,
                } => {
                    format!("[{tool_call_id}] {}", first_line(content))
                }
                other => first_line(other.text()),
            };
            format!("{i:02} {:<9} {body}", message.role())
        })
        .collect()
}

fn first_line(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    let cut: String = first.chars().take(100).collect();
    if lines.next().is_some() || cut.len() < first.len() {
        format!("{cut} …")
    } else {
        cut
    }
}

/// The whole request: every message in full, then every tool with its schema.
pub fn full(request: &ModelRequest) -> String {
    let mut out = String::new();
    for (i, message) in request.messages.iter().enumerate() {
        let _ = writeln!(out, "── [{i}] {} ──", message.role());
        if let Message::Assistant { tool_calls, .. } = message.as_ref() {
            for call in tool_calls {
                let _ = writeln!(
                    out,
                    "tool_call {} {} {}",
                    call.id, call.name, call.arguments
                );
            }
        }
        if !message.text().is_empty() {
            let _ = writeln!(out, "{}", message.text());
        }
    }
    let _ = writeln!(out, "── tools ({}) ──", request.tools.len());
    for tool in &request.tools {
        let effect = serde_json::to_value(tool.effect)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let _ = writeln!(out, "- {} [{effect}]: {}", tool.name, tool.description);
        let _ = writeln!(out, "  {}", tool.parameters);
    }
    out
}

/// A unified diff of two renderings (`prompt --diff`); empty when they are equal.
pub fn unified_diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(old_name, new_name)
        .to_string()
}
