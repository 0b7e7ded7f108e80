//! Chapter 8: snip, micro and summary compaction.

use std::sync::Arc;

use agent_compaction::{Compactor, OverflowSnip};

use super::{Assembly, Feature};
use crate::{BuildError, Capability};

/// The compactor shapes the conversation before each request; a "prompt too long" answer
/// snips whole groups once and retries.
pub(crate) struct Compaction;

impl Feature for Compaction {
    fn capability(&self) -> Capability {
        Capability::Compaction
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        let compactor = Compactor::new(
            agent.deps.model.clone(),
            agent.deps.workspace.clone(),
            agent.deps.compaction,
        )
        .events(agent.events.clone())
        .on_demand(agent.deps.compact_on_demand.clone());
        agent.runner(move |r| {
            r.processor(Arc::new(compactor))
                .overflow(Arc::new(OverflowSnip { keep_groups: 2 }))
        });
        Ok(())
    }
}
