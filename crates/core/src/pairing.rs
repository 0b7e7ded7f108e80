//! The invariant every request must hold: each tool call id gets exactly one result, and each
//! result answers a call of the assistant message right before it.
//!
//! Providers reject requests that break this, and a compaction or hook bug breaks it silently.
//! The runner checks every request before sending it, so such a bug fails loudly here instead.

use std::collections::{BTreeSet, HashSet};

use crate::message::{Message, ToolCall};

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

/// Makes the ids of a new reply's `calls` usable before anything runs: an empty id, an id
/// repeated within the reply, or an id already used in `history` gets a fresh `call_<n>`
/// that collides with nothing. The first use of an id keeps it. Models do send such ids
/// (small local models reuse `call_0`); executing them as they are would run calls whose
/// results cannot be told apart, and the next request would fail [`validate_pairing`].
///
/// Returns `(old, new)` for each renamed call, in call order.
pub fn assign_unique_ids(history: &[Message], calls: &mut [ToolCall]) -> Vec<(String, String)> {
    let mut taken: HashSet<String> = HashSet::new();
    for message in history {
        match message {
            Message::Assistant { tool_calls, .. } => {
                taken.extend(tool_calls.iter().map(|c| c.id.clone()));
            }
            Message::Tool { tool_call_id, .. } => {
                taken.insert(tool_call_id.clone());
            }
            Message::System { .. } | Message::User { .. } => {}
        }
    }
    // A fresh id must not take the id a later call of the same reply legitimately uses.
    let mut reserved: HashSet<String> = taken.clone();
    reserved.extend(calls.iter().map(|c| c.id.clone()));
    let mut next = 1_usize;
    let mut renamed = Vec::new();
    for call in calls.iter_mut() {
        if !call.id.is_empty() && taken.insert(call.id.clone()) {
            continue;
        }
        let fresh = loop {
            let candidate = format!("call_{next}");
            next += 1;
            if reserved.insert(candidate.clone()) {
                break candidate;
            }
        };
        taken.insert(fresh.clone());
        renamed.push((std::mem::replace(&mut call.id, fresh.clone()), fresh));
    }
    renamed
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

    fn ids(calls: &[ToolCall]) -> Vec<&str> {
        calls.iter().map(|c| c.id.as_str()).collect()
    }

    #[test]
    fn bad_ids_get_fresh_ones_that_collide_with_nothing() {
        let history = vec![
            Message::user("hi"),
            assistant(&["call_1", "c1"]),
            Message::tool_result("call_1", "1"),
            Message::tool_result("c1", "1"),
        ];
        let mut calls: Vec<ToolCall> = ["c1", "", "c2", "c2", "", "call_3"]
            .iter()
            .map(|id| call(id))
            .collect();
        let renamed = assign_unique_ids(&history, &mut calls);
        assert_eq!(
            ids(&calls),
            vec!["call_2", "call_4", "c2", "call_5", "call_6", "call_3"]
        );
        assert_eq!(
            renamed,
            vec![
                ("c1".to_string(), "call_2".to_string()),
                (String::new(), "call_4".to_string()),
                ("c2".to_string(), "call_5".to_string()),
                (String::new(), "call_6".to_string()),
            ]
        );
    }

    #[test]
    fn good_ids_are_left_alone() {
        let mut calls = vec![call("a"), call("b")];
        assert_eq!(assign_unique_ids(&[], &mut calls), vec![]);
        assert_eq!(ids(&calls), vec!["a", "b"]);
    }
}
