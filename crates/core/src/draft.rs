//! A request's messages while the history processors shape them ([`Draft`]), and the
//! [`Lineage`] that lets a processor resume what it derived from the history last time.
//!
//! A session's history only grows between two requests, yet a processor that counts rounds or
//! groups messages used to be handed a pointer to every stored message and walk them all, on
//! every request: a round cost more the longer the session. A [`Draft`] borrows the stored
//! history instead, and its [`Lineage`] says that the history begins with the one of the
//! previous draft of that lineage (the same `Arc`s, checked by [`HistoryTracker`]), so a
//! processor that kept its counts for that prefix reads only what was added since.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::message::Message;

/// A chain of histories each of which begins with the one before, the same stored messages
/// at the same places. Only a [`HistoryTracker`] hands one out, after checking.
///
/// What a processor derived from the first `k` stored messages of a draft of lineage `L`
/// holds for the first `k` stored messages of every later draft of `L`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lineage(u64);

impl Lineage {
    /// One never handed out before (in this process).
    fn fresh() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Self(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// Gives the histories it sees a [`Lineage`]: the same one as the history before while each
/// begins with all of the one before, a fresh one otherwise (a rewrite, a shorter history, a
/// compacted or resumed one).
///
/// It holds the last history's messages, so a pointer equal to one of them is that very,
/// unchanged message (an `Arc` cannot be freed, reused or changed while it is held). The check
/// compares pointers, one per message, without touching the messages themselves.
#[derive(Debug, Default)]
pub struct HistoryTracker {
    lineage: Option<Lineage>,
    seen: Vec<Arc<Message>>,
}

impl HistoryTracker {
    /// A draft of `history` (nothing added yet), with its lineage.
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// use agent_core::{HistoryTracker, Message};
    ///
    /// let mut tracker = HistoryTracker::default();
    /// let mut history = vec![Arc::new(Message::user("hi"))];
    /// let first = tracker.draft(&history).lineage();
    /// history.push(Arc::new(Message::assistant_text("hello")));
    /// // Grown: the same lineage.
    /// assert_eq!(tracker.draft(&history).lineage(), first);
    /// // Rewritten: a new one.
    /// history[0] = Arc::new(Message::user("hi!"));
    /// assert_ne!(tracker.draft(&history).lineage(), first);
    /// ```
    pub fn draft<'a>(&mut self, history: &'a [Arc<Message>]) -> Draft<'a> {
        let grown = self.lineage.is_some()
            && history.len() >= self.seen.len()
            // Without an early exit, so that the comparison runs over whole vectors.
            && self
                .seen
                .iter()
                .zip(history)
                .fold(true, |same, (old, new)| same & Arc::ptr_eq(old, new));
        if !grown {
            self.lineage = Some(Lineage::fresh());
            self.seen.clear();
        }
        let from = self.seen.len();
        self.seen.extend(history[from..].iter().cloned());
        Draft {
            stored: history,
            lineage: self.lineage,
            added: Vec::new(),
        }
    }
}

/// A draft handed out by a [`HistoryTracker`]: its lineage and how many stored messages it had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Drafted {
    lineage: Lineage,
    len: usize,
}

impl Drafted {
    /// The draft's lineage.
    pub(crate) fn lineage(self) -> Lineage {
        self.lineage
    }
}

impl HistoryTracker {
    /// [`draft`](Self::draft) of a history its caller knows to be the one of `since` with
    /// messages appended (it held the history exclusively in between and only appended, as
    /// the runner does within a turn): when this tracker handed out nothing else since, the
    /// old messages are not compared again, and a round of a long turn costs what it adds.
    pub(crate) fn draft_appended<'a>(
        &mut self,
        history: &'a [Arc<Message>],
        since: Option<Drafted>,
    ) -> Draft<'a> {
        match since {
            Some(since)
                if self.lineage == Some(since.lineage)
                    && self.seen.len() == since.len
                    && history.len() >= since.len =>
            {
                self.seen.extend(history[since.len..].iter().cloned());
                Draft {
                    stored: history,
                    lineage: self.lineage,
                    added: Vec::new(),
                }
            }
            _ => self.draft(history),
        }
    }
}

/// A request's messages while the processors shape them: a run of the stored history,
/// borrowed as it is, then the messages the processors made for this request.
///
/// A processor that only adds at the end (a reminder) pushes onto it; one that rewrites
/// (compaction) builds a new one with [`Draft::owned`]. Nothing here can change a stored
/// message.
#[derive(Debug, Clone)]
pub struct Draft<'a> {
    stored: &'a [Arc<Message>],
    lineage: Option<Lineage>,
    added: Vec<Arc<Message>>,
}

impl Draft<'static> {
    /// A draft of messages made for this request (no stored part, no lineage).
    pub fn owned(messages: Vec<Arc<Message>>) -> Self {
        Self {
            stored: &[],
            lineage: None,
            added: messages,
        }
    }
}

impl<'a> Draft<'a> {
    /// The stored history's messages the draft begins with.
    pub fn stored(&self) -> &'a [Arc<Message>] {
        self.stored
    }

    /// The messages made for this request, after the stored ones.
    pub fn added(&self) -> &[Arc<Message>] {
        &self.added
    }

    /// The lineage of the stored part, when a [`HistoryTracker`] gave one.
    pub fn lineage(&self) -> Option<Lineage> {
        self.lineage
    }

    /// What [`HistoryTracker::draft_appended`] needs to know of this draft later.
    pub(crate) fn drafted(&self) -> Option<Drafted> {
        self.lineage.map(|lineage| Drafted {
            lineage,
            len: self.stored.len(),
        })
    }

    /// How many messages the request would send.
    pub fn len(&self) -> usize {
        self.stored.len() + self.added.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every message, in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Arc<Message>> + '_ {
        self.stored.iter().chain(&self.added)
    }

    /// Adds a message at the end.
    pub fn push(&mut self, message: Arc<Message>) {
        self.added.push(message);
    }

    /// Every message as one vector (a pointer taken to each stored one).
    pub fn into_vec(self) -> Vec<Arc<Message>> {
        if self.stored.is_empty() {
            return self.added;
        }
        let mut all = Vec::with_capacity(self.len());
        all.extend_from_slice(self.stored);
        all.extend(self.added);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Arc<Message> {
        Arc::new(Message::user(text))
    }

    #[test]
    fn a_history_keeps_its_lineage_while_it_grows_and_loses_it_otherwise() {
        let mut tracker = HistoryTracker::default();
        let mut history = vec![user("a"), user("b")];
        let first = tracker.draft(&history).lineage();
        assert!(first.is_some());
        // Unchanged and grown: the same.
        assert_eq!(tracker.draft(&history).lineage(), first);
        history.push(user("c"));
        assert_eq!(tracker.draft(&history).lineage(), first);
        // Shorter: new (a later history that grows back from it is not the old chain).
        let shorter = tracker.draft(&history[..2]).lineage();
        assert_ne!(shorter, first);
        assert_eq!(tracker.draft(&history).lineage(), shorter);
        // The same text in a new message: new.
        history[1] = user("b");
        let rewritten = tracker.draft(&history).lineage();
        assert_ne!(rewritten, shorter);
        assert_ne!(rewritten, first);
        // A second tracker never hands out the first's.
        assert_ne!(
            HistoryTracker::default().draft(&history).lineage(),
            rewritten
        );
    }

    #[test]
    fn an_appended_history_is_trusted_only_when_nothing_was_drafted_in_between() {
        let mut tracker = HistoryTracker::default();
        let mut history = vec![user("a")];
        let first = tracker.draft(&history);
        let (lineage, since) = (first.lineage(), first.drafted());
        history.push(user("b"));
        let next = tracker.draft_appended(&history, since);
        assert_eq!(next.lineage(), lineage);
        assert_eq!(tracker.seen, history);
        // Another history drafted in between: `since` no longer describes what the tracker
        // saw, and the history is compared whole (here: rewritten, so a new lineage).
        let since = next.drafted();
        tracker.draft(&[user("x")]);
        history[0] = user("a");
        let other = tracker.draft_appended(&history, since);
        assert_ne!(other.lineage(), lineage);
        assert_eq!(tracker.seen, history);
    }

    #[test]
    fn a_draft_is_the_stored_messages_then_the_added_ones() {
        let history = vec![user("a"), user("b")];
        let mut draft = HistoryTracker::default().draft(&history);
        draft.push(user("c"));
        assert_eq!(draft.len(), 3);
        let texts: Vec<&str> = draft.iter().map(|m| m.text()).collect();
        assert_eq!(texts, ["a", "b", "c"]);
        let all = draft.into_vec();
        assert!(Arc::ptr_eq(&all[0], &history[0]));
        assert_eq!(Draft::owned(all.clone()).into_vec(), all);
        assert_eq!(Draft::owned(Vec::new()).lineage(), None);
    }
}
