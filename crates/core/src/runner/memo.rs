//! What the runner keeps of the stored history from one request to the next, so that a
//! round reads what it adds and not the whole session.

use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;

use crate::draft::{HistoryTracker, Lineage};
use crate::message::Message;
use crate::pairing::history_ids;

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
