//! Agents that join a running session (chapter 15's teammates), and work that reaches an idle
//! agent from a durable store instead of the person (chapter 15's mailbox).
//!
//! A [`Joiner`] is what a tool handler holds while the session's loop owns the session: it
//! makes the sink and the approval provider a new agent is built with (like
//! [`Session::sink`](super::Session::sink) and [`Session::approval`](super::Session::approval))
//! and hands the built agent to the loop, which adds it as one more agent with its own turn.
//! [`Joiner::wake`] makes the loop look again at an agent: how mail wakes an idle recipient.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use agent_core::AgentInbox;
use agent_core::{AgentId, EventSink, Message, RunError};
use agent_policy::ApprovalProvider;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::run::Parts;

use super::approval::{Approvals, SessionApproval};
use super::outbox::{Outbox, StampingSink, TurnCell};
use crate::Agent;

/// What an idle agent is given to do next by a [`TurnSource`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// Run a turn with this text as its user message (a mail fragment, already escaped).
    Turn(String),
    /// The agent is done (a shutdown it answered): the session drops it.
    Stop,
    /// Work an earlier process finished but did not acknowledge before it died: these
    /// messages (the mail's fragment) go into the agent's history as they are, with no turn
    /// and no model call; then the source is asked again.
    Restore(Vec<Message>),
}

/// Work that reaches idle agents from outside the person's prompts: asked for each idle agent
/// whenever the loop looks (after a wake-up), told how each turn it started ended.
pub trait TurnSource: Send + Sync + std::fmt::Debug {
    /// The next thing `agent` should do now that it is idle, if anything.
    fn next(&self, agent: &AgentId) -> Option<Delivery>;

    /// The turn that [`Delivery::Turn`] started for `agent` ended: with its final answer, or
    /// why not.
    fn finished(&self, agent: &AgentId, result: Result<&str, &RunError>);

    /// The session ended while that turn ran: what it delivered goes back, not failed.
    fn abandoned(&self, agent: &AgentId);

    /// Whether work is on its way that will wake an agent (chapter 17: a teammate polling the
    /// board): a one-shot session does not end while it is.
    fn busy(&self) -> bool {
        false
    }

    /// The session has ended (after every [`abandoned`](Self::abandoned)).
    fn ended(&self) {}
}

/// An agent built for a running session, on its way into the loop.
#[derive(Debug)]
pub(crate) struct Joined {
    pub(crate) id: AgentId,
    pub(crate) agent: Agent,
    pub(crate) turn: Arc<TurnCell>,
}

/// Adds agents to a running session and wakes its agents; cloneable, held by tool handlers.
#[derive(Debug, Clone)]
pub struct Joiner {
    pub(crate) outbox: Arc<Outbox>,
    pub(crate) approvals: Arc<Approvals>,
    /// The turn cells of agents whose sink was made and who have not joined yet.
    pub(crate) cells: Arc<Mutex<BTreeMap<AgentId, Arc<TurnCell>>>>,
    pub(crate) joins: mpsc::UnboundedSender<Joined>,
    pub(crate) wakes: mpsc::UnboundedSender<AgentId>,
    pub(crate) ops: mpsc::UnboundedSender<super::Op>,
}

/// The session has ended: nothing can join it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the session has ended")]
pub struct SessionEnded;

impl Joiner {
    fn cell(&self, id: &AgentId) -> Arc<TurnCell> {
        self.cells
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(id.clone())
            .or_default()
            .clone()
    }

    /// The event sink to build agent `id` with: its events leave the session stamped with
    /// `id` and its turn.
    pub fn sink(&self, id: &AgentId) -> Arc<dyn EventSink> {
        Arc::new(StampingSink {
            agent: id.clone(),
            turn: self.cell(id),
            outbox: self.outbox.clone(),
        })
    }

    /// The approval provider to build agent `id` with: its questions name it.
    pub fn approval(&self, id: &AgentId) -> Arc<dyn ApprovalProvider> {
        Arc::new(SessionApproval {
            agent: id.clone(),
            approvals: self.approvals.clone(),
        })
    }

    /// Hands `agent` (built with this joiner's [`sink`](Self::sink) for `id`) to the loop.
    pub fn add(&self, id: AgentId, agent: Agent) -> Result<(), SessionEnded> {
        let turn = self
            .cells
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id)
            .unwrap_or_default();
        self.joins
            .send(Joined { id, agent, turn })
            .map_err(|_| SessionEnded)
    }

    /// Stops `agent`'s running turn (it ends cancelled); nothing when it runs none.
    pub fn cancel(&self, agent: &AgentId) {
        let _ = self.ops.send(super::Op::Cancel(agent.clone()));
    }

    /// Makes the loop look at `agent` again (new mail for it); lost once the session ended.
    pub fn wake(&self, agent: &AgentId) {
        let _ = self.wakes.send(agent.clone());
    }
}

impl super::Session {
    pub(super) fn watch(&self, watchers: &mut JoinSet<()>, id: &AgentId, inbox: &Arc<AgentInbox>) {
        let (id, inbox, wake) = (id.clone(), inbox.clone(), self.joiner.wakes.clone());
        watchers.spawn(async move {
            loop {
                inbox.changed().await;
                if wake.send(id.clone()).is_err() {
                    break;
                }
            }
        });
    }

    /// An agent joins while the loop runs (chapter 15): one more slot, inbox and watcher.
    /// A name that is taken keeps its agent (the runtime checks names before it builds).
    pub(super) fn join(&mut self, joined: Joined, parts: &mut Parts, watchers: &mut JoinSet<()>) {
        let Joined { id, agent, turn } = joined;
        if self.slots.contains_key(&id) {
            tracing::warn!("{id} is in the session already; the new agent was dropped");
            return;
        }
        parts.inboxes.insert(id.clone(), agent.inbox.clone());
        self.watch(watchers, &id, &agent.inbox);
        if let Some(scheduler) = &agent.scheduler {
            parts.schedulers.push((id.clone(), scheduler.clone()));
        }
        if let Some(jobs) = &agent.jobs {
            parts.jobs.push(jobs.clone());
        }
        self.slots.insert(
            id,
            super::Slot {
                agent: Some(agent),
                turn,
                turns: 0,
                queued: std::collections::VecDeque::new(),
            },
        );
    }
}
