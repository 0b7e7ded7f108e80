//! Approval as request and response through the session, keyed by id (chapter 3's `ask`):
//! the provider an agent's permission pipeline gets posts a question and waits for the answer
//! to that id, so several agents can ask at once and each answer finds its question.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use agent_core::AgentId;
use agent_policy::{Approval, ApprovalError, ApprovalProvider, ApprovalRequest};
use async_trait::async_trait;
use tokio::sync::oneshot;

use super::SessionEvent;
use super::outbox::Outbox;

/// The id of one approval question, unique in its session (from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ApprovalId(pub u64);

impl std::fmt::Display for ApprovalId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "q{}", self.0)
    }
}

/// A person's answer to one question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Run the call.
    Approve,
    /// Do not run it.
    Decline,
    /// The person cancelled the question (Ctrl-C): the call does not run, and the model is told
    /// the question was cancelled rather than declined.
    Cancel,
}

/// How a question was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closed {
    /// Answered with this decision.
    Answered(Decision),
    /// Its turn ended (cancelled) before anyone answered.
    Abandoned,
}

#[derive(Debug)]
struct Pending {
    answer: oneshot::Sender<Decision>,
}

/// The questions waiting for an answer.
#[derive(Debug)]
pub(crate) struct Approvals {
    pending: Mutex<BTreeMap<ApprovalId, Pending>>,
    last: Mutex<u64>,
    outbox: Arc<Outbox>,
}

impl Approvals {
    pub(crate) fn new(outbox: Arc<Outbox>) -> Self {
        Self {
            pending: Mutex::default(),
            last: Mutex::new(0),
            outbox,
        }
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, BTreeMap<ApprovalId, Pending>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a question and tells the client; the receiver gets the answer.
    fn open(
        &self,
        agent: &AgentId,
        request: &ApprovalRequest,
    ) -> (ApprovalId, oneshot::Receiver<Decision>) {
        let id = {
            let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
            *last += 1;
            ApprovalId(*last)
        };
        let (answer, rx) = oneshot::channel();
        self.pending().insert(id, Pending { answer });
        self.outbox.session_event(SessionEvent::ApprovalRequested {
            id,
            agent: agent.clone(),
            request: request.clone(),
        });
        (id, rx)
    }

    /// Answers question `id`; an unknown or already closed id is ignored (the answer came
    /// late). Returns whether a question was answered.
    pub(crate) fn answer(&self, id: ApprovalId, decision: Decision) -> bool {
        let Some(pending) = self.pending().remove(&id) else {
            return false;
        };
        let _ = pending.answer.send(decision);
        self.outbox.session_event(SessionEvent::ApprovalClosed {
            id,
            closed: Closed::Answered(decision),
        });
        true
    }

    /// The oldest question still waiting, if any (the one a Ctrl-C from outside cancels).
    pub(crate) fn oldest(&self) -> Option<ApprovalId> {
        self.pending().keys().next().copied()
    }

    /// The question's turn went away (cancelled): nobody waits for the answer any more.
    fn abandon(&self, id: ApprovalId) {
        if self.pending().remove(&id).is_some() {
            self.outbox.session_event(SessionEvent::ApprovalClosed {
                id,
                closed: Closed::Abandoned,
            });
        }
    }
}

/// The approval provider of one agent of the session.
#[derive(Debug, Clone)]
pub(crate) struct SessionApproval {
    pub(crate) agent: AgentId,
    pub(crate) approvals: Arc<Approvals>,
}

/// Closes a question whose waiting future was dropped (its turn was cancelled).
struct AbandonOnDrop<'a> {
    approvals: &'a Approvals,
    id: ApprovalId,
}

impl Drop for AbandonOnDrop<'_> {
    fn drop(&mut self) {
        self.approvals.abandon(self.id);
    }
}

#[async_trait]
impl ApprovalProvider for SessionApproval {
    async fn approve(&self, request: &ApprovalRequest) -> Result<Approval, ApprovalError> {
        let (id, answer) = self.approvals.open(&self.agent, request);
        let _abandon = AbandonOnDrop {
            approvals: &self.approvals,
            id,
        };
        match answer.await {
            Ok(Decision::Approve) => Ok(Approval::Approved),
            Ok(Decision::Decline) => Ok(Approval::Declined),
            Ok(Decision::Cancel) => Err(ApprovalError::Cancelled),
            // The session ended without an answer: fail closed.
            Err(_) => Err(ApprovalError::Cancelled),
        }
    }
}
