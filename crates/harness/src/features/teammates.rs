//! Chapter 15: the lead starts teammates.

use super::{Assembly, Feature, Features, Team, ToolSlot};
use crate::team_runtime::TeamSeat;
use crate::{BuildError, Capability};

/// `spawn_teammate` and `list_teammates`, for the lead of a team (a teammate starts nobody:
/// its capabilities leave this one out). The session's side, the teammates as agents and mail
/// as their turns, is `team_runtime`'s.
pub(crate) struct Teammates;

impl Feature for Teammates {
    fn capability(&self) -> Capability {
        Capability::Teammates
    }

    fn describe(&self, features: &mut Features) {
        features.team = Team::Lead;
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        // Only the lead's seat starts teammates; an agent not seated in a team gets no tool.
        if let TeamSeat::Lead(team) = &agent.deps.team {
            let (spawn, list) = (team.clone(), team.clone());
            let protocols = agent.features.protocols;
            agent.tools.add(ToolSlot::Spawn, move |t| {
                spawn.add_spawn_teammate(t, protocols)
            });
            agent
                .tools
                .add(ToolSlot::Roster, move |t| list.add_list_teammates(t));
        }
        Ok(())
    }
}
