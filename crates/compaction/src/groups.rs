//! Groups: the units compaction keeps or drops whole, so a tool call is never separated from
//! its result. A group is one user or system message, or one assistant message together with
//! the tool results that follow it.

use std::borrow::Borrow;

use agent_core::Message;

/// Splits `messages` into groups, in order. Works on owned or shared (`Arc<Message>`)
/// messages alike, so the compactor can group the history it is handed without copying it.
pub fn groups<M: Borrow<Message>>(messages: Vec<M>) -> Vec<Vec<M>> {
    let mut out: Vec<Vec<M>> = Vec::new();
    for message in messages {
        match (message.borrow(), out.last_mut()) {
            (Message::Tool { .. }, Some(last)) => last.push(message),
            _ => out.push(vec![message]),
        }
    }
    out
}

/// The bytes a message costs in a request (text plus tool-call arguments), the measure the
/// byte budget is expressed in.
pub fn message_bytes(message: &Message) -> usize {
    let calls = match message {
        Message::Assistant { tool_calls, .. } => tool_calls
            .iter()
            .map(|c| c.id.len() + c.name.len() + c.arguments.len())
            .sum(),
        _ => 0,
    };
    message.text().len() + calls
}

/// The bytes `messages` cost in a request ([`message_bytes`] summed).
pub fn total_bytes<M: Borrow<Message>>(messages: &[M]) -> usize {
    messages.iter().map(|m| message_bytes(m.borrow())).sum()
}

/// Whether a group is a tool round (an assistant message with tool calls).
pub fn is_tool_round<M: Borrow<Message>>(group: &[M]) -> bool {
    matches!(group.first().map(|m| m.borrow()), Some(Message::Assistant { tool_calls, .. }) if !tool_calls.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::ToolCall;

    #[test]
    fn tool_results_stay_with_their_call() {
        let call = ToolCall {
            id: "a".into(),
            name: "x".into(),
            arguments: "{}".into(),
        };
        let messages = vec![
            Message::user("u"),
            Message::Assistant {
                content: None,
                tool_calls: vec![call],
            },
            Message::tool_result("a", "r"),
            Message::assistant_text("done"),
        ];
        let sizes: Vec<usize> = groups(messages).iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![1, 2, 1]);
    }
}
