//! What the team tools need from the session runtime, and nothing more: the runtime (which
//! owns the teammates' agents, tasks and inboxes) implements [`TeamRuntime`], the tools call it.

use agent_protocol::AgentId;
use async_trait::async_trait;

use crate::gate::PlanRequirement;
use crate::requests::ProtocolRequest;
use crate::roster::Roster;

/// A teammate to start, as `spawn_teammate` checked it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeammateSpec {
    /// Its name (checked: a slug, not `lead`, not taken, the team not full).
    pub name: AgentId,
    /// What it is for, one line.
    pub role: String,
    /// Its first message.
    pub prompt: String,
    /// Whether its plan gate is on before its first step.
    pub plan: PlanRequirement,
}

/// Why the runtime could not do what a tool asked.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The session is closing or closed.
    #[error("the session is closing; no teammate can be started")]
    Closing,
    /// Anything else the runtime reports.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

/// The session runtime, as the team tools see it.
#[async_trait]
pub trait TeamRuntime: Send + Sync {
    /// The teammates and where each stands, now.
    fn roster(&self) -> Roster;

    /// Starts a teammate (its own agent and history, the lead's permission settings and
    /// hooks), with `spec.prompt` as its first message.
    async fn spawn(&self, spec: TeammateSpec) -> Result<(), RuntimeError>;

    /// Mail was put in `recipient`'s mailbox: wake it if it is idle. Delivery itself reads
    /// the mailbox, so a wake-up lost here costs latency, never a message.
    fn mail_sent(&self, recipient: &AgentId);

    /// A protocol request was recorded and sent (after [`mail_sent`](Self::mail_sent)): a
    /// runtime may watch it (a shutdown that is not answered in time is forced).
    fn request_sent(&self, _request: &ProtocolRequest) {}
}
