//! Chapter 17: an idle teammate with no mail takes the board's oldest ready task.
//!
//! - **Order.** Mail and protocol requests come first: the session asks the mailbox before
//!   the board, so a task waits while mail is there. The plan gate comes before any claim: a
//!   teammate whose gate is closed (a plan required and not approved) claims nothing.
//! - **The poll.** When a teammate is idle with no mail, one poller task per teammate claims
//!   the oldest ready task for it. Finding none, it waits for a wake-up: a board change made in
//!   this session (a task created, completed or released), the poll interval (another process's
//!   changes, a lease running out) or the team's own stop signal (mail, a shutdown, the end).
//! - **The turn.** What it claimed is adopted as the teammate's own claim (renewed and fenced
//!   like one made with `claim_task`) and becomes its next turn's input: one `<board-task>`
//!   fragment, subject and description escaped. A task turn's answer is not mailed to the
//!   lead: the lead sees the claim and the completion as board events. A turn that ends with
//!   the claim still held gives the task back (released with a reason) instead of keeping it
//!   until the lease runs out, tells the lead, and the teammate takes no other task until its
//!   next message (no claim-give-back loop with a model that never completes).
//! - **The idle limit.** A teammate that finds no open task at all (nothing pending, nothing
//!   in progress) for the idle limit stops polling, tells the lead once, and stays `idle`:
//!   new mail wakes it as before, and after that turn it polls again. While open tasks exist
//!   (held by others, or waiting for them), it keeps waiting: they end or their leases do.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::Notify;

use agent_board::{BoardError, Claim, ClaimTarget, Status, Task, TaskBoard};
use agent_core::{AgentId, RunError};
use agent_team::{GateState, MailKind, PlanRequirement, TeammateStatus};

use super::SessionTeam;
use crate::board_seat::BoardSeat;
use crate::session::{Delivery, TurnSource};

/// How an idle teammate polls the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AutonomyConfig {
    /// How long a poll waits for a wake-up before it looks again.
    pub poll: Duration,
    /// How long a teammate may find no open task before it stops polling and tells the lead.
    pub idle_limit: Duration,
}

impl Default for AutonomyConfig {
    fn default() -> Self {
        Self {
            poll: Duration::from_secs(2),
            idle_limit: Duration::from_secs(60),
        }
    }
}

/// What one poll found.
enum Found {
    /// A claim, with the task as it is now (boxed: the other variants are empty).
    Claimed(Box<(Task, Claim)>),
    /// No ready task, but open ones: wait for them.
    Waiting,
    /// No open task at all.
    Nothing,
}

impl SessionTeam {
    /// Switches autonomy on (chapter 17) with `config`, or off.
    pub fn set_autonomy(&self, config: Option<AutonomyConfig>) {
        self.state().autonomy = config;
    }

    /// Sets the idle limit, when autonomy is on (a one-shot run has no person to add tasks
    /// later: its teammates rest as soon as nothing is open).
    pub fn set_idle_limit(&self, limit: Duration) {
        if let Some(config) = &mut self.state().autonomy {
            config.idle_limit = limit;
        }
    }

    /// `agent` is idle and has no mail: its claimed task if one waits, else a poll starts.
    fn idle(&self, agent: &AgentId) -> Option<Delivery> {
        if agent.is_lead() {
            return None;
        }
        let seat = self.board.clone()?;
        let mut state = self.state();
        if state.closed {
            return None;
        }
        let config = state.autonomy?;
        let record = state.mate(agent)?;
        if record.status != TeammateStatus::Idle {
            return None;
        }
        if let Some((task, claim)) = state.ready.remove(agent) {
            if let Some(record) = state.mate(agent) {
                record.status = TeammateStatus::Running;
            }
            let text = agent_board::tools::task_fragment(&task, &claim).into_text();
            state.tasks.insert(agent.clone(), claim);
            self.save(&state);
            return Some(Delivery::Turn(text));
        }
        // The lead's first message is a teammate's first turn; it polls only after it.
        if !state.started.contains(agent)
            || state.polling.contains(agent)
            || state.resting.contains_key(agent)
            || state.parked.contains(agent)
        {
            return None;
        }
        let plan = state.plans.get(agent).copied()?;
        drop(state);
        if !self.gate_open(agent, plan) {
            return None;
        }
        self.state().polling.insert(agent.clone());
        let (me, agent, stop) = (self.me.clone(), agent.clone(), self.stop_polls.clone());
        tokio::spawn(poll(me, seat, stop, agent, config));
        None
    }

    /// Whether `agent`'s plan gate lets it change things (a closed gate claims nothing).
    fn gate_open(&self, agent: &AgentId, plan: PlanRequirement) -> bool {
        let gate = agent_team::PlanGate::new(self.requests.clone(), agent.clone(), plan);
        match gate.state() {
            Ok(GateState::Open) => true,
            Ok(_) => false,
            Err(err) => {
                tracing::warn!("team: the plan gate of {agent} cannot be read: {err}");
                false
            }
        }
    }

    /// Mail arrived for `agent` (or a shutdown, or the end): its poll stops and it may rest
    /// no longer.
    fn interrupt_poll(&self, agent: &AgentId) {
        let mut state = self.state();
        state.polling.remove(agent);
        state.resting.remove(agent);
        state.parked.remove(agent);
        drop(state);
        self.stop_polls.notify_waiters();
    }

    /// Whether a poll is running, a resting one has a board change to look at, a claimed task
    /// waits for its teammate or an unfinished one is being given back: the session is not
    /// done while one is.
    fn polling(&self) -> bool {
        let generation = self.board.as_ref().map_or(0, BoardSeat::generation);
        let state = self.state();
        !state.closed
            && (!state.polling.is_empty()
                || !state.ready.is_empty()
                || !state.releasing.is_empty()
                || state.resting.values().any(|seen| *seen < generation))
    }

    /// The task turn of `agent` on `claim` ended.
    fn task_finished(&self, agent: &AgentId, claim: Claim, result: Result<&str, &RunError>) {
        let (status, text) = match result {
            Ok(text) => (TeammateStatus::Idle, Some(text.to_string())),
            Err(RunError::Cancelled) => (TeammateStatus::Idle, None),
            Err(err) => (TeammateStatus::Failed, Some(format!("failed: {err}"))),
        };
        {
            let mut state = self.state();
            if let Some(record) = state.mate(agent) {
                // A teammate stopped by force meanwhile stays stopped.
                if record.status != TeammateStatus::ShutDown {
                    record.status = status;
                }
                record.current = None;
                if let Some(text) = &text {
                    record.last_result = Some(text.clone());
                }
            }
            self.save(&state);
        }
        if status == TeammateStatus::Failed
            && let Some(text) = &text
        {
            self.send(agent, &AgentId::lead(), MailKind::Result, text);
        }
        let Some(seat) = self.board.clone() else {
            return;
        };
        // Still held when the turn is over: nobody works on it any more, so it goes back now
        // rather than when the lease runs out. The teammate takes no other task until its next
        // message: a model that does not complete tasks would otherwise claim, give back and
        // claim again without end.
        if seat.live(agent).iter().any(|(task, _)| *task == claim.task) {
            let mut state = self.state();
            state.parked.insert(agent.clone());
            // The session waits for the release (see `polling`).
            state.releasing.insert(agent.clone());
            drop(state);
            let text = format!(
                "gave back task {}: the turn ended without complete_task; taking no other task until your next message",
                claim.task
            );
            self.send(agent, &AgentId::lead(), MailKind::Result, &text);
            let (me, agent) = (self.me.clone(), agent.clone());
            tokio::spawn(async move {
                let reason = "the turn ended without complete_task";
                let released = seat
                    .board()
                    .release(&agent, claim.task, &claim.token, reason)
                    .await;
                match released {
                    Ok(_) => seat.changed(),
                    Err(err) => tracing::info!("team: {agent} keeps task {}: {err}", claim.task),
                }
                if let Some(team) = me.upgrade() {
                    team.state().releasing.remove(&agent);
                    // The loop looks again (a one-shot session may end now).
                    team.joiner.wake(&agent);
                }
            });
        }
    }
}

/// Claims the oldest ready task for `agent` until one is found or the poll is stopped. Past
/// the idle limit with no open task, the teammate rests: it tells the lead once and from then
/// on looks only when the board changes (a task created, completed or released), no longer
/// on a timer, and no longer keeps a one-shot session going.
async fn poll(
    team: Weak<SessionTeam>,
    seat: BoardSeat,
    stop: Arc<Notify>,
    agent: AgentId,
    config: AutonomyConfig,
) {
    let mut idle = Duration::ZERO;
    let mut rested = false;
    loop {
        // Registered before looking, so a change or a stop while we look wakes the wait below.
        let changed = seat.changes().notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        let stopped = stop.notified();
        tokio::pin!(stopped);
        stopped.as_mut().enable();
        match team.upgrade() {
            Some(team) if team.still_polling(&agent) => {}
            _ => return,
        }
        let seen = seat.generation();
        match look(seat.board().as_ref(), &agent).await {
            Ok(Found::Claimed(found)) => {
                let (task, claim) = *found;
                seat.adopt(&task, &claim);
                if let Some(team) = team.upgrade() {
                    team.claimed(&agent, task, claim);
                }
                return;
            }
            Ok(Found::Waiting) => {
                idle = Duration::ZERO;
                // Open tasks again: back to polling on the timer (their holders may die).
                if rested && let Some(team) = team.upgrade() {
                    rested = !team.unrest(&agent);
                }
            }
            Ok(Found::Nothing) if !rested && idle >= config.idle_limit => {
                rested = true;
                if let Some(team) = team.upgrade() {
                    team.rest(&agent, config.idle_limit, seen);
                }
            }
            Ok(Found::Nothing) => {
                if rested && let Some(team) = team.upgrade() {
                    team.rested(&agent, seen);
                }
            }
            Err(err) => tracing::warn!("team: {agent} could not look at the board: {err}"),
        }
        if rested {
            tokio::select! {
                () = &mut changed => {}
                () = &mut stopped => {}
            }
        } else {
            tokio::select! {
                () = &mut changed => {}
                () = &mut stopped => {}
                () = tokio::time::sleep(config.poll) => idle += config.poll,
            }
        }
    }
}

/// One look at the board for `agent`.
async fn look(board: &dyn TaskBoard, agent: &AgentId) -> Result<Found, BoardError> {
    match board.claim(agent, ClaimTarget::OldestReady).await {
        Ok(claim) => {
            let task = board.get(claim.task).await?;
            Ok(Found::Claimed(Box::new((task, claim))))
        }
        Err(BoardError::NothingReady) => {
            let open = board
                .list()
                .await?
                .iter()
                .any(|t| matches!(t.status, Status::Pending | Status::InProgress));
            Ok(if open { Found::Waiting } else { Found::Nothing })
        }
        // Another claimer took it in this instant: look again after the wait.
        Err(err) if err.kind() == agent_board::ErrorKind::Refused => Ok(Found::Waiting),
        Err(err) => Err(err),
    }
}

impl SessionTeam {
    fn still_polling(&self, agent: &AgentId) -> bool {
        let state = self.state();
        !state.closed && (state.polling.contains(agent) || state.resting.contains_key(agent))
    }

    /// The poll of `agent` claimed `task`: it waits for the teammate's next turn.
    fn claimed(&self, agent: &AgentId, task: Task, claim: Claim) {
        let mut state = self.state();
        state.polling.remove(agent);
        state.resting.remove(agent);
        state.ready.insert(agent.clone(), (task, claim));
        drop(state);
        self.joiner.wake(agent);
    }

    /// `agent` found no open task for `limit`: it rests (looks only when the board changes)
    /// and tells the lead once.
    fn rest(&self, agent: &AgentId, limit: Duration, seen: u64) {
        if !self.state().polling.contains(agent) {
            return;
        }
        // Sent while the poll still counts as running: a one-shot session that looks in
        // between sees the wake-up of this mail before it sees no poll left.
        let text = format!(
            "idle: no open task on the board for {} s; waiting for a message",
            limit.as_secs()
        );
        self.send(agent, &AgentId::lead(), MailKind::Result, &text);
        let mut state = self.state();
        if state.polling.remove(agent) {
            state.resting.insert(agent.clone(), seen);
        }
    }

    /// A resting `agent` looked at the board as of change `seen` and found nothing; the
    /// session, which waited for that look, is told to look again.
    fn rested(&self, agent: &AgentId, seen: u64) {
        if let Some(last) = self.state().resting.get_mut(agent) {
            *last = seen;
        }
        self.joiner.wake(agent);
    }

    /// A resting `agent` found open tasks: it polls again. Whether it was resting.
    fn unrest(&self, agent: &AgentId) -> bool {
        let mut state = self.state();
        if state.resting.remove(agent).is_none() {
            return false;
        }
        state.polling.insert(agent.clone());
        true
    }
}

/// The team as the session's turn source once the board is there: chapter 15's mail first
/// (`delivery`), then the board. Without autonomy (no board, or chapter 16's team) every call
/// is the mailbox's, unchanged.
#[derive(Debug)]
pub(super) struct Source(pub(super) Arc<SessionTeam>);

impl TurnSource for Source {
    fn next(&self, agent: &AgentId) -> Option<Delivery> {
        match self.0.next(agent) {
            // Mail first: a teammate's poll stops while it reads it (or stops for good).
            Some(delivery) => {
                self.0.interrupt_poll(agent);
                Some(delivery)
            }
            None => self.0.idle(agent),
        }
    }

    fn finished(&self, agent: &AgentId, result: Result<&str, &RunError>) {
        let task = self.0.state().tasks.remove(agent);
        match task {
            Some(claim) => self.0.task_finished(agent, claim, result),
            None => {
                self.0.state().started.insert(agent.clone());
                self.0.finished(agent, result);
            }
        }
    }

    fn abandoned(&self, agent: &AgentId) {
        // A task turn cut short by the end: its claim runs out with its lease.
        if self.0.state().tasks.remove(agent).is_none() {
            self.0.abandoned(agent);
        }
    }

    fn busy(&self) -> bool {
        self.0.polling()
    }

    fn ended(&self) {
        self.0.ended();
        self.0.stop_polls.notify_waiters();
    }
}
