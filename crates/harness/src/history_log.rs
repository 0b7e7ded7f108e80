//! [`HistoryLog`]: where an agent's history is kept as it grows, so a session can be continued
//! exactly (the CLI writes it to `.agent_tutorial/sessions/`, chapter 11 on).
//!
//! Where the messages are observed: the stored history itself, not the event stream. Events
//! do not carry every message (a prompt hook's context, an inbox notice, a stop hook's
//! message are stored without one) nor their stored form (a large result is stored as its
//! preview), so a log built from them could not rebuild the history exactly. The history is
//! seen at two points the harness owns:
//!
//! - before every request, by the first history processor ([`HistoryRecorder`]), which is
//!   handed the history exactly as stored, before any processor shapes it — so everything
//!   the loop stored before a request is kept before that request is sent;
//! - when the loop returns ([`crate::Agent::answer`]), answered or not: the last reply and
//!   what followed it.
//!
//! The history only grows (compaction shapes requests, never the stored history), so each
//! observation appends what is new since the last one; [`HistoryLog::cleared`] starts over.

use std::sync::Arc;

use agent_core::{HistoryProcessor, Message, ProcessError};
use async_trait::async_trait;

/// Keeps an agent's history as it grows. Called inline by the loop: keep it quick, never
/// fail (a log that cannot write says so itself and the session goes on).
pub trait HistoryLog: Send + Sync + std::fmt::Debug {
    /// A person's turn starts with `prompt` (before its messages are stored).
    fn turn_started(&self, prompt: &str);
    /// The whole history as it is now; what is new since the last call is to be kept.
    fn observe(&self, history: &[Arc<Message>]);
    /// The history was emptied ([`crate::Agent::clear_history`], `/clear`): what comes next
    /// is a new conversation.
    fn cleared(&self);
}

/// The first history processor when a log is given: hands the log the history as stored,
/// changing nothing.
pub(crate) struct HistoryRecorder(pub(crate) Arc<dyn HistoryLog>);

#[async_trait]
impl HistoryProcessor for HistoryRecorder {
    fn name(&self) -> &'static str {
        "session_log"
    }

    async fn process(
        &self,
        messages: Vec<Arc<Message>>,
    ) -> Result<Vec<Arc<Message>>, ProcessError> {
        self.0.observe(&messages);
        Ok(messages)
    }
}
