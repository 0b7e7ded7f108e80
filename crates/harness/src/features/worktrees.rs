//! Chapter 18: each claimed task in its own git worktree.

use std::sync::Arc;

use super::{Assembly, Feature, Features, ToolSlot, WorktreeUse};
use crate::routing::Router;
use crate::{BuildError, Capability};

/// The lead gets `create_worktree`, `keep_worktree` and `remove_worktree`; a teammate gets
/// no tool but a [`Router`]: its `bash` and file tools (installed after this) run each call in
/// the worktree of the task it holds. Without worktrees or a board (nothing opened) it
/// installs nothing. Subagents are the lead's only (a teammate has none), and the lead always
/// works in the repository's root.
pub(crate) struct Worktrees;

impl Feature for Worktrees {
    fn capability(&self) -> Capability {
        Capability::Worktrees
    }

    fn describe(&self, features: &mut Features) {
        features.worktrees = WorktreeUse::On;
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        let (Some(trees), Some(seat)) = (agent.deps.worktrees.clone(), agent.deps.board.clone())
        else {
            return Ok(());
        };
        if agent.deps.id.is_lead() {
            let board = seat.board().clone();
            agent.tools.add(ToolSlot::Worktrees, move |t| {
                agent_worktree::tools::register(t, trees, board)
            });
        } else {
            agent.route = Some(Arc::new(Router {
                root: agent.deps.workspace.clone(),
                trees,
                seat,
                me: agent.deps.id.clone(),
            }));
        }
        Ok(())
    }
}
