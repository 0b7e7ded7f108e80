//! The invariant every request must hold: each tool call id gets exactly one result, and each
//! result answers a call of the assistant message right before it.
//!
//! Providers reject requests that break this, and a compaction or hook bug breaks it silently.
//! The runner checks every request before sending it, so such a bug fails loudly here instead.

use std::borrow::Borrow;
use std::collections::HashSet;
use std::hash::Hash;
use std::sync::Arc;

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
/// It only borrows: the ids it remembers are `&str` into the messages, and an error is the
/// only place an id is copied.
pub fn validate_pairing<'a, M>(
    messages: impl IntoIterator<Item = &'a M>,
) -> Result<(), PairingError>
where
    M: AsRef<Message> + ?Sized + 'a,
{
    let messages = messages.into_iter();
    let mut check = Pairing::<&str>::with_capacity(messages.size_hint().0 / 2);
    for (index, message) in messages.enumerate() {
        check.feed(index, message.as_ref())?;
    }
    check.end()
}

/// The check part way through a conversation: ids borrowed (`&str`) for one pass, owned
/// (`String`) to be resumed by the next request.
#[derive(Debug, Default)]
struct Pairing<S> {
    seen_calls: HashSet<S>,
    /// Calls of the latest assistant message still waiting for results, with its index.
    pending: Vec<S>,
    pending_from: usize,
}

impl<S: Borrow<str> + Eq + Hash> Pairing<S> {
    fn with_capacity(calls: usize) -> Self {
        Self {
            seen_calls: HashSet::with_capacity(calls),
            pending: Vec::new(),
            pending_from: 0,
        }
    }

    /// Takes the message at `index` of the conversation.
    fn feed<'a>(&mut self, index: usize, message: &'a Message) -> Result<(), PairingError>
    where
        S: From<&'a str>,
    {
        match message {
            Message::Tool { tool_call_id, .. } => {
                let Some(pos) = self
                    .pending
                    .iter()
                    .position(|id| id.borrow() == tool_call_id)
                else {
                    return Err(PairingError::OrphanResult {
                        index,
                        id: tool_call_id.clone(),
                    });
                };
                self.pending.remove(pos);
            }
            other => {
                self.end()?;
                if let Message::Assistant { tool_calls, .. } = other {
                    for call in tool_calls {
                        if self.seen_calls.contains(call.id.as_str()) {
                            return Err(PairingError::DuplicateCall {
                                index,
                                id: call.id.clone(),
                            });
                        }
                        self.seen_calls.insert(S::from(&call.id));
                        self.pending.push(S::from(&call.id));
                    }
                    self.pending_from = index;
                }
            }
        }
        Ok(())
    }

    /// The conversation may end (or a message other than a result follow) here.
    fn end(&self) -> Result<(), PairingError> {
        match self.pending.first() {
            Some(id) => Err(PairingError::Unanswered {
                index: self.pending_from,
                id: id.borrow().to_string(),
            }),
            None => Ok(()),
        }
    }
}

/// The runner's check of every request, resumed where the previous request's ended: a request
/// whose messages after the first (the system prompt, new every time) begin with all of the
/// previous request's, as the same stored `Arc`s, checks only what follows them. A long
/// session's request then costs a pointer comparison per message instead of hashing every
/// call id again. Anything else (a compaction, a processor's rewrite) is checked whole.
#[derive(Debug, Default)]
pub(crate) struct PairingMemo {
    /// The previous passing request's messages after its first, held so that a pointer equal
    /// to one of them is that very (unchanged) message.
    checked: Vec<Arc<Message>>,
    /// The check after them (nothing pending: that request passed).
    state: Pairing<String>,
}

impl PairingMemo {
    /// [`validate_pairing`] of `messages`, with the same answer.
    pub(crate) fn check(&mut self, messages: &[Arc<Message>]) -> Result<(), PairingError> {
        let Some((first, rest)) = messages.split_first() else {
            return Ok(());
        };
        // The first message starts with nothing pending; only a system or user message leaves
        // the state as it found it, so only then can it be skipped.
        if !matches!(**first, Message::System { .. } | Message::User { .. }) {
            *self = Self::default();
            return validate_pairing(messages);
        }
        let resumed = rest.len() >= self.checked.len()
            && self
                .checked
                .iter()
                .zip(rest)
                .all(|(old, new)| Arc::ptr_eq(old, new));
        let from = if resumed {
            self.checked.len()
        } else {
            self.state = Pairing::default();
            0
        };
        let result = rest[from..]
            .iter()
            .enumerate()
            .try_for_each(|(i, message)| self.state.feed(1 + from + i, message))
            .and_then(|()| self.state.end());
        if result.is_err() {
            // The state is part way into a conversation that failed: start over next time.
            *self = Self::default();
            return result;
        }
        if resumed {
            self.checked.extend(rest[from..].iter().cloned());
        } else {
            self.checked = rest.to_vec();
        }
        Ok(())
    }
}

/// Every tool-call id `history` uses, calls and results alike, borrowed.
pub(crate) fn history_ids<M>(history: &[M]) -> impl Iterator<Item = &str>
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

    /// The memo gives validate_pairing's answer on every request of a session that grows,
    /// breaks, is compacted and grows again, whether it resumes or starts over.
    #[test]
    fn the_memo_answers_as_the_whole_check_does() {
        let shared = |m: Message| Arc::new(m);
        let mut history = vec![shared(Message::user("go"))];
        let mut requests: Vec<Vec<Arc<Message>>> = Vec::new();
        let mut request = |history: &[Arc<Message>]| {
            let mut messages = vec![shared(Message::system("prompt"))];
            messages.extend(history.iter().cloned());
            requests.push(messages);
        };
        request(&history);
        for id in ["a", "b", "c"] {
            history.push(shared(assistant(&[id])));
            history.push(shared(Message::tool_result(id, "ok")));
            request(&history);
        }
        // A repeated id (resumed: only the new messages are fed, the old ids are remembered).
        let mut repeated = history.clone();
        repeated.push(shared(assistant(&["b"])));
        repeated.push(shared(Message::tool_result("b", "ok")));
        request(&repeated);
        // An unanswered call at the end, then the session goes on from before it.
        let mut open = history.clone();
        open.push(shared(assistant(&["d"])));
        request(&open);
        history.push(shared(assistant(&["d"])));
        history.push(shared(Message::tool_result("d", "ok")));
        request(&history);
        // A compaction (other messages at the start), an orphan, then growth again.
        let compacted = vec![
            shared(Message::user("summary")),
            history[7].clone(),
            history[8].clone(),
        ];
        request(&compacted);
        request(&[
            shared(Message::user("x")),
            shared(Message::tool_result("z", "?")),
        ]);
        history.push(shared(assistant(&["e"])));
        history.push(shared(Message::tool_result("e", "ok")));
        request(&history);
        // A request that starts with a call (not a system prompt) is checked whole.
        request(&[]);
        requests.last_mut().unwrap()[0] = shared(assistant(&["f"]));
        requests.push(vec![shared(Message::system("p")), history[1].clone()]);

        let mut memo = PairingMemo::default();
        let got: Vec<_> = requests.iter().map(|r| memo.check(r)).collect();
        let want: Vec<_> = requests.iter().map(validate_pairing).collect();
        assert_eq!(got, want);
        // The session covers both answers and every kind of break.
        assert_eq!(
            want[4],
            Err(PairingError::DuplicateCall {
                index: 8,
                id: "b".into()
            })
        );
        assert_eq!(
            want[5],
            Err(PairingError::Unanswered {
                index: 8,
                id: "d".into()
            })
        );
        assert_eq!(
            want[8],
            Err(PairingError::OrphanResult {
                index: 2,
                id: "z".into()
            })
        );
        assert_eq!(
            want[10],
            Err(PairingError::Unanswered {
                index: 0,
                id: "f".into()
            })
        );
        assert_eq!(
            want[11],
            Err(PairingError::Unanswered {
                index: 1,
                id: "a".into()
            })
        );
        assert_eq!(want.iter().filter(|r| r.is_ok()).count(), 7);
    }
}
