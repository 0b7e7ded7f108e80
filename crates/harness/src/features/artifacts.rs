//! Chapter 8: large tool results to files.

use std::sync::Arc;

use agent_compaction::ArtifactStore;

use super::{Assembly, Feature};
use crate::{BuildError, Capability};

/// Results over the limit are stored as artifacts and replaced by a preview.
pub(crate) struct Artifacts;

impl Feature for Artifacts {
    fn capability(&self) -> Capability {
        Capability::Artifacts
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        let store = ArtifactStore::new(agent.deps.workspace.clone(), agent.deps.artifacts)
            .events(agent.events.clone());
        agent.runner(move |r| r.shaper(Arc::new(store)));
        Ok(())
    }
}
