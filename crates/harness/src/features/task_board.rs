//! Chapter 17: the shared task board, its claims renewed while the holder works and its
//! lost claims fencing the holder's writes (see `board_seat`).

use std::sync::Arc;

use super::{Assembly, Board, Feature, Features, ToolSlot};
use crate::board_seat::{FencedHooks, RenewingModel};
use crate::{BuildError, Capability};

/// The six board tools (`create_task` for the lead only), acting as the agent; the model and
/// the hooks wrapped so every request and call renews the agent's claims and a call made after
/// a claim was lost is refused. Installed right after the hooks, before any feature captures
/// the model or the hooks; a subagent gets neither the tools nor the wrapping (it holds no
/// claim). Without a seat (no board opened) it installs nothing.
pub(crate) struct TaskBoard;

impl Feature for TaskBoard {
    fn capability(&self) -> Capability {
        Capability::TaskBoard
    }

    fn describe(&self, features: &mut Features) {
        features.board = Board::Shared;
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        let Some(seat) = agent.deps.board.clone() else {
            return Ok(());
        };
        let me = agent.deps.id.clone();
        let claims = seat.claims(&me, agent.events.clone());
        agent.deps.model = Arc::new(RenewingModel {
            inner: agent.deps.model.clone(),
            claims: claims.clone(),
        });
        agent.hooks = Arc::new(FencedHooks {
            inner: agent.hooks.clone(),
            claims: claims.clone(),
            open_calls: Default::default(),
        });
        let board = seat.board().clone();
        agent.tools.add(ToolSlot::Board, move |t| {
            agent_board::tools::register_observed(t, board, &me, Some(claims))
        });
        Ok(())
    }
}
