use std::sync::Arc;

use agent_core::{
    AgentEvent, CallSummary, CollectingSink, Events, GateDecision, PermissionDecision,
    PermissionGate, PreparedCall, ToolEffect,
};
use agent_policy::{
    Approval, ApprovalError, ApprovalProvider, ApprovalRequest, Behavior, PermissionPipeline,
    PermissionRule, RuleError, RuleFn, StaticApproval, Verdict, merge,
};
use serde_json::json;

/// The decisions the pipeline told, in order (what the audit log writes).
fn decisions(events: &CollectingSink) -> Vec<PermissionDecision> {
    events
        .events()
        .into_iter()
        .filter_map(|event| match event {
            AgentEvent::PermissionDecided(decision) => Some(decision),
            _ => None,
        })
        .collect()
}

fn v(behavior: Behavior, source: &str) -> Verdict {
    Verdict::new(behavior, source, format!("{source} says so"))
}

#[test]
fn merge_is_deny_over_ask_over_allow_and_passthrough_alone_allows() {
    use Behavior::*;
    let cases = [
        (vec![v(Allow, "a"), v(Ask, "b"), v(Deny, "c")], v(Deny, "c")),
        (
            vec![v(Allow, "a"), v(Ask, "b"), v(Passthrough, "p")],
            v(Ask, "b"),
        ),
        (
            vec![v(Passthrough, "p"), v(Allow, "a"), v(Allow, "a2")],
            v(Allow, "a"),
        ),
        (vec![v(Deny, "c1"), v(Deny, "c2")], v(Deny, "c1")),
        (
            vec![v(Passthrough, "p")],
            Verdict::new(Allow, "default", "no rule objected"),
        ),
        (vec![], Verdict::new(Allow, "default", "no rule objected")),
    ];
    for (verdicts, expected) in cases {
        assert_eq!(merge(&verdicts), expected);
    }
}

fn call() -> PreparedCall {
    PreparedCall {
        call_id: "c1".into(),
        name: "bash".into(),
        arguments: json!({"command": "ls"}),
        effect: ToolEffect::Execute,
        summary: CallSummary::text("ls"),
    }
}

fn rule(behavior: Behavior) -> Arc<dyn PermissionRule> {
    Arc::new(RuleFn::new("r", move |_| {
        Ok(Verdict::new(behavior, "r", "because"))
    }))
}

#[tokio::test]
async fn a_failing_rule_denies() {
    let audit = Arc::new(CollectingSink::new());
    let pipeline = PermissionPipeline::new()
        .events(Events::new(audit.clone()))
        .rule(rule(Behavior::Allow))
        .rule(Arc::new(RuleFn::new("broken", |_| {
            Err(RuleError::custom("cannot parse"))
        })))
        .approval(Arc::new(StaticApproval::ApproveAll));
    assert_eq!(
        pipeline.check(&call(), &[]).await,
        GateDecision::Deny {
            reason: "rule `broken` failed, so the call is denied: cannot parse (by broken)".into()
        }
    );
    assert_eq!(decisions(&audit).len(), 1);
}

struct FailingApproval;

#[async_trait::async_trait]
impl ApprovalProvider for FailingApproval {
    async fn approve(&self, _request: &ApprovalRequest) -> Result<Approval, ApprovalError> {
        Err(ApprovalError::failed("terminal closed"))
    }
}

#[tokio::test]
async fn ask_fails_closed() {
    let none = PermissionPipeline::new().rule(rule(Behavior::Ask));
    assert_eq!(
        none.check(&call(), &[]).await,
        GateDecision::Deny {
            reason: "because; no approval provider, so denied (by r)".into()
        }
    );
    let failing = PermissionPipeline::new()
        .rule(rule(Behavior::Ask))
        .approval(Arc::new(FailingApproval));
    assert_eq!(
        failing.check(&call(), &[]).await,
        GateDecision::Deny {
            reason: "because; approval failed (terminal closed), so denied (by r)".into()
        }
    );
    let declined = PermissionPipeline::new()
        .rule(rule(Behavior::Ask))
        .approval(Arc::new(StaticApproval::DenyAll));
    assert_eq!(
        declined.check(&call(), &[]).await,
        GateDecision::Deny {
            reason: "because; the user declined (by r)".into()
        }
    );
    let approved = PermissionPipeline::new()
        .rule(rule(Behavior::Ask))
        .approval(Arc::new(StaticApproval::ApproveAll));
    assert_eq!(approved.check(&call(), &[]).await, GateDecision::Allow);
}

#[tokio::test]
async fn hook_hints_take_part_in_the_merge() {
    let audit = Arc::new(CollectingSink::new());
    let pipeline = PermissionPipeline::new()
        .events(Events::new(audit.clone()))
        .rule(rule(Behavior::Allow));
    let hint = Verdict::new(
        Behavior::Deny,
        "hook:guard",
        "recommended by a PreToolUse hook",
    );
    assert_eq!(
        pipeline.check(&call(), &[hint]).await,
        GateDecision::Deny {
            reason: "recommended by a PreToolUse hook (by hook:guard)".into()
        }
    );
    let entry = &decisions(&audit)[0];
    assert_eq!(
        (entry.merged, entry.source.as_str(), entry.allowed),
        (Behavior::Deny, "hook:guard", false)
    );
}
