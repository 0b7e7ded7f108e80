//! Chapter 14: scheduled prompts.

use std::sync::Arc;

use agent_cron::Scheduler;

use super::{Assembly, Feature, ToolSlot};
use crate::{BuildError, Capability};

/// The schedule tools and the scheduler the session runs due prompts from, for the main agent
/// only (a subagent ends with its task; the session's scheduled turns talk to the main agent).
pub(crate) struct Cron;

impl Feature for Cron {
    fn capability(&self) -> Capability {
        Capability::Cron
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        let scheduler = Scheduler::new(&agent.deps.workspace, agent.deps.cron_clock.clone())
            .trust(agent.deps.trust.clone());
        let scheduler = Arc::new(scheduler);
        let tools = scheduler.clone();
        agent.tools.add(ToolSlot::Cron, move |t| {
            agent_cron::add_cron_tools(t, &tools)
        });
        agent.scheduler = Some(scheduler);
        Ok(())
    }
}
