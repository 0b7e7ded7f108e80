//! The plan gate (chapter 16) as a permission rule: while a teammate's latest plan is not
//! approved, it may look, talk and submit a plan, nothing else. A rule, not a hope: the call
//! is denied before its handler runs, and approval only stops this rule objecting (the
//! ordinary rules still decide).

use std::sync::Arc;

use agent_core::{Behavior, PreparedCall, ToolEffect, Verdict};
use agent_policy::{PermissionRule, RuleError};
use agent_protocol::{AgentId, RequestId};

use crate::requests::{RequestStatus, RequestStore};
use crate::tools::{SEND_MESSAGE, SUBMIT_PLAN};

/// The rule's name in verdicts and the audit log.
pub const PLAN_GATE: &str = "plan_gate";

/// Whether a teammate must have a plan approved before its first step that changes anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanRequirement {
    /// `spawn_teammate{require_plan: true}`: gated from the start.
    Required,
    /// Gated only while a plan it chose to submit is not approved.
    Optional,
}

/// Where the gate stands for one teammate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateState {
    /// Nothing is held back by this rule.
    Open,
    /// A plan is required and none was submitted yet.
    NoPlan,
    /// The latest plan waits for review.
    Pending(RequestId),
    /// The latest plan was rejected (a new `submit_plan` is needed).
    Rejected(RequestId),
    /// The latest plan expired unreviewed.
    Expired(RequestId),
}

/// The rule for one teammate.
#[derive(Debug, Clone)]
pub struct PlanGate {
    requests: Arc<RequestStore>,
    teammate: AgentId,
    requirement: PlanRequirement,
}

impl PlanGate {
    /// The gate of `teammate`, reading its plans from `requests`.
    pub fn new(
        requests: Arc<RequestStore>,
        teammate: AgentId,
        requirement: PlanRequirement,
    ) -> Self {
        Self {
            requests,
            teammate,
            requirement,
        }
    }

    /// Where the gate stands now (read from the store, so a review by another process
    /// counts at once).
    pub fn state(&self) -> Result<GateState, crate::requests::RequestError> {
        let Some(plan) = self.requests.latest_plan(&self.teammate)? else {
            return Ok(match self.requirement {
                PlanRequirement::Required => GateState::NoPlan,
                PlanRequirement::Optional => GateState::Open,
            });
        };
        Ok(match plan.status {
            RequestStatus::Approved => GateState::Open,
            RequestStatus::Rejected => GateState::Rejected(plan.id),
            RequestStatus::Expired => GateState::Expired(plan.id),
            // A superseded plan is never the latest, and only a shutdown can be forced; if a
            // file says otherwise, stay closed.
            RequestStatus::Pending | RequestStatus::Superseded | RequestStatus::Forced => {
                GateState::Pending(plan.id)
            }
        })
    }

    /// Whether `call` passes whatever the plan: read-only tools, `send_message`,
    /// `submit_plan`.
    pub fn exempt(call: &PreparedCall) -> bool {
        call.effect == ToolEffect::Read || call.name == SEND_MESSAGE || call.name == SUBMIT_PLAN
    }
}

impl PermissionRule for PlanGate {
    fn name(&self) -> &str {
        PLAN_GATE
    }

    fn evaluate(&self, call: &PreparedCall) -> Result<Verdict, RuleError> {
        if Self::exempt(call) {
            return Ok(Verdict::passthrough(PLAN_GATE));
        }
        let why = match self.state().map_err(RuleError::custom)? {
            GateState::Open => return Ok(Verdict::passthrough(PLAN_GATE)),
            GateState::NoPlan => {
                "a plan must be approved before this; call submit_plan first".to_string()
            }
            GateState::Pending(id) => {
                format!(
                    "plan {id} waits for the lead's review; only read-only tools, send_message and submit_plan until it is approved",
                    id = id.0
                )
            }
            GateState::Rejected(id) => format!(
                "plan {id} was rejected; submit a new plan with submit_plan",
                id = id.0
            ),
            GateState::Expired(id) => format!(
                "plan {id} expired unreviewed; submit it again with submit_plan",
                id = id.0
            ),
        };
        Ok(Verdict::new(Behavior::Deny, PLAN_GATE, why))
    }
}
