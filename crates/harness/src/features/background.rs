//! Chapter 13: background jobs.

use std::sync::Arc;

use agent_jobs::JobManager;

use super::{Assembly, Feature, ToolSlot};
use crate::{BuildError, Capability};

/// The session's jobs: `bash` hands `run_in_background` commands to them, a finished one posts
/// its notice to the agent's inbox, and dropping the agent kills what still runs. A subagent's
/// `bash` never starts one: it ends before their notices could reach it.
pub(crate) struct Background;

impl Feature for Background {
    fn capability(&self) -> Capability {
        Capability::Background
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        let manager = JobManager::new(agent.deps.workspace.clone(), agent.deps.jobs.clone())
            .inbox(agent.inbox.clone())
            .events(agent.events.clone());
        let jobs = Arc::new(manager);
        let tools = jobs.clone();
        agent.tools.add(ToolSlot::Jobs, move |t| {
            agent_jobs::tools::add_job_tools(t, &tools)
        });
        agent.jobs = Some(jobs);
        Ok(())
    }
}
