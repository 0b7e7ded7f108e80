//! Groups: the units compaction keeps or drops whole, so a tool call is never separated from
//! its result. A group is one user or system message, or one assistant message together with
//! the tool results that follow it.

use std::borrow::Borrow;
use std::ops::Range;
use std::sync::Arc;

use agent_core::{Draft, Lineage, Message};

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

/// The groups of a request's messages, kept from one request to the next: those of the first
/// `stored` stored messages of a lineage stay, and a request of that lineage groups only what
/// was stored since (then its own added messages, taken off again afterwards). With them, the
/// messages and tool rounds before each group, so what a snip leaves out is counted without
/// walking it. A request then costs what is new and what it sends, not the whole session.
#[derive(Debug, Default)]
pub(crate) struct Grouped {
    lineage: Option<Lineage>,
    stored: usize,
    groups: Vec<Vec<Arc<Message>>>,
    /// `before[g]`: the messages and the tool rounds in `groups[..g]`.
    before: Vec<(usize, usize)>,
}

/// Where [`Grouped`] stood before a request's added messages: how many groups, and how long
/// the last one was (an added tool result would join it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark {
    groups: usize,
    last_len: usize,
}

impl Grouped {
    /// The groups of `draft`'s messages: its stored ones (read from where the previous
    /// request of its lineage stopped), then its added ones. Take the added ones off with
    /// [`Grouped::back_to`] and the returned mark before the next request.
    pub(crate) fn take(&mut self, draft: &Draft<'_>) -> Mark {
        let stored = draft.stored();
        let lineage = draft.lineage();
        if lineage.is_none() || self.lineage != lineage || self.stored > stored.len() {
            *self = Self {
                lineage,
                ..Self::default()
            };
        }
        for message in &stored[self.stored..] {
            self.push(message.clone());
        }
        self.stored = stored.len();
        let mark = Mark {
            groups: self.groups.len(),
            last_len: self.groups.last().map_or(0, Vec::len),
        };
        for message in draft.added() {
            self.push(message.clone());
        }
        mark
    }

    /// Drops what was grouped after `mark` (a request's added messages).
    pub(crate) fn back_to(&mut self, mark: Mark) {
        self.groups.truncate(mark.groups);
        self.before.truncate(mark.groups);
        if let Some(last) = self.groups.last_mut() {
            last.truncate(mark.last_len);
        }
    }

    fn push(&mut self, message: Arc<Message>) {
        if let (Message::Tool { .. }, Some(last)) = (&*message, self.groups.last_mut()) {
            last.push(message);
            return;
        }
        let before = self.before(self.groups.len());
        self.before.push(before);
        self.groups.push(vec![message]);
    }

    /// The messages and tool rounds in `groups[..g]`, for `g` up to the number of groups.
    fn before(&self, g: usize) -> (usize, usize) {
        if let Some(&counts) = self.before.get(g) {
            return counts;
        }
        match (self.before.last(), self.groups.last()) {
            (Some(&(messages, rounds)), Some(last)) => (
                messages + last.len(),
                rounds + usize::from(is_tool_round(last)),
            ),
            _ => (0, 0),
        }
    }

    /// The groups, in order.
    pub(crate) fn groups(&self) -> &[Vec<Arc<Message>>] {
        &self.groups
    }

    /// The messages and the tool rounds in `groups[range]`.
    pub(crate) fn counts(&self, range: Range<usize>) -> (usize, usize) {
        let (from, to) = (self.before(range.start), self.before(range.end));
        (to.0 - from.0, to.1 - from.1)
    }
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
