//! The session's loop: one `tokio::select!` over submissions, ended turns, inbox wake-ups and
//! the cron timer.
//!
//! This file is the loop and how it reacts: to a submission (`on_op`, Ctrl-C in
//! `on_interrupt`), to a turn that ended (`on_turn_done`) and to the end of the session
//! (`end`). Where the next turn comes from (a schedule that came due, a queued prompt, the turn
//! source) and when the loop wakes by itself are in `work.rs`.

use std::collections::BTreeMap;
use std::sync::Arc;

use agent_core::{AgentId, AgentInbox, Cancellation, RunError};
use agent_cron::Scheduler;
use agent_jobs::JobManager;
use tokio::task::JoinSet;

use super::turn::TurnDone;
use super::work::sleep;
use super::{Decision, EndReason, InterruptFrom, Interrupts, Mode, Op, Session, SessionEvent};

/// Prompts one agent keeps queued while it is busy; more are refused (and said in the log).
const MAX_QUEUED: usize = 100;

/// What started a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum TurnKind {
    /// The person's prompt.
    Prompt,
    /// A schedule that came due (chapter 14), by its id (`s1`), as its inbox item said.
    Scheduled { schedule: String },
    /// Work the session's [`super::TurnSource`] delivered (chapter 15's mail).
    Delivered,
}

/// A turn that runs now.
#[derive(Debug)]
pub(super) struct Running {
    cancel: Cancellation,
    /// A Ctrl-C asked it to stop.
    cancelling: bool,
    /// The session's turn source started it (told if the session ends under it).
    delivered: bool,
}

/// The parts of the agents the loop needs while a turn task owns the agent itself.
pub(super) struct Parts {
    pub(super) inboxes: BTreeMap<AgentId, Arc<AgentInbox>>,
    pub(super) schedulers: Vec<(AgentId, Arc<Scheduler>)>,
    pub(super) jobs: Vec<Arc<JobManager>>,
    pub(super) mcp: Vec<Arc<crate::mcp_hub::McpHub>>,
}

/// What the loop decided after a submission or an ended turn.
enum Next {
    Go,
    End(EndReason),
}

impl Session {
    /// Drives the agents until the session ends, and says why it ended (also sent as
    /// [`SessionEvent::Ended`]). The agents stay in the session (a turn cut short by the end
    /// is dropped with its agent).
    pub async fn run(&mut self, mode: Mode) -> EndReason {
        let mut parts = self.parts();
        // One small task per inbox turns its `Notify` into a message the loop can select on.
        let mut watchers = JoinSet::new();
        for (id, inbox) in &parts.inboxes {
            self.watch(&mut watchers, id, inbox);
        }
        let mut turns: JoinSet<TurnDone> = JoinSet::new();
        let mut running: BTreeMap<AgentId, Running> = BTreeMap::new();
        // One-shot: the prompt's turn has ended (only then does what is due run).
        let mut prompt_done = mode != Mode::OneShot;
        let mut idle_told = false;
        let lead = AgentId::lead();
        let reason = 'run: loop {
            // What was submitted already (before `run`, or while a turn ended) is taken first,
            // so "what is queued" below is everything that was asked.
            while let Ok(op) = self.ops.try_recv() {
                if let Next::End(reason) = self.on_op(op, &mut running) {
                    break 'run reason;
                }
            }
            // An agent that joined during the turn that just ended is in before anyone looks
            // for work (its first message may be all that keeps the session going).
            while let Ok(joined) = self.joins.try_recv() {
                self.join(joined, &mut parts, &mut watchers);
            }
            if prompt_done {
                self.post_due(&parts, &running);
            }
            for (id, kind, text) in self.next_turns(&parts, &running, prompt_done) {
                idle_told = false;
                let cancel = Cancellation::new();
                let delivered = kind == TurnKind::Delivered;
                self.start_turn(&mut turns, &id, kind, text, cancel.clone());
                running.insert(
                    id,
                    Running {
                        cancel,
                        cancelling: false,
                        delivered,
                    },
                );
            }
            if running.is_empty() {
                // Looking for work can make work: a teammate that answers a shutdown writes to
                // an agent looked at before it. A wake-up posted meanwhile means look again.
                let mut woken = false;
                while self.wakes.try_recv().is_ok() {
                    woken = true;
                }
                if woken {
                    continue;
                }
                match mode {
                    // Until the prompt's turn has run (it was submitted before `run`), the
                    // session waits for it; then it ends once nothing runs.
                    Mode::OneShot if prompt_done && !self.busy() => break 'run EndReason::Done,
                    Mode::OneShot => {}
                    Mode::UntilIdle => break 'run EndReason::Done,
                    Mode::Interactive if !idle_told => {
                        idle_told = true;
                        self.outbox.session_event(SessionEvent::Idle);
                    }
                    Mode::Interactive => {}
                }
            } else if mode == Mode::Interactive && !idle_told && !running.contains_key(&lead) {
                // Only teammates work (chapter 15): the person may talk to the lead meanwhile.
                idle_told = true;
                self.outbox.session_event(SessionEvent::Idle);
            }
            let timer = self.timer(&parts, &running);
            let timed = timer.is_some();
            let next = tokio::select! {
                op = self.ops.recv() => match op {
                    Some(op) => self.on_op(op, &mut running),
                    // Every handle is gone (the session keeps one, so this is never seen).
                    None => Next::End(EndReason::Done),
                },
                Some(done) = turns.join_next(), if !turns.is_empty() => match done {
                    Ok(done) => self.on_turn_done(done, &mut running, &parts, &mut prompt_done),
                    // A turn task panicked: its agent is lost; the session cannot go on
                    // pretending it has one.
                    Err(err) => {
                        tracing::error!("a turn task failed: {err}");
                        Next::End(EndReason::Done)
                    }
                },
                Some(_) = self.wakes.recv() => Next::Go,
                Some(joined) = self.joins.recv() => {
                    self.join(joined, &mut parts, &mut watchers);
                    Next::Go
                }
                () = sleep(timer), if timed => Next::Go,
            };
            if let Next::End(reason) = next {
                break 'run reason;
            }
        };
        self.end(reason, turns, running, &parts, watchers).await
    }

    fn parts(&self) -> Parts {
        let mut parts = Parts {
            inboxes: BTreeMap::new(),
            schedulers: Vec::new(),
            jobs: Vec::new(),
            mcp: Vec::new(),
        };
        for (id, slot) in &self.slots {
            let Some(agent) = &slot.agent else { continue };
            parts.inboxes.insert(id.clone(), agent.inbox.clone());
            if let Some(scheduler) = &agent.scheduler {
                parts.schedulers.push((id.clone(), scheduler.clone()));
            }
            if let Some(jobs) = &agent.jobs {
                parts.jobs.push(jobs.clone());
            }
            if let Some(hub) = &agent.mcp {
                parts.mcp.push(hub.clone());
            }
        }
        parts
    }

    fn on_op(&mut self, op: Op, running: &mut BTreeMap<AgentId, Running>) -> Next {
        match op {
            Op::Prompt { agent, text } => {
                match self.slots.get_mut(&agent) {
                    Some(slot) if slot.queued.len() < MAX_QUEUED => slot.queued.push_back(text),
                    Some(_) => tracing::warn!("{agent}: {MAX_QUEUED} prompts queued; dropped one"),
                    None => tracing::warn!("no agent {agent} in this session; prompt dropped"),
                }
                Next::Go
            }
            Op::Approval { id, decision } => {
                self.approvals.answer(id, decision);
                Next::Go
            }
            Op::Interrupt(from) => self.on_interrupt(from, running),
            Op::Cancel(agent) => {
                if let Some(turn) = running.get_mut(&agent) {
                    turn.cancelling = true;
                    turn.cancel.cancel();
                }
                Next::Go
            }
            Op::Clear(agent) => {
                self.clear(&agent);
                Next::Go
            }
            Op::Shutdown(reason) => Next::End(reason),
        }
    }

    fn on_interrupt(
        &mut self,
        from: InterruptFrom,
        running: &mut BTreeMap<AgentId, Running>,
    ) -> Next {
        if self.interrupts == Interrupts::EndSession {
            return Next::End(EndReason::Interrupted);
        }
        // A question waits: the Ctrl-C is for it, not for the turn that asked.
        if let Some(question) = self.approvals.oldest() {
            self.approvals.answer(question, Decision::Cancel);
            return Next::Go;
        }
        let mut cancelled = false;
        for (id, turn) in running.iter_mut().filter(|(_, t)| !t.cancelling) {
            turn.cancelling = true;
            // Told before the turn wakes up, so it comes before the turn's cancelled result.
            self.outbox
                .session_event(SessionEvent::Cancelling { agent: id.clone() });
            turn.cancel.cancel();
            cancelled = true;
        }
        tracing::debug!(?from, cancelled, "interrupt");
        if cancelled {
            Next::Go
        } else {
            // A second Ctrl-C while turns are cancelling, or one at the prompt (the line
            // editor clears a half-typed line itself and sends only the second).
            Next::End(EndReason::Interrupted)
        }
    }

    fn on_turn_done(
        &mut self,
        done: TurnDone,
        running: &mut BTreeMap<AgentId, Running>,
        parts: &Parts,
        prompt_done: &mut bool,
    ) -> Next {
        let TurnDone {
            id,
            agent,
            kind,
            result,
        } = done;
        running.remove(&id);
        if kind == TurnKind::Delivered
            && let Some(source) = &self.source
        {
            source.finished(&id, result.as_deref());
        }
        let result = result.map(|_| ());
        if let Some(slot) = self.slots.get_mut(&id) {
            if let Some(turn) = slot.turn.get() {
                self.outbox.session_event(SessionEvent::TurnEnded {
                    agent: id.clone(),
                    turn,
                    result: result.clone(),
                });
            }
            slot.turn.set(None);
            slot.agent = Some(agent);
        }
        let cancelled = matches!(result, Err(RunError::Cancelled));
        if matches!(kind, TurnKind::Scheduled { .. }) && cancelled {
            // The person stopped a scheduled run: the rest of what came due with it is not run.
            if let Some(inbox) = parts.inboxes.get(&id) {
                while inbox.take_turn().is_some() {}
            }
        }
        if kind == TurnKind::Prompt && !*prompt_done {
            *prompt_done = true;
            return match result {
                Ok(()) => Next::Go,
                Err(RunError::Cancelled) => Next::End(EndReason::Interrupted),
                Err(err) => Next::End(EndReason::TurnFailed(err)),
            };
        }
        Next::Go
    }

    async fn end(
        &mut self,
        reason: EndReason,
        mut turns: JoinSet<TurnDone>,
        running: BTreeMap<AgentId, Running>,
        parts: &Parts,
        mut watchers: JoinSet<()>,
    ) -> EndReason {
        for turn in running.values() {
            turn.cancel.cancel();
        }
        // Dropping a turn's future drops the call it runs, and with it the call's process
        // group: nothing a turn started outlives the session.
        turns.abort_all();
        while turns.join_next().await.is_some() {}
        // What a cut-short turn was delivering goes back to wait for the next session.
        if let Some(source) = &self.source {
            for (id, _) in running.iter().filter(|(_, turn)| turn.delivered) {
                source.abandoned(id);
            }
        }
        watchers.abort_all();
        // Nothing runs a turn now: the resources close in reverse dependency order, every
        // MCP server's whole tree and every job's ended before the session says it ended.
        let report = super::close::close(super::close::Resources {
            mcp: &parts.mcp,
            source: self.source.as_ref(),
            jobs: &parts.jobs,
        })
        .await;
        self.close_report = Some(report);
        self.outbox
            .session_event(SessionEvent::Ended(reason.clone()));
        reason
    }
}
