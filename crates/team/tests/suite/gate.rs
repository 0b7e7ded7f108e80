//! Every state of the plan gate, through a real agent loop: a scripted model calls a tool
//! that writes and one that reads; the registry's handlers count their calls and the gate is
//! a rule of the real permission pipeline.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::{
    AgentRunner, Behavior, FixedPrompt, Message, ModelReply, PreparedCall, ToolCall, ToolEffect,
    ToolFailure, ToolHandler, ToolRegistry, ToolSpec,
};
use agent_policy::{EffectRule, PermissionPipeline};
use agent_protocol::{AgentId, RequestId};
use agent_team::{
    Decision, GateState, NewRequest, PlanGate, PlanRequirement, RequestKind, Response,
};
use agent_test_support::ScriptedModel;
use async_trait::async_trait;
use serde_json::json;

use super::{Fixture, fixture, id};

#[derive(Default)]
struct Counter(AtomicUsize);

#[async_trait]
impl ToolHandler for Counter {
    async fn handle(&self, _call: &PreparedCall) -> Result<String, ToolFailure> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok("ran".into())
    }
}

fn spec(name: &str, effect: ToolEffect) -> ToolSpec {
    ToolSpec::new(
        name,
        "test tool",
        effect,
        json!({"type": "object", "properties": {}}),
    )
}

/// What one turn did: calls per tool (in `TOOLS` order) and each call's result.
#[derive(Debug, PartialEq)]
struct Turn {
    calls: Vec<usize>,
    results: Vec<String>,
}

/// Tool names and effects: a writer, a runner, a reader, and the two tools the gate lets
/// through by name (given a write effect here, so only their name can let them pass).
const TOOLS: [(&str, ToolEffect); 5] = [
    ("write_file", ToolEffect::Write),
    ("bash", ToolEffect::Execute),
    ("read_file", ToolEffect::Read),
    ("send_message", ToolEffect::Write),
    ("submit_plan", ToolEffect::Write),
];

async fn turn(gate: PlanGate, extra: Option<EffectRule>) -> Turn {
    let counters: Vec<Arc<Counter>> = TOOLS.iter().map(|_| Arc::default()).collect();
    let mut builder = ToolRegistry::builder();
    for ((name, effect), counter) in TOOLS.iter().zip(&counters) {
        builder = builder.tool(spec(name, *effect), counter.clone());
    }
    let registry = Arc::new(builder.build().unwrap());
    let mut pipeline = PermissionPipeline::new().rule(Arc::new(gate));
    if let Some(rule) = extra {
        pipeline = pipeline.rule(Arc::new(rule));
    }
    let calls: Vec<ToolCall> = TOOLS
        .iter()
        .enumerate()
        .map(|(i, (name, _))| ToolCall {
            id: format!("c{i}"),
            name: name.to_string(),
            arguments: "{}".into(),
        })
        .collect();
    let model = Arc::new(ScriptedModel::replies([
        ModelReply::tool_calls(calls),
        ModelReply::text("done"),
    ]));
    let runner = AgentRunner::builder(
        model.clone(),
        registry,
        Arc::new(FixedPrompt("You are a teammate.".into())),
    )
    .gate(Arc::new(pipeline))
    .build();
    let mut history = Vec::new();
    runner.run_turn(&mut history, "work").await.unwrap();
    model.finish().unwrap();
    Turn {
        calls: counters
            .iter()
            .map(|c| c.0.load(Ordering::SeqCst))
            .collect(),
        results: history
            .iter()
            .filter_map(|m| match m.as_ref() {
                Message::Tool { content, .. } => Some(content.clone()),
                _ => None,
            })
            .collect(),
    }
}

fn gate(f: &Fixture, requirement: PlanRequirement) -> PlanGate {
    PlanGate::new(Arc::new(f.requests.clone()), id("alice"), requirement)
}

fn submit(f: &Fixture) -> RequestId {
    f.requests
        .create(NewRequest {
            kind: RequestKind::PlanApproval,
            from: id("alice"),
            to: AgentId::lead(),
            content: "plan".into(),
        })
        .unwrap()
        .id
}

fn review(f: &Fixture, request: &RequestId, decision: Decision) {
    f.requests
        .respond(&Response {
            request_id: request.clone(),
            kind: RequestKind::PlanApproval,
            from: AgentId::lead(),
            to: id("alice"),
            decision,
            feedback: String::new(),
        })
        .unwrap();
}

fn denied(why: &str) -> Vec<String> {
    let deny = format!("Error [permission_denied]: {why} (by plan_gate)");
    vec![deny.clone(), deny, "ran".into(), "ran".into(), "ran".into()]
}

const OPEN: [usize; 5] = [1, 1, 1, 1, 1];
const GATED: [usize; 5] = [0, 0, 1, 1, 1];

#[tokio::test]
async fn a_required_plan_not_yet_submitted_gates_every_change() {
    let f = fixture();
    let g = gate(&f, PlanRequirement::Required);
    assert_eq!(g.state().unwrap(), GateState::NoPlan);
    assert_eq!(
        turn(g, None).await,
        Turn {
            calls: GATED.to_vec(),
            results: denied("a plan must be approved before this; call submit_plan first"),
        }
    );
}

#[tokio::test]
async fn without_a_required_plan_nothing_is_gated() {
    let f = fixture();
    let g = gate(&f, PlanRequirement::Optional);
    assert_eq!(g.state().unwrap(), GateState::Open);
    assert_eq!(turn(g, None).await.calls, OPEN);
}

#[tokio::test]
async fn a_pending_plan_gates_every_change_even_when_it_was_not_required() {
    let f = fixture();
    let request = submit(&f);
    let g = gate(&f, PlanRequirement::Optional);
    assert_eq!(g.state().unwrap(), GateState::Pending(request));
    assert_eq!(
        turn(g, None).await,
        Turn {
            calls: GATED.to_vec(),
            results: denied(
                "plan req-1 waits for the lead's review; only read-only tools, send_message and submit_plan until it is approved"
            ),
        }
    );
}

#[tokio::test]
async fn a_rejected_plan_gates_until_a_new_one_is_approved() {
    let f = fixture();
    let first = submit(&f);
    review(&f, &first, Decision::Reject);
    let g = gate(&f, PlanRequirement::Required);
    assert_eq!(g.state().unwrap(), GateState::Rejected(first));
    assert_eq!(
        turn(g.clone(), None).await,
        Turn {
            calls: GATED.to_vec(),
            results: denied("plan req-1 was rejected; submit a new plan with submit_plan"),
        }
    );
    let second = submit(&f);
    assert_eq!(turn(g.clone(), None).await.calls, GATED);
    review(&f, &second, Decision::Approve);
    assert_eq!(turn(g, None).await.calls, OPEN);
}

#[tokio::test]
async fn an_expired_plan_gates_until_it_is_submitted_again() {
    let f = fixture();
    let request = submit(&f);
    f.clock.set(super::at(400_000));
    assert!(
        f.requests
            .respond(&Response {
                request_id: request.clone(),
                kind: RequestKind::PlanApproval,
                from: AgentId::lead(),
                to: id("alice"),
                decision: Decision::Approve,
                feedback: String::new(),
            })
            .is_err()
    );
    let g = gate(&f, PlanRequirement::Required);
    assert_eq!(g.state().unwrap(), GateState::Expired(request));
    assert_eq!(
        turn(g, None).await,
        Turn {
            calls: GATED.to_vec(),
            results: denied("plan req-1 expired unreviewed; submit it again with submit_plan"),
        }
    );
}

#[tokio::test]
async fn an_approved_plan_opens_the_gate_but_never_bypasses_the_other_rules() {
    let f = fixture();
    let request = submit(&f);
    review(&f, &request, Decision::Approve);
    let g = gate(&f, PlanRequirement::Required);
    assert_eq!(g.state().unwrap(), GateState::Open);
    assert_eq!(turn(g.clone(), None).await.calls, OPEN);
    let no_writes = EffectRule::new("no_writes", ToolEffect::Write, Behavior::Deny, "no writes");
    let turn = turn(g, Some(no_writes)).await;
    assert_eq!(turn.calls, [0, 1, 1, 0, 0]);
    assert_eq!(
        turn.results[0],
        "Error [permission_denied]: no writes (by no_writes)"
    );
}

#[tokio::test]
async fn a_request_store_that_cannot_be_read_closes_the_gate() {
    let f = fixture();
    std::fs::create_dir_all(f.dir.path().join(".agent_tutorial")).unwrap();
    std::fs::write(f.dir.path().join(".agent_tutorial/requests.json"), "[").unwrap();
    let turn = turn(gate(&f, PlanRequirement::Optional), None).await;
    assert_eq!(turn.calls, GATED);
    assert_eq!(
        turn.results[0],
        "Error [permission_denied]: rule `plan_gate` failed, so the call is denied: the request store is not usable: .agent_tutorial/requests.json is not a valid record: EOF while parsing a list at line 1 column 1 (by plan_gate)"
    );
}
