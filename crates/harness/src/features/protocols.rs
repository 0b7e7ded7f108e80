//! Chapter 16: shutdown and plan approval, as durable requests answered by id.

use super::{Assembly, Feature, Features, ToolSlot};
use crate::team_runtime::TeamSeat;
use crate::{BuildError, Capability};

/// The lead's `request_shutdown` and `review_plan`, a teammate's `submit_plan`; and
/// `spawn_teammate`'s `require_plan` (told through [`Features::protocols`]).
pub(crate) struct Protocols;

impl Feature for Protocols {
    fn capability(&self) -> Capability {
        Capability::Protocols
    }

    fn describe(&self, features: &mut Features) {
        features.protocols = agent_team::Protocols::On;
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        match &agent.deps.team {
            TeamSeat::Alone => {}
            TeamSeat::Lead(team) => {
                let team = team.clone();
                agent
                    .tools
                    .add(ToolSlot::Protocols, move |t| team.add_lead_protocols(t));
            }
            TeamSeat::Teammate { tools, .. } => {
                let (team, me) = (tools.clone(), agent.deps.id.clone());
                agent
                    .tools
                    .add(ToolSlot::Protocols, move |t| team.add_submit_plan(t, me));
            }
        }
        Ok(())
    }
}
