//! What the runner keeps of the stored history from one request to the next, so that a
//! round reads what it adds and not the whole session — and how a reply's call ids are checked
//! against it.

use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, PoisonError};

use super::AgentRunner;
use crate::draft::{Drafted, HistoryTracker, Lineage};
use crate::message::{Message, ToolCall};
use crate::pairing::{assign_unique_ids, history_ids};

/// What the runner keeps of the stored history between requests.
#[derive(Debug, Default)]
pub(super) struct HistoryMemo {
    pub(super) tracker: HistoryTracker,
    pub(super) ids: CallIds,
}

/// The tool-call ids the first `len` stored messages of a lineage use (calls and results), so
/// that a new reply's ids are checked against a set instead of against every message. Kept as
/// hashes: no copy of an id, and a collision only sends the reply through the whole check.
#[derive(Debug, Default)]
pub(super) struct CallIds {
    lineage: Option<Lineage>,
    len: usize,
    ids: HashSet<u64>,
    hasher: RandomState,
}

impl CallIds {
    /// Brought up to `stored`, the messages of a draft of `lineage`.
    pub(super) fn update(&mut self, lineage: Option<Lineage>, stored: &[Arc<Message>]) {
        if lineage.is_none() || self.lineage != lineage || self.len > stored.len() {
            self.ids.clear();
            self.len = 0;
            self.lineage = lineage;
        }
        let hasher = &self.hasher;
        self.ids
            .extend(history_ids(&stored[self.len..]).map(|id| hasher.hash_one(id)));
        self.len = stored.len();
    }

    /// Whether `id` may be one of them (a hash collision says yes).
    pub(super) fn may_contain(&self, id: &str) -> bool {
        self.ids.contains(&self.hasher.hash_one(id))
    }

    /// Whether this is the set of the `len` messages of a draft of `lineage`.
    pub(super) fn covers(&self, lineage: Option<Lineage>, len: usize) -> bool {
        lineage.is_some() && self.lineage == lineage && self.len == len
    }
}

impl AgentRunner {
    /// [`assign_unique_ids`] for a reply to a request built from `history` (as `drafted`):
    /// the usual reply, whose ids are new, is told so by the runner's set of the history's
    /// ids; anything else goes through the whole check.
    pub(super) fn unique_ids(
        &self,
        history: &[Arc<Message>],
        drafted: Option<Drafted>,
        calls: &mut [ToolCall],
    ) -> Vec<(String, String)> {
        if calls.is_empty() {
            return Vec::new();
        }
        let fresh = {
            let memo = self.history.lock().unwrap_or_else(PoisonError::into_inner);
            memo.ids
                .covers(drafted.map(Drafted::lineage), history.len())
                && calls.iter().enumerate().all(|(i, call)| {
                    !call.id.is_empty()
                        && calls[..i].iter().all(|earlier| earlier.id != call.id)
                        && !memo.ids.may_contain(&call.id)
                })
        };
        if fresh {
            return Vec::new();
        }
        assign_unique_ids(history, calls)
    }
}
