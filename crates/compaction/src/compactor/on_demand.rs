//! [`CompactOnDemand`]: a summary asked for by the user (chapter 20's `/compact`) rather than
//! by the byte budget.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A handle the front end keeps and the [`Compactor`](super::Compactor) reads: after
/// [`request`](Self::request), the next request is summarized as if it were over the byte
/// budget and a summary were due (all but the newest
/// [`summary_keep_groups`](super::CompactionConfig::summary_keep_groups) groups), and later
/// requests keep that summary while it still covers the start of the history, even under the
/// budget. Nothing is sent on its own: the summary call is part of the next request, so it
/// is made with the history that request has. Cheap to clone; clones share the request.
///
/// ```
/// use agent_compaction::CompactOnDemand;
///
/// let handle = CompactOnDemand::default();
/// let front_end = handle.clone();
/// front_end.request();
/// assert!(handle.is_requested());
/// ```
#[derive(Debug, Clone, Default)]
pub struct CompactOnDemand(Arc<AtomicBool>);

impl CompactOnDemand {
    /// Asks for a summary at the next request (asking twice before it is one request).
    pub fn request(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether a summary is asked for and not yet taken by a request.
    pub fn is_requested(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// Takes the request: true once per [`request`](Self::request).
    pub(super) fn take(&self) -> bool {
        self.0.swap(false, Ordering::SeqCst)
    }
}
