//! The invariant every request must hold: each tool call id gets exactly one result, and each
//! result answers a call of the assistant message right before it.
//!
//! Providers reject requests that break this, and a compaction or hook bug breaks it silently.
//! The runner checks every request before sending it, so such a bug fails loudly here instead.

use std::collections::HashSet;

use crate::message::{Message, ToolCall};

/// Where a conversation breaks the "every call gets exactly one result" invariant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairingError {
    /// A tool result with no open call before it.
    #[error("message {index}: tool result `{id}` answers no pending tool call")]
    OrphanResult {
        /// The result's place in the messages.
        index: usize,
        /// The id it answers.
        id: String,
    },
    /// A call that no result answers before the next assistant or user message.
    #[error("message {index}: tool call `{id}` was never answered")]
    Unanswered {
        /// The calling message's place.
        index: usize,
        /// The call's id.
        id: String,
    },
    /// Two calls with one id.
    #[error("message {index}: tool call id `{id}` is used twice")]
    DuplicateCall {
        /// The second call's message.
        index: usize,
        /// The id.
        id: String,
    },
}

/// Checks the pairing invariant over a request's messages: `&request.messages`, a stored
/// history (`&[Arc<Message>]`) or plain `&[Message]`.
///
/// Runs on every request, so it only borrows: the ids it remembers are `&str` into the
/// messages, and an error is the only place an id is copied.
pub fn validate_pairing<'a, M>(
    messages: impl IntoIterator<Item = &'a M>,
) -> Result<(), PairingError>
where
    M: AsRef<Message> + ?Sized + 'a,
{
    let messages = messages.into_iter();
    let mut seen_calls: HashSet<&str> = HashSet::with_capacity(messages.size_hint().0 / 2);
    // Calls of the latest assistant message still waiting for results, with its index.
    let mut pending: Vec<&str> = Vec::new();
    let mut pending_from = 0;
    for (index, message) in messages.enumerate() {
        match message.as_ref() {
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
                        id: (*id).to_string(),
                    });
                }
                if let Message::Assistant { tool_calls, .. } = other {
                    for call in tool_calls {
                        if !seen_calls.insert(&call.id) {
                            return Err(PairingError::DuplicateCall {
                                index,
                                id: call.id.clone(),
                            });
                        }
                        pending.push(&call.id);
                    }
                    pending_from = index;
                }
            }
        }
    }
    match pending.first() {
        Some(id) => Err(PairingError::Unanswered {
            index: pending_from,
            id: (*id).to_string(),
        }),
        None => Ok(()),
    }
}

/// Every tool-call id `history` uses, calls and results alike, borrowed.
fn history_ids<M>(history: &[M]) -> impl Iterator<Item = &str>
where
    M: AsRef<Message>,
{
    history.iter().flat_map(|message| {
        let (calls, result): (&[ToolCall], Option<&str>) = match message.as_ref() {
            Message::Assistant { tool_calls, .. } => (tool_calls, None),
            Message::Tool { tool_call_id, .. } => (&[], Some(tool_call_id)),
            Message::System { .. } | Message::User { .. } => (&[], None),
        };
        calls.iter().map(|c| c.id.as_str()).chain(result)
    })
}

/// Makes the ids of a new reply's `calls` usable before anything runs: an empty id, an id
/// repeated within the reply, or an id already used in `history` gets a fresh `call_<n>`
/// that collides with nothing. The first use of an id keeps it. Models do send such ids
/// (small local models reuse `call_0`); executing them as they are would run calls whose
/// results cannot be told apart, and the next request would fail [`validate_pairing`].
///
/// Returns `(old, new)` for each renamed call, in call order.
pub fn assign_unique_ids<M>(history: &[M], calls: &mut [ToolCall]) -> Vec<(String, String)>
where
    M: AsRef<Message>,
{
    // The usual reply needs no renaming. Checking that compares the reply's few ids with the
    // history's without building anything, so a long session pays no allocation per round.
    let fresh_in_reply = calls.iter().enumerate().all(|(i, call)| {
        !call.id.is_empty() && calls[..i].iter().all(|earlier| earlier.id != call.id)
    });
    if fresh_in_reply && !history_ids(history).any(|id| calls.iter().any(|c| c.id == id)) {
        return Vec::new();
    }
    let mut taken: HashSet<String> = history_ids(history).map(str::to_string).collect();
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
    fn names_each_kind_of_break() {
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
        assert_eq!(assign_unique_ids::<Message>(&[], &mut calls), vec![]);
        assert_eq!(ids(&calls), vec!["a", "b"]);
    }
}
