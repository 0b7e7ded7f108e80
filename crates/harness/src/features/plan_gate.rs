//! Chapter 16: a teammate's changes wait for an approved plan.

use std::sync::Arc;

use super::{Assembly, Feature};
use crate::team_runtime::TeamSeat;
use crate::{BuildError, Capability};

/// The plan gate, one more rule of chapter 3's pipeline for a teammate: a rule, not a hope,
/// so a call it denies never reaches its handler. Installed before the policy feature, which
/// builds the pipeline with it after its own rules (a deny wins wherever it stands); without
/// a pipeline (before chapter 3) there is nothing to add it to.
pub(crate) struct PlanGate;

impl Feature for PlanGate {
    fn capability(&self) -> Capability {
        Capability::PlanGate
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        // The lead reviews plans and is never gated.
        if let TeamSeat::Teammate { tools, plan } = &agent.deps.team {
            let gate =
                agent_team::PlanGate::new(tools.requests.clone(), agent.deps.id.clone(), *plan);
            agent.rules.push(Arc::new(gate));
        }
        Ok(())
    }
}
