//! The team as the session's turn source: an idle agent's next turn is its oldest mail.
//!
//! At least once, never lost: a message is claimed (moved to `processing`) when its turn
//! starts, acknowledged when the turn has ended with it in the history, released when the
//! session ends under the turn, and failed (counted; quarantined the third time) when the turn
//! fails.

use agent_core::RequestId;
use agent_core::{AgentId, Message, RunError};
use agent_team::{
    Decision, MailKind, MailMessage, RequestKind, RequestStatus, Response, TeamRuntime,
    TeammateStatus, TurnState, answer,
};

use super::SessionTeam;
use crate::session::{Delivery, TurnSource};

/// What a teammate's runtime says when it answers a shutdown request itself.
const SHUTDOWN_ANSWER: &str = "Stopped: nothing was running, and no message is held.";

impl TurnSource for SessionTeam {
    fn next(&self, agent: &AgentId) -> Option<Delivery> {
        {
            let mut state = self.state();
            if state.closed || state.in_flight.contains_key(agent) {
                return None;
            }
            if !state.pending.contains(agent) {
                return None;
            }
            if let Some(status) = state.mate(agent).map(|r| r.status)
                && !status.receives_mail()
            {
                state.pending.remove(agent);
                // Stopped by force while its turn ran: the session drops it now.
                return (status == TeammateStatus::ShutDown).then_some(Delivery::Stop);
            }
        }
        // Twice at most: a message an earlier process died under is counted and put back
        // once, then claimed again as new.
        let mut claimed = None;
        for _ in 0..2 {
            let message = match self.mailbox.claim(agent) {
                Ok(Some(message)) => message,
                Ok(None) => {
                    self.state().pending.remove(agent);
                    return None;
                }
                Err(err) => {
                    tracing::warn!("team: cannot read the mailbox of {agent}: {err}");
                    self.state().pending.remove(agent);
                    return None;
                }
            };
            match self.recorded(agent, &message) {
                Recorded::New => {
                    claimed = Some(message);
                    break;
                }
                Recorded::Answered => return Some(self.restore(&message)),
                Recorded::Interrupted => self.interrupted(agent, &message),
            }
        }
        let message = claimed?;
        if let MailKind::Request {
            request: RequestKind::Shutdown,
            request_id,
        } = &message.kind
            && !agent.is_lead()
        {
            let response = Response {
                request_id: request_id.clone(),
                kind: RequestKind::Shutdown,
                from: agent.clone(),
                to: message.from.clone(),
                decision: Decision::Approve,
                feedback: SHUTDOWN_ANSWER.to_string(),
            };
            return Some(self.shut_down(agent, &message, &response));
        }
        let text = message.fragment().into_text();
        let mut state = self.state();
        if let Some(record) = state.mate(agent) {
            record.status = TeammateStatus::Running;
            record.current = Some(message.id.clone());
        }
        drop(state);
        // Recorded before the fragment goes into the history: if the process dies from here
        // on, the next one knows this message reached a turn.
        if let Err(err) = self.journal.started(agent, &message.id) {
            tracing::warn!("team: delivery of {} not recorded: {err}", message.id);
        }
        let mut state = self.state();
        state.in_flight.insert(agent.clone(), message);
        self.save(&state);
        Some(Delivery::Turn(text))
    }

    fn finished(&self, agent: &AgentId, result: Result<&str, &RunError>) {
        let Some(message) = self.state().in_flight.remove(agent) else {
            return;
        };
        let lead = AgentId::lead();
        match result {
            Ok(text) => {
                if !agent.is_lead() {
                    self.set_status(agent, TeammateStatus::Idle, Some(text));
                    // Its answer reaches the lead whether or not it also sent a message; sent
                    // before the turn is recorded as answered, so a crash in between costs a
                    // second turn and result, never a lost one.
                    self.send(agent, &lead, MailKind::Result, text);
                }
                // The turn's end is durable before the ack: a crash in between leaves a
                // message the next session acknowledges without a model call.
                if let Err(err) = self.journal.answered(agent, &message.id) {
                    tracing::warn!("team: answer to {} not recorded: {err}", message.id);
                }
                if let Err(err) = self.mailbox.ack(&message) {
                    tracing::warn!("team: message {} not acknowledged: {err}", message.id);
                }
            }
            Err(RunError::Cancelled) => {
                // Stopped by the person: the message waits for the next wake-up, not now.
                self.forget(agent);
                if let Err(err) = self.mailbox.release(&message) {
                    tracing::warn!("team: message {} not released: {err}", message.id);
                }
                self.state().pending.remove(agent);
                if !agent.is_lead() {
                    self.set_status(agent, TeammateStatus::Idle, None);
                }
            }
            Err(err) => {
                let reason = err.to_string();
                self.forget(agent);
                match self.mailbox.fail(&message, &reason) {
                    Ok(failed) => tracing::info!("team: message {}: {failed:?}", message.id),
                    Err(err) => tracing::warn!("team: message {} not failed: {err}", message.id),
                }
                if agent.is_lead() {
                    return;
                }
                let text = format!("failed: {reason}");
                self.set_status(agent, TeammateStatus::Failed, Some(&text));
                self.send(agent, &lead, MailKind::Result, &text);
            }
        }
    }

    fn abandoned(&self, agent: &AgentId) {
        let Some(message) = self.state().in_flight.remove(agent) else {
            return;
        };
        self.forget(agent);
        if let Err(err) = self.mailbox.release(&message) {
            tracing::warn!("team: message {} not released: {err}", message.id);
        }
    }

    fn ended(&self) {
        let mut state = self.state();
        state.closed = true;
        for mate in &mut state.mates {
            if mate.record.status.receives_mail() {
                mate.record.status = TeammateStatus::ShutDown;
                mate.record.current = None;
            }
        }
        self.save(&state);
    }
}

/// What the delivery record says of a message just claimed.
enum Recorded {
    /// Nothing: deliver it.
    New,
    /// An earlier process completed its turn and died before the ack.
    Answered,
    /// An earlier process put it into a turn and died before the turn ended.
    Interrupted,
}

/// The reason recorded when a process died under a message's turn.
const INTERRUPTED: &str = "the process ended while its turn ran";

impl SessionTeam {
    /// What `agent`'s delivery record says of `message`. A record that cannot be read is
    /// skipped with a warning: the message is delivered again (at least once, never lost).
    fn recorded(&self, agent: &AgentId, message: &MailMessage) -> Recorded {
        match self.journal.load(agent) {
            Ok(Some(record)) if record.id == message.id => match record.turn {
                TurnState::Answered => Recorded::Answered,
                TurnState::Started => Recorded::Interrupted,
            },
            Ok(_) => Recorded::New,
            Err(err) => {
                tracing::warn!("team: the delivery record of {agent} is skipped: {err}");
                Recorded::New
            }
        }
    }

    /// The turn of `message` completed before a crash: it is acknowledged with no turn, and
    /// its fragment goes into the agent's history once (that history died with the process;
    /// the next turns should know what arrived). The answer is not restored: the record
    /// keeps no text an attacker could plant as the model's own words (see `journal`).
    fn restore(&self, message: &MailMessage) -> Delivery {
        if let Err(err) = self.mailbox.ack(message) {
            tracing::warn!("team: message {} not acknowledged: {err}", message.id);
        }
        tracing::info!(
            "team: message {} was answered before a restart; acknowledged with no turn",
            message.id
        );
        Delivery::Restore(vec![Message::user(message.fragment().into_text())])
    }

    /// An earlier process died while `message`'s turn ran. Its history is gone and the turn
    /// may have done part of its work, so acknowledging would lose a message nobody finished
    /// acting on: it is delivered again, in a new turn (a model call). The death counts as a
    /// failed attempt, so a message that kills the process each time (a command that kills
    /// its parent) is quarantined after `MAX_ATTEMPTS` instead of looping forever.
    fn interrupted(&self, agent: &AgentId, message: &MailMessage) {
        match self.mailbox.fail(message, INTERRUPTED) {
            Ok(failed) => tracing::info!("team: message {}: {failed:?}", message.id),
            Err(err) => tracing::warn!("team: message {} not failed: {err}", message.id),
        }
        self.forget(agent);
    }

    /// Forgets `agent`'s delivery record: its message went back to the mailbox, so the next
    /// delivery of it is a new one.
    fn forget(&self, agent: &AgentId) {
        if let Err(err) = self.journal.clear(agent) {
            tracing::warn!("team: the delivery record of {agent} is not cleared: {err}");
        }
    }

    /// The deadline of shutdown `id` has passed: if it is still unanswered, the request is
    /// recorded as forced, the teammate is stopped (its running turn cancelled, its message
    /// put back) and the lead is told.
    pub(super) fn force_if_unanswered(&self, id: &RequestId) {
        let request = match self.requests.get(id) {
            Ok(Some(request)) if request.status == RequestStatus::Pending => request,
            Ok(_) => return,
            Err(err) => {
                tracing::warn!("team: cannot read shutdown {}: {err}", id.0);
                return;
            }
        };
        if let Err(err) = self.requests.force(id, &request.from) {
            tracing::warn!("team: cannot force shutdown {}: {err}", id.0);
            return;
        }
        let teammate = request.to;
        self.set_status(&teammate, TeammateStatus::ShutDown, None);
        self.joiner.cancel(&teammate);
        self.joiner.wake(&teammate);
        let text = format!(
            "stopped by force: {teammate} did not answer shutdown {} within {} s",
            id.0,
            self.shutdown_deadline.as_secs()
        );
        self.send(&teammate, &request.from, MailKind::Result, &text);
    }

    /// A stopped teammate stays stopped (its cancelled turn ends after it was forced).
    fn set_status(&self, agent: &AgentId, status: TeammateStatus, result: Option<&str>) {
        let mut state = self.state();
        if let Some(record) = state.mate(agent) {
            if record.status != TeammateStatus::ShutDown {
                record.status = status;
            }
            record.current = None;
            if let Some(text) = result {
                record.last_result = Some(text.to_string());
            }
        }
        self.save(&state);
    }

    /// A teammate answers a shutdown request without its model: the answer is recorded and
    /// sent, the request acknowledged, and the agent stops.
    fn shut_down(&self, agent: &AgentId, request: &MailMessage, response: &Response) -> Delivery {
        let roster = self.roster();
        match answer(&self.requests, &self.mailbox, &roster, response) {
            Ok(delivered) => {
                if let Some(mail) = delivered.mail {
                    self.mail_sent(&mail.to);
                }
            }
            Err(err) => tracing::warn!("team: {agent} could not answer a shutdown: {err}"),
        }
        if let Err(err) = self.mailbox.ack(request) {
            tracing::warn!("team: message {} not acknowledged: {err}", request.id);
        }
        self.state().pending.remove(agent);
        self.set_status(agent, TeammateStatus::ShutDown, None);
        Delivery::Stop
    }
}
