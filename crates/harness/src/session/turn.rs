//! One turn as a task that owns its agent, and what it hands back.

use std::sync::Arc;

use agent_core::{AgentEvent, AgentId, Cancellation, RunError, TurnId};

use super::outbox::Outbox;
use super::run::TurnKind;
use crate::Agent;

/// A turn task's result: the agent handed back.
pub(super) struct TurnDone {
    pub(super) id: AgentId,
    pub(super) agent: Agent,
    pub(super) kind: TurnKind,
    /// The final answer, or why there is none.
    pub(super) result: Result<String, RunError>,
}

/// One turn, as a task that owns the agent: the answer is told the moment the loop returns it,
/// before memory extraction runs.
pub(super) async fn run_turn(
    id: AgentId,
    mut agent: Agent,
    kind: TurnKind,
    text: String,
    cancel: Cancellation,
    outbox: Arc<Outbox>,
    turn: TurnId,
) -> TurnDone {
    let result = match agent.answer(&text, &cancel).await {
        Ok(answered) => {
            let answer = AgentEvent::TurnAnswered {
                text: answered.outcome.final_text.clone(),
            };
            outbox.agent_event(&id, Some(turn), answer);
            let outcome = agent.complete(answered, &cancel).await;
            Ok(outcome.final_text)
        }
        Err(RunError::Cancelled) => {
            outbox.agent_event(&id, Some(turn), AgentEvent::TurnCancelled);
            Err(RunError::Cancelled)
        }
        Err(err) => {
            let failed = AgentEvent::TurnFailed {
                error: err.to_string(),
            };
            outbox.agent_event(&id, Some(turn), failed);
            Err(err)
        }
    };
    TurnDone {
        id,
        agent,
        kind,
        result,
    }
}
