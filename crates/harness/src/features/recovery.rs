//! Chapter 11: retries, the fallback model and cut-off replies.

use std::sync::Arc;

use agent_recovery::RecoveringModel;

use super::{Assembly, Feature, Features, Input, ModelFallback};
use crate::session::Interrupts;
use crate::{BuildError, Capability};

/// Every model call of the agent (the loop's, memory's, compaction's, a subagent's) goes
/// through the recovering model. "Prompt too long" stays the loop's: its overflow processor
/// (chapter 8's group-preserving snip) compacts once and retries once.
pub(crate) struct Recovery;

impl Feature for Recovery {
    fn capability(&self) -> Capability {
        Capability::Recovery
    }

    fn describe(&self, features: &mut Features) {
        // A turn can now be cancelled and the session survive it; the line editor's Ctrl-C
        // is what cancels it at a terminal.
        features.interrupts = Interrupts::CancelTurn;
        features.input = Input::LineEditor;
        features.fallback = ModelFallback::Required;
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        let deps = &agent.deps;
        let mut model = RecoveringModel::new(deps.model.clone(), deps.retry, deps.events.clone())
            .configured_max_tokens(deps.max_tokens);
        if let Some(fallback) = &deps.fallback {
            model = model.fallback(fallback.clone());
        }
        agent.deps.model = Arc::new(model);
        Ok(())
    }
}
