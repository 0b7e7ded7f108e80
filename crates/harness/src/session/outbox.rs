//! The session's one outgoing stream, and the per-agent sink that stamps each event with the
//! agent, its turn and a session-wide sequence number.

use std::sync::{Arc, Mutex, PoisonError};

use agent_core::{AgentEvent, AgentId, EventEnvelope, EventSink, TurnId};
use tokio::sync::mpsc;

use super::SessionEvent;

/// Sends every event of the session, in one order. Stamping and sending happen under one lock,
/// so the stream's sequence numbers rise one by one however many agents emit at once.
#[derive(Debug)]
pub(crate) struct Outbox {
    tx: mpsc::UnboundedSender<SessionEvent>,
    /// The last sequence number handed out.
    seq: Mutex<u64>,
}

impl Outbox {
    pub(crate) fn new(tx: mpsc::UnboundedSender<SessionEvent>) -> Self {
        Self {
            tx,
            seq: Mutex::new(0),
        }
    }

    /// Stamps `event` as `agent`'s, in `turn`, with the next sequence number, and sends it.
    pub(crate) fn agent_event(&self, agent: &AgentId, turn: Option<TurnId>, event: AgentEvent) {
        let mut seq = self.seq.lock().unwrap_or_else(PoisonError::into_inner);
        *seq += 1;
        let envelope = EventEnvelope {
            agent: agent.clone(),
            turn,
            seq: *seq,
            event,
        };
        // A client that stopped listening has left: nothing to tell anyone.
        let _ = self.tx.send(SessionEvent::Agent(envelope));
    }

    /// Sends a session event (not one agent's).
    pub(crate) fn session_event(&self, event: SessionEvent) {
        // Under the same lock, so it is ordered with the agents' events around it.
        let _seq = self.seq.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = self.tx.send(event);
    }
}

/// The turn an agent is in now, shared by the session (which starts and ends turns) and the
/// agent's sink (which stamps it on every event).
#[derive(Debug, Default)]
pub(crate) struct TurnCell(Mutex<Option<TurnId>>);

impl TurnCell {
    pub(crate) fn get(&self) -> Option<TurnId> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn set(&self, turn: Option<TurnId>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = turn;
    }
}

/// The sink an agent is built with ([`crate::AgentDeps::events`]) when a session drives it:
/// every event leaves the session as an [`EventEnvelope`] naming the agent.
#[derive(Debug)]
pub(crate) struct StampingSink {
    pub(crate) agent: AgentId,
    pub(crate) turn: Arc<TurnCell>,
    pub(crate) outbox: Arc<Outbox>,
}

impl EventSink for StampingSink {
    fn emit(&self, event: &AgentEvent) {
        self.outbox
            .agent_event(&self.agent, self.turn.get(), event.clone());
    }
}
