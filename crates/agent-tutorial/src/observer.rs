//! What the CLI shows on stderr while a turn runs: each tool call and a one-line result.

use std::io::Write;

use agent_core::{RunObserver, ToolCall, ToolFailure};

/// Prints tool activity to stderr, so stdout carries only the final answer.
#[derive(Debug, Default)]
pub struct StderrObserver;

fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > max {
        let cut: String = flat.chars().take(max).collect();
        format!("{cut}…")
    } else {
        flat
    }
}

/// `ok: 3 lines, 42 bytes` or the first line of the error.
pub fn summarize(result: &Result<String, ToolFailure>) -> String {
    match result {
        Ok(text) => format!("ok: {} lines, {} bytes", text.lines().count(), text.len()),
        Err(failure) => one_line(&failure.to_string(), 160),
    }
}

impl RunObserver for StderrObserver {
    fn on_tool_call(&self, call: &ToolCall) {
        let _ = writeln!(
            std::io::stderr(),
            "[tool] {} {}",
            call.name,
            one_line(&call.arguments, 160)
        );
    }

    fn on_tool_result(&self, _call: &ToolCall, result: &Result<String, ToolFailure>) {
        let _ = writeln!(std::io::stderr(), "[result] {}", summarize(result));
    }
}
