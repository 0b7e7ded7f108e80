use std::sync::Arc;

use agent_protocol::{AgentId, RequestId};
use agent_team::requests::Answer;
use agent_team::{
    Answered, Decision, NewRequest, ProtocolRequest, RequestError, RequestKind, RequestStatus,
    RequestStore, Response,
};
use agent_workspace::ManualClock;

use super::{Fixture, fixture, id};

fn plan(f: &Fixture, from: &str, content: &str) -> ProtocolRequest {
    f.requests
        .create(NewRequest {
            kind: RequestKind::PlanApproval,
            from: id(from),
            to: AgentId::lead(),
            content: content.into(),
        })
        .unwrap()
}

fn review(request: &str, from: &str, to: &str, decision: Decision, feedback: &str) -> Response {
    Response {
        request_id: RequestId(request.into()),
        kind: RequestKind::PlanApproval,
        from: id(from),
        to: id(to),
        decision,
        feedback: feedback.into(),
    }
}

#[test]
fn a_request_is_recorded_pending_with_its_expiry_before_anything_is_sent() {
    let f = fixture();
    let request = plan(&f, "alice", "1. read\n2. fix");
    let expected = ProtocolRequest {
        id: RequestId("req-1".into()),
        kind: RequestKind::PlanApproval,
        from: id("alice"),
        to: AgentId::lead(),
        status: RequestStatus::Pending,
        content: "1. read\n2. fix".into(),
        created_at: 1_000,
        expires_at: 301_000,
        answer: None,
    };
    assert_eq!(request, expected);
    // Durable: another store (another process) reads it back.
    let other = RequestStore::new(f.workspace.clone(), f.clock.clone());
    assert_eq!(other.all().unwrap(), [expected]);
}

#[test]
fn an_answer_is_one_terminal_transition_and_its_replay_changes_nothing() {
    let f = fixture();
    plan(&f, "alice", "p");
    f.clock.set(super::at(5_000));
    let approve = review("req-1", "lead", "alice", Decision::Approve, "go");
    let recorded = f.requests.respond(&approve).unwrap();
    let approved = ProtocolRequest {
        id: RequestId("req-1".into()),
        kind: RequestKind::PlanApproval,
        from: id("alice"),
        to: AgentId::lead(),
        status: RequestStatus::Approved,
        content: "p".into(),
        created_at: 1_000,
        expires_at: 301_000,
        answer: Some(Answer {
            decision: Decision::Approve,
            feedback: "go".into(),
            at: 5_000,
        }),
    };
    assert_eq!(recorded, Answered::Recorded(approved.clone()));
    f.clock.set(super::at(6_000));
    assert_eq!(
        f.requests.respond(&approve).unwrap(),
        Answered::Replayed(approved.clone())
    );
    // Even after the expiry, the same answer is still a replay.
    f.clock.set(super::at(1_000_000));
    assert_eq!(
        f.requests.respond(&approve).unwrap(),
        Answered::Replayed(approved.clone())
    );
    assert_eq!(f.requests.all().unwrap(), [approved]);
}

fn refusal(f: &Fixture, response: &Response) -> String {
    f.requests.respond(response).unwrap_err().to_string()
}

#[test]
fn a_different_answer_after_the_first_is_a_conflict() {
    let f = fixture();
    plan(&f, "alice", "p");
    f.requests
        .respond(&review("req-1", "lead", "alice", Decision::Reject, "no"))
        .unwrap();
    let errors = [
        refusal(
            &f,
            &review("req-1", "lead", "alice", Decision::Approve, "no"),
        ),
        refusal(
            &f,
            &review("req-1", "lead", "alice", Decision::Reject, "other words"),
        ),
    ];
    let conflict = "request `req-1` was already rejected; a different answer is refused";
    assert_eq!(errors, [conflict, conflict]);
    assert!(matches!(
        f.requests
            .respond(&review("req-1", "lead", "alice", Decision::Approve, "")),
        Err(RequestError::Conflict {
            status: RequestStatus::Rejected,
            ..
        })
    ));
}

#[test]
fn an_unknown_id_and_a_superseded_plan_are_refused_each_with_its_own_error() {
    let f = fixture();
    plan(&f, "alice", "first plan");
    plan(&f, "alice", "second plan");
    let errors = [
        refusal(&f, &review("req-9", "lead", "alice", Decision::Approve, "")),
        refusal(&f, &review("req-1", "lead", "alice", Decision::Approve, "")),
    ];
    assert_eq!(
        errors,
        [
            "there is no request `req-9`",
            "request `req-1` was superseded by a newer request and takes no answer",
        ]
    );
    let statuses: Vec<RequestStatus> = f.requests.all().unwrap().iter().map(|r| r.status).collect();
    assert_eq!(
        statuses,
        [RequestStatus::Superseded, RequestStatus::Pending]
    );
}

#[test]
fn an_answer_from_the_wrong_agent_or_of_the_wrong_kind_is_refused_and_changes_nothing() {
    let f = fixture();
    plan(&f, "alice", "p");
    let mut wrong_kind = review("req-1", "lead", "alice", Decision::Approve, "");
    wrong_kind.kind = RequestKind::Shutdown;
    let errors = [
        refusal(&f, &review("req-1", "bob", "alice", Decision::Approve, "")),
        refusal(&f, &review("req-1", "lead", "bob", Decision::Approve, "")),
        refusal(&f, &wrong_kind),
    ];
    assert_eq!(
        errors,
        [
            "request `req-1` is from `alice` to `lead`; `bob` cannot answer it for `alice`",
            "request `req-1` is from `alice` to `lead`; `lead` cannot answer it for `bob`",
            "request `req-1` is a plan_approval request, not shutdown",
        ]
    );
    assert_eq!(f.requests.all().unwrap()[0].status, RequestStatus::Pending);
}

#[test]
fn an_answer_after_the_expiry_is_refused_and_the_request_is_expired_for_good() {
    let f = fixture();
    plan(&f, "alice", "p");
    f.clock.set(super::at(301_000));
    let approve = review("req-1", "lead", "alice", Decision::Approve, "");
    let expired = "request `req-1` expired before it was answered";
    assert_eq!(refusal(&f, &approve), expired);
    assert_eq!(f.requests.all().unwrap()[0].status, RequestStatus::Expired);
    // A process whose clock is behind does not revive it: the transition was recorded.
    let behind = RequestStore::new(
        f.workspace.clone(),
        Arc::new(ManualClock::new(super::at(2_000))),
    );
    assert_eq!(behind.respond(&approve).unwrap_err().to_string(), expired);
}

#[test]
fn a_shorter_expiry_applies_and_an_answer_just_before_it_counts() {
    let f = fixture();
    let store = RequestStore::new(f.workspace.clone(), f.clock.clone()).with_expiry(10);
    store
        .create(NewRequest {
            kind: RequestKind::Shutdown,
            from: AgentId::lead(),
            to: id("bob"),
            content: "stop".into(),
        })
        .unwrap();
    f.clock.set(super::at(1_009));
    let answered = store
        .respond(&Response {
            request_id: RequestId("req-1".into()),
            kind: RequestKind::Shutdown,
            from: id("bob"),
            to: AgentId::lead(),
            decision: Decision::Approve,
            feedback: String::new(),
        })
        .unwrap();
    assert_eq!(answered.request().status, RequestStatus::Approved);
}

#[test]
fn the_latest_plan_is_the_last_one_its_teammate_submitted() {
    let f = fixture();
    plan(&f, "alice", "a1");
    plan(&f, "bob", "b1");
    plan(&f, "alice", "a2");
    let latest = |who: &str| f.requests.latest_plan(&id(who)).unwrap().map(|r| r.content);
    assert_eq!(
        [latest("alice"), latest("bob"), latest("carol")],
        [Some("a2".to_string()), Some("b1".to_string()), None]
    );
}

fn shutdown(f: &Fixture, to: &str) -> ProtocolRequest {
    f.requests
        .create(NewRequest {
            kind: RequestKind::Shutdown,
            from: AgentId::lead(),
            to: id(to),
            content: "stop".into(),
        })
        .unwrap()
}

#[test]
fn an_unanswered_shutdown_is_recorded_as_forced_once_and_then_takes_no_answer() {
    let f = fixture();
    shutdown(&f, "bob");
    let req = RequestId("req-1".into());
    let forced = f.requests.force(&req, &AgentId::lead()).unwrap();
    assert_eq!(
        (forced.status, forced.status.to_string()),
        (RequestStatus::Forced, "stopped by force".to_string())
    );
    assert_eq!(f.requests.force(&req, &AgentId::lead()).unwrap(), forced);
    let late = Response {
        request_id: req,
        kind: RequestKind::Shutdown,
        from: id("bob"),
        to: AgentId::lead(),
        decision: Decision::Approve,
        feedback: String::new(),
    };
    assert_eq!(
        refusal(&f, &late),
        "request `req-1` expired before it was answered"
    );
}

#[test]
fn only_the_requester_may_force_and_only_an_unanswered_shutdown() {
    let f = fixture();
    shutdown(&f, "bob");
    plan(&f, "alice", "p");
    shutdown(&f, "carol");
    f.requests
        .respond(&Response {
            request_id: RequestId("req-3".into()),
            kind: RequestKind::Shutdown,
            from: id("carol"),
            to: AgentId::lead(),
            decision: Decision::Approve,
            feedback: String::new(),
        })
        .unwrap();
    let force = |req: &str, by: &str| {
        f.requests
            .force(&RequestId(req.into()), &id(by))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        [
            force("req-1", "bob"),
            force("req-2", "lead"),
            force("req-3", "lead"),
            force("req-4", "lead"),
        ],
        [
            "request `req-1` is from `lead` to `bob`; `bob` cannot answer it for `lead`",
            "request `req-2` is a plan_approval request, not shutdown",
            "request `req-3` was already approved; a different answer is refused",
            "there is no request `req-4`",
        ]
    );
}
