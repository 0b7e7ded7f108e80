//! [`Session`]: owns the agents and drives them with one `tokio::select!` loop over the
//! submissions of its clients, each agent's inbox, the cron timer and the turns running.
//!
//! Modelled on a submission queue and an event queue: a client sends [`Op`]s through a
//! cloneable [`SessionHandle`] and reads [`SessionEvent`]s from one stream. Nothing blocks per
//! turn: a turn runs as a task that owns its agent and hands it back when it ends, so while it
//! runs the session still answers approval questions, takes Ctrl-C, and wakes other agents.
//!
//! ```text
//!  client ──Op──▶ ┌──────────── Session::run ────────────┐ ──SessionEvent──▶ client
//!                 │ select! { submission, turn ended,     │
//!                 │           inbox posted, cron timer }  │
//!                 └───▲───────────────────────▲───────────┘
//!                     │ turn task (owns Agent) │ job supervisor posts notices
//! ```

mod approval;
mod close;
mod join;
mod outbox;
mod run;
mod turn;
mod work;

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use agent_core::{AgentId, EventEnvelope, EventSink, RunError, TurnId};
use agent_policy::{ApprovalProvider, ApprovalRequest};
use tokio::sync::mpsc;

use crate::Agent;
pub use approval::{ApprovalId, Closed, Decision};
use approval::{Approvals, SessionApproval};
pub use close::{CloseFailure, CloseReport, Resource};
pub use join::{Delivery, Joiner, SessionEnded, TurnSource};
use outbox::{Outbox, StampingSink, TurnCell};

/// What a client asks of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// A prompt the person typed for `agent`; queued while the agent is busy.
    Prompt {
        /// Who it is for.
        agent: AgentId,
        /// What was typed.
        text: String,
    },
    /// The answer to approval question `id`.
    Approval {
        /// The question answered.
        id: ApprovalId,
        /// The answer.
        decision: Decision,
    },
    /// Ctrl-C (see [`Interrupts`] for what it does when).
    Interrupt(InterruptFrom),
    /// Stop `agent`'s running turn, if it runs one (a teammate stopped by force, chapter 16).
    Cancel(AgentId),
    /// Forget `agent`'s conversation (`/clear`, chapter 20): its next turn starts a new one
    /// with the same settings. Only an idle agent's: while it runs a turn, nothing changes
    /// (and the log says so).
    Clear(AgentId),
    /// End the session now: running turns are dropped (their commands' process groups die with
    /// them) and background jobs are killed, their records closed as ended by the session.
    Shutdown(EndReason),
}

/// Where a Ctrl-C came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InterruptFrom {
    /// The line editor read the key while the terminal was in raw mode.
    Keyboard,
    /// SIGINT from outside (the terminal between reads, `kill -INT`, a pipe's sender).
    Signal,
}

/// What a Ctrl-C does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupts {
    /// Chapter 11 on: the first cancels the running turn (or the question waiting), a second
    /// while it is cancelling ends the session; one from outside while nothing runs ends it.
    CancelTurn,
    /// Chapters 1–10: the first ends the session, dropping the running turn (and so killing
    /// the command it runs) on the way.
    EndSession,
}

/// Why the session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndReason {
    /// The person ended it (`exit`, end of input).
    Done,
    /// One-shot mode: the prompt's turn failed.
    TurnFailed(RunError),
    /// Ctrl-C ended it (exit code 130).
    Interrupted,
    /// A signal ended it (SIGTERM, SIGHUP): its number.
    Signal(i32),
}

/// One thing the session tells its clients.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEvent {
    /// Something one agent did, stamped with the agent, its turn and the session's sequence.
    Agent(EventEnvelope),
    /// `agent` asks whether a call may run; answer with [`Op::Approval`] and this `id`.
    ApprovalRequested {
        /// The question's id.
        id: ApprovalId,
        /// Who asks.
        agent: AgentId,
        /// What is asked.
        request: ApprovalRequest,
    },
    /// Question `id` no longer waits.
    ApprovalClosed {
        /// The question's id.
        id: ApprovalId,
        /// How it was closed.
        closed: Closed,
    },
    /// `agent`'s turn ended and the agent is free again; `result` is how the loop ended (the
    /// typed error, for a client that has more to say about it than the event's text).
    TurnEnded {
        /// Whose turn.
        agent: AgentId,
        /// Which turn.
        turn: TurnId,
        /// `Ok` once answered (memory extraction included), else why not.
        result: Result<(), RunError>,
    },
    /// A Ctrl-C asked `agent`'s running turn to stop; it has not stopped yet.
    Cancelling {
        /// Whose turn.
        agent: AgentId,
    },
    /// `agent`'s schedules cannot be checked (chapter 14); `error` says why. The session goes
    /// on: schedules never break it.
    CronFailed {
        /// Whose scheduler.
        agent: AgentId,
        /// What failed.
        error: String,
    },
    /// The lead runs nothing and has nothing queued: the person may type. (Teammates may
    /// still be working, chapter 15 on; before, the lead is the only agent.)
    Idle,
    /// The session ended; no event follows.
    Ended(EndReason),
}

/// How the session ends on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Until a client ends it ([`Op::Shutdown`]) or Ctrl-C does.
    Interactive,
    /// `--prompt`: the lead's first turn, then what is due, then the end.
    OneShot,
    /// What is queued and what is due now, then the end: one look "between the person's
    /// turns", for tests and scripting clients.
    UntilIdle,
}

/// A cloneable handle that submits [`Op`]s to a running session.
#[derive(Debug, Clone)]
pub struct SessionHandle {
    tx: mpsc::UnboundedSender<Op>,
}

impl SessionHandle {
    /// Submits `op`; returns `false` when the session has ended.
    pub fn submit(&self, op: Op) -> bool {
        self.tx.send(op).is_ok()
    }
}

/// One agent of the session and what it is doing.
#[derive(Debug)]
pub(crate) struct Slot {
    /// `None` while a turn task owns it.
    pub(crate) agent: Option<Agent>,
    pub(crate) turn: Arc<TurnCell>,
    /// Turns started so far (the next [`agent_core::TurnId`] is one more).
    pub(crate) turns: u64,
    /// Prompts typed while it was busy, oldest first.
    pub(crate) queued: VecDeque<String>,
}

/// Owns the agents of one session and drives them. Build the agents with the session's
/// [`sink`](Self::sink) and [`approval`](Self::approval) for their id, [`add`](Self::add) them,
/// then [`run`](Self::run).
#[derive(Debug)]
pub struct Session {
    slots: BTreeMap<AgentId, Slot>,
    outbox: Arc<Outbox>,
    approvals: Arc<Approvals>,
    ops: mpsc::UnboundedReceiver<Op>,
    handle: SessionHandle,
    events: Option<mpsc::UnboundedReceiver<SessionEvent>>,
    interrupts: Interrupts,
    /// Agents that join while the loop runs (chapter 15), and who to look at again.
    joiner: Joiner,
    joins: mpsc::UnboundedReceiver<join::Joined>,
    wakes: mpsc::UnboundedReceiver<AgentId>,
    /// Where idle agents get work besides prompts and schedules (chapter 15's mailbox).
    source: Option<Arc<dyn TurnSource>>,
    /// What the end closed, once the session has ended.
    close_report: Option<close::CloseReport>,
}

impl Session {
    /// A session with no agent yet, whose Ctrl-C does what `interrupts` says.
    pub fn new(interrupts: Interrupts) -> Self {
        let (tx, ops) = mpsc::unbounded_channel();
        let (events_tx, events) = mpsc::unbounded_channel();
        let outbox = Arc::new(Outbox::new(events_tx));
        let approvals = Arc::new(Approvals::new(outbox.clone()));
        let (joins_tx, joins) = mpsc::unbounded_channel();
        let (wakes_tx, wakes) = mpsc::unbounded_channel();
        Self {
            slots: BTreeMap::new(),
            joiner: Joiner {
                outbox: outbox.clone(),
                approvals: approvals.clone(),
                cells: Arc::default(),
                joins: joins_tx,
                wakes: wakes_tx,
                ops: tx.clone(),
            },
            approvals,
            outbox,
            ops,
            handle: SessionHandle { tx },
            events: Some(events),
            interrupts,
            joins,
            wakes,
            source: None,
            close_report: None,
        }
    }

    /// Adds agents to the session while it runs, and wakes them (chapter 15).
    pub fn joiner(&self) -> Joiner {
        self.joiner.clone()
    }

    /// Asks `source` for work whenever an agent is idle (after its queued prompts), and tells
    /// it how each turn it started ended.
    pub fn set_source(&mut self, source: Arc<dyn TurnSource>) {
        self.source = Some(source);
    }

    /// The handle clients submit through.
    pub fn handle(&self) -> SessionHandle {
        self.handle.clone()
    }

    /// The event stream; there is one, so the first call takes it.
    pub fn take_events(&mut self) -> Option<mpsc::UnboundedReceiver<SessionEvent>> {
        self.events.take()
    }

    /// The event sink to build agent `id` with ([`crate::AgentDeps::events`]): its events
    /// leave the session stamped with `id`.
    pub fn sink(&mut self, id: &AgentId) -> Arc<dyn EventSink> {
        let turn = self.turn_cell(id);
        Arc::new(StampingSink {
            agent: id.clone(),
            turn,
            outbox: self.outbox.clone(),
        })
    }

    /// The approval provider to build agent `id` with ([`crate::AgentDeps::approval`]): each
    /// question goes out as [`SessionEvent::ApprovalRequested`] and waits for its answer.
    pub fn approval(&self, id: &AgentId) -> Arc<dyn ApprovalProvider> {
        Arc::new(SessionApproval {
            agent: id.clone(),
            approvals: self.approvals.clone(),
        })
    }

    fn turn_cell(&mut self, id: &AgentId) -> Arc<TurnCell> {
        self.slots
            .entry(id.clone())
            .or_insert_with(|| Slot {
                agent: None,
                turn: Arc::new(TurnCell::default()),
                turns: 0,
                queued: VecDeque::new(),
            })
            .turn
            .clone()
    }

    /// Adds `agent` as `id` (built with this session's [`sink`](Self::sink) for `id`).
    pub fn add(&mut self, id: AgentId, agent: Agent) {
        self.turn_cell(&id);
        if let Some(slot) = self.slots.get_mut(&id) {
            slot.agent = Some(agent);
        }
    }

    /// [`Op::Clear`]: empties idle agent `id`'s history (a running turn owns it: nothing then).
    fn clear(&mut self, id: &AgentId) {
        match self.slots.get_mut(id).and_then(|slot| slot.agent.as_mut()) {
            Some(idle) => idle.clear_history(),
            None => tracing::warn!("{id} is running a turn or gone; nothing cleared"),
        }
    }

    /// Takes agent `id` out of the session (`None` while a turn owns it, or if there is none).
    pub fn remove(&mut self, id: &AgentId) -> Option<Agent> {
        self.slots.get_mut(id).and_then(|slot| slot.agent.take())
    }

    /// Agent `id`, when it is not running a turn.
    pub fn agent(&self, id: &AgentId) -> Option<&Agent> {
        self.slots.get(id).and_then(|slot| slot.agent.as_ref())
    }

    /// What the session's end closed and what failed to close (chapter 20); `None` until
    /// [`run`](Self::run) has returned.
    pub fn close_report(&self) -> Option<&CloseReport> {
        self.close_report.as_ref()
    }

    /// The ids of the agents, in order.
    pub fn agents(&self) -> Vec<AgentId> {
        self.slots.keys().cloned().collect()
    }
}
