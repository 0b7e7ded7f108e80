//! The compactor's tests, by what they pin; `history` is the conversation most of them shape.

mod cadence;
mod fragments;
mod on_demand;
mod resumed;
mod shaping;
mod summary;

use agent_core::{Message, ToolCall};

/// `first`, then one `read_file` round for each number in `rounds`, its result `result` with
/// the number after it.
pub(crate) fn history(first: &str, rounds: std::ops::Range<usize>, result: &str) -> Vec<Message> {
    let mut messages = vec![Message::user(first)];
    for i in rounds {
        messages.push(Message::Assistant {
            content: None,
            tool_calls: vec![ToolCall {
                id: format!("c{i}"),
                name: "read_file".into(),
                arguments: "{}".into(),
            }],
        });
        messages.push(Message::tool_result(
            format!("c{i}"),
            format!("{result}{i}"),
        ));
    }
    messages
}
