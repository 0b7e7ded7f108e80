//! Cancelling a turn (chapter 11): a handle the caller keeps and the loop watches.
//!
//! The loop waits on [`Cancellation::cancelled`] next to the model call and each tool call
//! (`tokio::select!`). Winning the race drops the other future: a dropped `bash` call kills its
//! whole process tree (`agent_workspace::process`), a dropped HTTP request closes its
//! connection. Every call of the reply still gets a result ([`cancelled_failure`] for those
//! that did not finish), so the history stays valid for the next turn and whatever is saved.

use std::sync::Arc;

use tokio::sync::watch;

use crate::tool::{FailureCode, ToolFailure};

/// The result text of a call that was interrupted, or never ran, because the turn was cancelled.
pub const CANCELLED_MESSAGE: &str =
    "the user cancelled the turn (Ctrl-C) before this call finished";

/// A one-way switch: once cancelled, always cancelled. Clones share the switch, so the signal
/// handler keeps one and the loop another. A new turn that must be cancellable on its own
/// gets a new handle.
#[derive(Debug, Clone)]
pub struct Cancellation {
    // A watch channel rather than `Notify`: a waiter that starts after `cancel` still sees it,
    // and any number of waiters (the loop, memory calls around it) wake together.
    switch: Arc<watch::Sender<bool>>,
}

impl Default for Cancellation {
    fn default() -> Self {
        Self::new()
    }
}

impl Cancellation {
    /// A handle not cancelled yet.
    pub fn new() -> Self {
        Self {
            switch: Arc::new(watch::Sender::new(false)),
        }
    }

    /// Cancels every turn watching this handle. Idempotent.
    pub fn cancel(&self) {
        self.switch.send_replace(true);
    }

    /// Whether [`Self::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        *self.switch.borrow()
    }

    /// Completes once [`cancel`](Self::cancel) was called (at once if it already was).
    pub async fn cancelled(&self) {
        let mut watcher = self.switch.subscribe();
        // `wait_for` fails only when the sender is gone, and `self` holds it.
        let _ = watcher.wait_for(|cancelled| *cancelled).await;
    }

    /// Runs `work` unless the turn is cancelled first; `None` means cancelled (and `work`
    /// dropped, which is what stops it).
    pub async fn run<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        if self.is_cancelled() {
            return None;
        }
        tokio::select! {
            // Cancellation first: a call that finishes at the same instant still counts as
            // cancelled, so nothing starts after the user asked to stop.
            biased;
            () = self.cancelled() => None,
            output = work => Some(output),
        }
    }
}

/// The failure stored for a call the cancellation interrupted or never let run.
pub fn cancelled_failure() -> ToolFailure {
    ToolFailure::new(FailureCode::Cancelled, CANCELLED_MESSAGE)
}
