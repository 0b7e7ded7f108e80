//! Chapter 15: the durable mailboxes the agents of a team talk through.

use super::{Assembly, Feature, ToolSlot};
use crate::team_runtime::TeamSeat;
use crate::{BuildError, Capability};

/// `send_message`, sending as the agent (the lead, or the teammate its deps name). Delivery,
/// an idle agent's next turn being its oldest message, is the session's (`team_runtime`).
pub(crate) struct Mailbox;

impl Feature for Mailbox {
    fn capability(&self) -> Capability {
        Capability::Mailbox
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        let (team, me) = match &agent.deps.team {
            TeamSeat::Alone => return Ok(()),
            TeamSeat::Lead(team) => (team.clone(), agent_core::AgentId::lead()),
            TeamSeat::Teammate { tools, .. } => (tools.clone(), agent.deps.id.clone()),
        };
        agent
            .tools
            .add(ToolSlot::Mail, move |t| team.add_send_message(t, me));
        Ok(())
    }
}
