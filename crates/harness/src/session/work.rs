//! Where a session's turns come from, and when its loop wakes by itself: what each idle
//! agent runs next (a schedule that came due, else a queued prompt, else what the turn source
//! delivers), how a turn is started, and the cron timer.
//!
//! Apart from the loop (`run.rs`) because it answers the question the loop asks at the top of
//! every round, what runs next and when to look again, while the loop's file is about reacting
//! to what happened (a submission, an ended turn, the end).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use agent_core::{AgentEvent, AgentId, Cancellation, InboxItem, InboxKind, Sender, TurnId};
use agent_cron::Scheduler;
use agent_workspace::Sleep;
use tokio::task::JoinSet;

use super::join::Delivery;
use super::run::{Parts, Running, TurnKind};
use super::turn::{TurnDone, run_turn};
use super::{Session, SessionEvent};

/// The longest the cron timer sleeps before it looks again: a schedule another process added
/// to the durable file, or a wall clock that jumped, is noticed within this.
const TIMER_CAP: Duration = Duration::from_secs(30);
/// How many restored deliveries one look takes per agent before it moves on: a source keeps
/// one record per agent, so one is the most it gives, and the bound keeps a faulty source
/// from holding the loop.
const MAX_RESTORED: usize = 4;

impl Session {
    /// Posts what is due now to the inbox of each idle agent that has a scheduler.
    pub(super) fn post_due(&self, parts: &Parts, running: &BTreeMap<AgentId, Running>) {
        for (id, scheduler) in &parts.schedulers {
            if running.contains_key(id) {
                continue;
            }
            let Some(inbox) = parts.inboxes.get(id) else {
                continue;
            };
            match scheduler.due() {
                Ok(due) => {
                    for run in due {
                        let item = InboxItem {
                            from: Sender::Schedule(run.schedule_id.as_str().to_string()),
                            kind: InboxKind::ScheduledRun,
                            request_id: None,
                            body: run.turn_text(),
                        };
                        if let Err(err) = inbox.post(item) {
                            tracing::warn!("cron: {err}");
                        }
                    }
                }
                Err(error) => self.outbox.session_event(SessionEvent::CronFailed {
                    agent: id.clone(),
                    error: error.to_string(),
                }),
            }
        }
    }

    /// The turns to start now: for each idle agent, a scheduled run first (as between the
    /// person's turns before), else the oldest prompt typed.
    pub(super) fn next_turns(
        &mut self,
        parts: &Parts,
        running: &BTreeMap<AgentId, Running>,
        prompt_done: bool,
    ) -> Vec<(AgentId, TurnKind, String)> {
        let mut start = Vec::new();
        for (id, slot) in &mut self.slots {
            if running.contains_key(id) || slot.agent.is_none() {
                continue;
            }
            let scheduled = parts
                .inboxes
                .get(id)
                .filter(|_| prompt_done)
                .and_then(|inbox| inbox.take_turn());
            if let Some(item) = scheduled {
                // Posted by `post_due` with the schedule as its sender; the id is data there,
                // never read back out of the marker text.
                let schedule = match item.from {
                    Sender::Schedule(schedule) => schedule,
                    Sender::Agent(agent) => agent.to_string(),
                    Sender::Job(job) => job.to_string(),
                };
                start.push((id.clone(), TurnKind::Scheduled { schedule }, item.body));
            } else if let Some(text) = slot.queued.pop_front() {
                start.push((id.clone(), TurnKind::Prompt, text));
            } else if let Some(source) = &self.source {
                // Restored work runs no turn, so the source is asked again; bounded like a
                // mailbox (each restore acknowledges one message).
                for _ in 0..MAX_RESTORED {
                    match source.next(id) {
                        Some(Delivery::Turn(text)) => {
                            start.push((id.clone(), TurnKind::Delivered, text));
                        }
                        // Dropping the agent drops its jobs (and kills what still runs); the
                        // slot stays, empty, so its name is never reused in this session.
                        Some(Delivery::Stop) => slot.agent = None,
                        Some(Delivery::Restore(messages)) => {
                            if let Some(agent) = slot.agent.as_mut() {
                                agent.history.extend(messages.into_iter().map(Arc::new));
                            }
                            continue;
                        }
                        None => {}
                    }
                    break;
                }
            }
        }
        start
    }

    pub(super) fn start_turn(
        &mut self,
        turns: &mut JoinSet<TurnDone>,
        id: &AgentId,
        kind: TurnKind,
        text: String,
        cancel: Cancellation,
    ) {
        let Some(slot) = self.slots.get_mut(id) else {
            return;
        };
        let Some(agent) = slot.agent.take() else {
            return;
        };
        slot.turns += 1;
        let turn = TurnId(slot.turns);
        slot.turn.set(Some(turn));
        if let TurnKind::Scheduled { schedule } = &kind {
            // The marker is the turn text's first line (`Due::turn_text`).
            let marker = text.lines().next().unwrap_or_default().to_string();
            self.outbox.agent_event(
                id,
                Some(turn),
                AgentEvent::ScheduleDue {
                    id: schedule.clone(),
                    marker,
                },
            );
        }
        let outbox = self.outbox.clone();
        let id = id.clone();
        turns.spawn(run_turn(id, agent, kind, text, cancel, outbox, turn));
    }

    /// When the cron timer should wake the loop: at the earliest next fire time of an idle
    /// agent's scheduler, on that scheduler's clock, or after [`TIMER_CAP`] at the latest;
    /// `None` when no idle agent has a scheduler.
    pub(super) fn timer(
        &self,
        parts: &Parts,
        running: &BTreeMap<AgentId, Running>,
    ) -> Option<Sleep> {
        let mut earliest: Option<(SystemTime, &Arc<Scheduler>)> = None;
        let mut any = None;
        for (id, scheduler) in &parts.schedulers {
            if running.contains_key(id) {
                continue;
            }
            any = Some(scheduler);
            // No schedule yet (the model may add one in a turn, which ends the wait), or the
            // file cannot be read: the cap looks again later.
            if let Ok(Some(at)) = scheduler.next_fire_time() {
                let at = SystemTime::from(at);
                if earliest.is_none_or(|(e, _)| at < e) {
                    earliest = Some((at, scheduler));
                }
            }
        }
        let clock = any?.clock().clone();
        let fire = earliest.map(|(at, scheduler)| scheduler.clock().sleep_until_wall(at));
        Some(Box::pin(async move {
            let cap = clock.sleep(TIMER_CAP);
            match fire {
                Some(fire) => {
                    tokio::select! {
                        () = fire => {}
                        () = cap => {}
                    }
                }
                None => cap.await,
            }
        }))
    }
    /// Whether the turn source has work on its way that will wake an agent (chapter 17: a
    /// teammate polling the board): a one-shot session waits for it.
    pub(super) fn busy(&self) -> bool {
        self.source.as_ref().is_some_and(|source| source.busy())
    }
}

pub(super) async fn sleep(timer: Option<Sleep>) {
    match timer {
        Some(timer) => timer.await,
        None => std::future::pending().await,
    }
}
