//! Where a run's events go: [`EventSink`] and its handles. The events themselves
//! ([`AgentEvent`] and its parts) are the protocol crate's, re-exported here.

use std::sync::{Arc, Mutex, PoisonError};

pub use agent_protocol::event::*;

/// Receives events. Called inline, on the task doing the work: keep it quick, never fail.
pub trait EventSink: Send + Sync {
    /// Takes one event.
    fn emit(&self, event: &AgentEvent);
}

/// Watches nothing: the default wherever no one listens.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoEvents;

impl EventSink for NoEvents {
    fn emit(&self, _event: &AgentEvent) {}
}

/// A handle on a sink for the features that emit: cheap to clone, `Debug`, and silent by
/// default, so a feature built without one (a unit test) needs no extra wiring.
#[derive(Clone)]
pub struct Events(Arc<dyn EventSink>);

impl Events {
    /// A handle on `sink`.
    pub fn new(sink: Arc<dyn EventSink>) -> Self {
        Self(sink)
    }

    /// Sends one event to the sink.
    pub fn emit(&self, event: AgentEvent) {
        self.0.emit(&event);
    }

    /// The sink itself.
    pub fn sink(&self) -> &Arc<dyn EventSink> {
        &self.0
    }
}

impl Default for Events {
    fn default() -> Self {
        Self(Arc::new(NoEvents))
    }
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Events")
    }
}

/// Keeps every event, in order; for tests and for callers that inspect a run afterwards.
#[derive(Debug, Default)]
pub struct CollectingSink(Mutex<Vec<AgentEvent>>);

impl CollectingSink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// Everything emitted so far.
    pub fn events(&self) -> Vec<AgentEvent> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl EventSink for CollectingSink {
    fn emit(&self, event: &AgentEvent) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event.clone());
    }
}
