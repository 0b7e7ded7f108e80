//! The stages that need no model: *snip* (keep the first group and the newest ones, a marker
//! for the rest) and *micro* (stub old tool results), and the assembly of a request from
//! the history's groups with both applied.
//!
//! Apart from the summary because they are pure functions of the groups (no state, no model,
//! no I/O): they run on every request, cost nothing and cannot fail, and `snip` and `micro`
//! are public so they can be used, and tested, without a compactor.

use std::sync::Arc;

use agent_core::fragment::Template;
use agent_core::{FragmentKind, Message};

use crate::groups::{Grouped, is_tool_round, message_bytes};

/// The line standing for snipped messages: a fragment, laid out in its own file.
const SNIP_MARKER: Template =
    Template::new(FragmentKind::SnipMarker, include_str!("../snip_marker.md"));

/// Keeps the first group and the newest `keep`, with a one-line marker for what is left out.
pub fn snip(groups: Vec<Vec<Message>>, keep: usize) -> Vec<Vec<Message>> {
    if groups.len() <= keep + 1 {
        return groups;
    }
    let omit = groups.len() - 1 - keep;
    let mut iter = groups.into_iter();
    let mut out: Vec<Vec<Message>> = iter.next().into_iter().collect();
    let dropped: Vec<Vec<Message>> = iter.by_ref().take(omit).collect();
    out.push(vec![snip_marker(&dropped)]);
    out.extend(iter);
    out
}

fn snip_marker<M: std::borrow::Borrow<Message>>(dropped: &[Vec<M>]) -> Message {
    let messages: usize = dropped.iter().map(Vec::len).sum();
    let rounds = dropped.iter().filter(|g| is_tool_round(g)).count();
    marker(messages, rounds)
}

/// The line standing for `messages` left out, `rounds` of them tool rounds.
fn marker(messages: usize, rounds: usize) -> Message {
    SNIP_MARKER
        .fill()
        .inline("messages", messages)
        .inline("rounds", rounds)
        .render()
        .into_message()
}

/// Replaces tool results older than the newest `keep` groups with a short stub.
pub fn micro(mut groups: Vec<Vec<Message>>, keep: usize) -> Vec<Vec<Message>> {
    let old = groups.len().saturating_sub(keep);
    for group in groups.iter_mut().take(old) {
        for message in group.iter_mut() {
            if let Message::Tool { content, .. } = message
                && let Some(stub) = stub(content)
            {
                *content = stub;
            }
        }
    }
    groups
}

/// The stub an old tool result becomes, when it is shorter than the result.
fn stub(content: &str) -> Option<String> {
    let stub = format!("[earlier tool result cleared: {} bytes]", content.len());
    (stub.len() < content.len()).then_some(stub)
}

/// A copy of `message` with its tool result stubbed, without copying the result first.
fn stubbed(message: &Message) -> Message {
    match message {
        Message::Tool {
            tool_call_id,
            content,
        } => Message::Tool {
            tool_call_id: tool_call_id.clone(),
            content: stub(content).unwrap_or_else(|| content.clone()),
        },
        other => other.clone(),
    }
}

/// One unit of a request being assembled: a group of the history, or a message made here.
pub(super) enum Part<'a> {
    Group(&'a [Arc<Message>]),
    Made(Arc<Message>),
}

/// A request's messages, and its bytes before and after micro.
pub(super) struct Shaped {
    pub(super) messages: Vec<Arc<Message>>,
    pub(super) parts: usize,
    pub(super) raw_bytes: usize,
    pub(super) bytes: usize,
}

/// `head`, then the groups from `from` on (the tail) snipped to the newest `keep` (a marker
/// stands for the rest), with tool results outside the newest `micro_keep` parts stubbed. Only
/// what is sent is copied, and an old result only as its stub: the cost follows the window,
/// not the history.
pub(super) fn assemble<'g>(
    head: Vec<Part<'g>>,
    grouped: &'g Grouped,
    from: usize,
    keep: usize,
    micro_keep: usize,
) -> Shaped {
    let tail = &grouped.groups()[from..];
    let mut parts = head;
    let start = tail.len().saturating_sub(keep);
    if start > 0 {
        let (messages, rounds) = grouped.counts(from..from + start);
        parts.push(Part::Made(Arc::new(marker(messages, rounds))));
    }
    parts.extend(tail[start..].iter().map(|g| Part::Group(g)));
    let old = parts.len().saturating_sub(micro_keep);
    let mut shaped = Shaped {
        messages: Vec::new(),
        parts: parts.len(),
        raw_bytes: 0,
        bytes: 0,
    };
    for (i, part) in parts.iter().enumerate() {
        let messages = match part {
            Part::Group(group) => *group,
            Part::Made(message) => std::slice::from_ref(message),
        };
        for message in messages {
            // Shared, not copied: only an old result is made anew, as its stub.
            let sent = if i < old && matches!(**message, Message::Tool { .. }) {
                Arc::new(stubbed(message))
            } else {
                Arc::clone(message)
            };
            shaped.raw_bytes += message_bytes(message);
            shaped.bytes += message_bytes(&sent);
            shaped.messages.push(sent);
        }
    }
    shaped
}
