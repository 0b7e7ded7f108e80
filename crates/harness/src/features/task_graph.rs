//! Chapter 12: the persistent task list.

use std::sync::Arc;

use agent_prompting::{PromptSection, SectionBody};
use agent_tasks::TaskStore;

use super::{Assembly, Feature, ToolSlot};
use crate::prompts::SectionSlot;
use crate::{BuildError, Capability};

/// The task list's tools and the `## tasks` section, for the main agent only: a subagent works
/// on one delegated job, not on the backlog.
pub(crate) struct TaskGraph;

impl Feature for TaskGraph {
    fn capability(&self) -> Capability {
        Capability::TaskGraph
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        let store = Arc::new(TaskStore::open(&agent.deps.workspace));
        let tools = store.clone();
        agent
            .tools
            .add(ToolSlot::Tasks, move |t| agent_tasks::register(t, &tools));
        // Read from disk before every request: another process (or `agent-tutorial tasks`)
        // may have changed the list. A store that cannot be read leaves the section out.
        let open_tasks = move || match store.snapshot() {
            Ok(snapshot) => agent_tasks::render::prompt_block(&snapshot.tasks),
            Err(err) => {
                tracing::warn!("tasks: cannot list open tasks for the prompt: {err}");
                None
            }
        };
        agent.sections.push(PromptSection::new(
            "tasks",
            SectionSlot::Tasks.order(),
            SectionBody::Live(Arc::new(open_tasks)),
        ));
        Ok(())
    }
}
