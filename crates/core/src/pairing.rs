//! The invariant every request must hold: each tool call id gets exactly one result, and each
//! result answers a call of the assistant message right before it.
//!
//! Providers reject requests that break this, and a compaction or hook bug breaks it silently.
//! The runner checks every request before sending it, so such a bug fails loudly here instead.

use std::collections::BTreeSet;

use crate::message::Message;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairingError {
    #[error("message {index}: tool result `{id}` answers no pending tool call")]
    OrphanResult { index: usize, id: String },
    #[error("message {index}: tool call `{id}` was never answered")]
    Unanswered { index: usize, id: String },
    #[error("message {index}: tool call id `{id}` is used twice")]
    DuplicateCall { index: usize, id: String },
}

/// Checks the pairing invariant over a request's messages.
pub fn validate_pairing(messages: &[Message]) -> Result<(), PairingError> {
    let mut seen_calls = BTreeSet::new();
    // Calls of the latest assistant message still waiting for results, with its index.
    let mut pending: Vec<String> = Vec::new();
    let mut pending_from = 0;
    for (index, message) in messages.iter().enumerate() {
        match message {
            Message::Tool { tool_call_id, .. } => {
                let Some(pos) = pending.iter().position(|id| id == tool_call_id) else {
                    return Err(PairingError::OrphanResult {
                        index,
                        id: tool_call_id.clone(),
                    });
                };
                pending.remove(pos);
            }
            other => {
                if let Some(id) = pending.first() {
                    return Err(PairingError::Unanswered {
                        index: pending_from,
                        id: id.clone(),
                    });
                }
                if let Message::Assistant { tool_calls, .. } = other {
                    for call in tool_calls {
                        if !seen_calls.insert(call.id.clone()) {
                            return Err(PairingError::DuplicateCall {
                                index,
                                id: call.id.clone(),
                            });
                        }
                        pending.push(call.id.clone());
                    }
                    pending_from = index;
                }
            }
        }
    }
    match pending.first() {
        Some(id) => Err(PairingError::Unanswered {
            index: pending_from,
            id: id.clone(),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "bash".into(),
            arguments: "{}".into(),
        }
    }

    fn assistant(ids: &[&str]) -> Message {
        Message::Assistant {
            content: None,
            tool_calls: ids.iter().map(|id| call(id)).collect(),
        }
    }

    #[test]
    fn accepts_answered_calls_in_any_order() {
        let messages = vec![
            Message::user("hi"),
            assistant(&["a", "b"]),
            Message::tool_result("b", "2"),
            Message::tool_result("a", "1"),
            Message::assistant_text("done"),
        ];
        assert_eq!(validate_pairing(&messages), Ok(()));
    }

    #[test]
    fn reports_each_kind_of_break() {
        let orphan = vec![Message::user("hi"), Message::tool_result("x", "?")];
        assert_eq!(
            validate_pairing(&orphan),
            Err(PairingError::OrphanResult {
                index: 1,
                id: "x".into()
            })
        );
        let unanswered = vec![
            Message::user("hi"),
            assistant(&["a", "b"]),
            Message::tool_result("a", "1"),
            Message::user("next"),
        ];
        assert_eq!(
            validate_pairing(&unanswered),
            Err(PairingError::Unanswered {
                index: 1,
                id: "b".into()
            })
        );
        let trailing = vec![Message::user("hi"), assistant(&["a"])];
        assert_eq!(
            validate_pairing(&trailing),
            Err(PairingError::Unanswered {
                index: 1,
                id: "a".into()
            })
        );
        let twice = vec![
            assistant(&["a"]),
            Message::tool_result("a", "1"),
            Message::tool_result("a", "1"),
        ];
        assert_eq!(
            validate_pairing(&twice),
            Err(PairingError::OrphanResult {
                index: 2,
                id: "a".into()
            })
        );
        let reused = vec![
            assistant(&["a"]),
            Message::tool_result("a", "1"),
            assistant(&["a"]),
            Message::tool_result("a", "1"),
        ];
        assert_eq!(
            validate_pairing(&reused),
            Err(PairingError::DuplicateCall {
                index: 2,
                id: "a".into()
            })
        );
    }
}
