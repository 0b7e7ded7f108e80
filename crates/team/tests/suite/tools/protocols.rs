//! The protocol tools: a teammate's plan (`submit_plan`) and the lead's answer (`review_plan`),
//! and the lead's `request_shutdown`.
//!
//! Apart from the other tools because each of these is a request with a lifecycle: recorded in
//! the request store first, then delivered, answered at most once, superseded or expired; so
//! the tests check the store's records as well as the mail, and what happens when delivery
//! fails after the record was made.

use agent_protocol::{AgentId, RequestId};
use agent_team::mailbox::MAX_WAITING;
use agent_team::{
    Decision, MailKind, NewRequest, ProtocolRequest, RequestKind, RequestStatus, TeammateStatus,
};

use super::{call, claim, setup};
use crate::suite::{id, team};

#[tokio::test]
async fn a_plan_is_recorded_sent_to_the_lead_reviewed_and_answered() {
    let t = setup();
    let out = call(&t.alice, "submit_plan", r#"{"plan":"1. read\n2. fix"}"#)
        .await
        .unwrap();
    assert_eq!(
        out,
        "plan req-1 sent to the lead for review; until it is approved only read-only tools, send_message and submit_plan run"
    );
    let request = claim(&t, "lead");
    assert_eq!(
        request.fragment().text(),
        format!(
            "<protocol-request id=\"req-1\" kind=\"plan_approval\" from=\"alice\" message=\"{}\">\n1. read\n2. fix\n</protocol-request>",
            request.id
        )
    );
    let review = r#"{"request_id":"req-1","approve":false,"feedback":"add a test"}"#;
    assert_eq!(
        call(&t.lead, "review_plan", review).await.unwrap(),
        "plan req-1 of alice rejected"
    );
    let answer = claim(&t, "alice");
    assert_eq!(
        answer.kind,
        MailKind::Response {
            request_id: RequestId("req-1".into()),
            request: RequestKind::PlanApproval,
            decision: Decision::Reject,
        }
    );
    assert_eq!(
        answer.fragment().text(),
        format!(
            "<protocol-response id=\"req-1\" kind=\"plan_approval\" from=\"lead\" decision=\"rejected\" message=\"{}\">\nadd a test\n</protocol-response>",
            answer.id
        )
    );
    // Replayed: nothing changes and nothing is sent again.
    assert_eq!(
        call(&t.lead, "review_plan", review).await.unwrap(),
        "plan req-1 of alice rejected already (the same answer, nothing changed)"
    );
    assert_eq!(t.f.mailbox.claim(&id("alice")).unwrap(), None);
    // A different answer, an unknown id.
    let results = [
        call(
            &t.lead,
            "review_plan",
            r#"{"request_id":"req-1","approve":true}"#,
        )
        .await,
        call(
            &t.lead,
            "review_plan",
            r#"{"request_id":"req-7","approve":true}"#,
        )
        .await,
    ];
    assert_eq!(
        results,
        [
            Err("Error [request_conflict]: request `req-1` was already rejected; a different answer is refused".into()),
            Err("Error [request_not_found]: there is no request `req-7`".into()),
        ]
    );
}

#[tokio::test]
async fn a_new_plan_supersedes_the_one_under_review() {
    let t = setup();
    call(&t.alice, "submit_plan", r#"{"plan":"one"}"#)
        .await
        .unwrap();
    call(&t.alice, "submit_plan", r#"{"plan":"two"}"#)
        .await
        .unwrap();
    assert_eq!(
        call(&t.lead, "review_plan", r#"{"request_id":"req-1","approve":true}"#).await,
        Err("Error [request_stale]: request `req-1` was superseded by a newer request and takes no answer".into())
    );
    assert_eq!(
        call(
            &t.lead,
            "review_plan",
            r#"{"request_id":"req-2","approve":true}"#
        )
        .await,
        Ok("plan req-2 of alice approved".into())
    );
}

#[tokio::test]
async fn a_review_after_the_expiry_is_refused() {
    let t = setup();
    call(&t.alice, "submit_plan", r#"{"plan":"one"}"#)
        .await
        .unwrap();
    t.f.clock.advance(std::time::Duration::from_millis(300_000));
    assert_eq!(
        call(
            &t.lead,
            "review_plan",
            r#"{"request_id":"req-1","approve":true}"#
        )
        .await,
        Err("Error [request_expired]: request `req-1` expired before it was answered".into())
    );
}

#[tokio::test]
async fn a_plan_whose_delivery_fails_stays_recorded_and_pending() {
    let t = setup();
    for i in 0..MAX_WAITING {
        t.f.mailbox
            .send(
                &team(),
                &id("bob"),
                "lead",
                MailKind::Message,
                &i.to_string(),
            )
            .unwrap();
    }
    assert_eq!(
        call(&t.alice, "submit_plan", r#"{"plan":"p"}"#).await,
        Err("Error [mailbox_full]: request req-1 was recorded, but it could not be delivered: `lead` already has 256 messages waiting; try again after it has read them".into())
    );
    let status: Vec<RequestStatus> =
        t.f.requests
            .all()
            .unwrap()
            .iter()
            .map(|r| r.status)
            .collect();
    assert_eq!(status, [RequestStatus::Pending]);
}

#[tokio::test]
async fn request_shutdown_records_then_sends_one_request_per_teammate_that_can_receive_it() {
    let t = setup();
    assert_eq!(
        call(&t.lead, "request_shutdown", r#"{"teammate":"dave"}"#).await,
        Err("Error [unknown_recipient]: teammate `dave` is shut down and receives no messages; the agents are: lead, alice (idle), bob (running), carol (failed), dave (shut down)".into())
    );
    assert_eq!(
        call(&t.lead, "request_shutdown", "{}").await.unwrap(),
        "shutdown of alice requested (req-1)\nshutdown of bob requested (req-2)"
    );
    let requests: Vec<(String, RequestKind, String, RequestStatus)> =
        t.f.requests
            .all()
            .unwrap()
            .into_iter()
            .map(|r: ProtocolRequest| (r.id.0, r.kind, r.to.to_string(), r.status))
            .collect();
    assert_eq!(
        requests,
        [
            (
                "req-1".into(),
                RequestKind::Shutdown,
                "alice".into(),
                RequestStatus::Pending
            ),
            (
                "req-2".into(),
                RequestKind::Shutdown,
                "bob".into(),
                RequestStatus::Pending
            ),
        ]
    );
    let mail = claim(&t, "bob");
    assert_eq!(
        mail.fragment().text(),
        format!(
            "<protocol-request id=\"req-2\" kind=\"shutdown\" from=\"lead\" message=\"{}\">\nThe lead asks you to finish or release what you hold and stop.\n</protocol-request>",
            mail.id
        )
    );
    assert_eq!(*t.runtime.woken.lock().unwrap(), [id("alice"), id("bob")]);
}

#[tokio::test]
async fn a_review_for_a_teammate_that_stopped_is_recorded_and_the_lead_is_told_it_was_not_delivered()
 {
    let t = setup();
    call(&t.alice, "submit_plan", r#"{"plan":"p"}"#)
        .await
        .unwrap();
    t.runtime.roster.lock().unwrap()[0].status = TeammateStatus::ShutDown;
    assert_eq!(
        call(&t.lead, "review_plan", r#"{"request_id":"req-1","approve":true}"#).await,
        Err("Error [unknown_recipient]: plan req-1 of alice approved, but it could not be delivered: teammate `alice` is shut down and receives no messages; the agents are: lead, alice (shut down), bob (running), carol (failed), dave (shut down)".into())
    );
    let status: Vec<RequestStatus> =
        t.f.requests
            .all()
            .unwrap()
            .iter()
            .map(|r| r.status)
            .collect();
    assert_eq!(status, [RequestStatus::Approved]);
}

/// `review_plan` on a request the lead is not the one to answer: a plan sent to someone
/// else, and a shutdown request (the wrong kind). Each is `request_wrong_sender`, and the
/// request stays pending with nothing sent.
#[tokio::test]
async fn a_review_from_the_wrong_sender_or_of_the_wrong_kind_is_request_wrong_sender() {
    let t = setup();
    let to_bob =
        t.f.requests
            .create(NewRequest {
                kind: RequestKind::PlanApproval,
                from: id("alice"),
                to: id("bob"),
                content: "a plan for bob".into(),
            })
            .unwrap();
    let shutdown =
        t.f.requests
            .create(NewRequest {
                kind: RequestKind::Shutdown,
                from: AgentId::lead(),
                to: id("alice"),
                content: "stop".into(),
            })
            .unwrap();
    let results = [
        call(
            &t.lead,
            "review_plan",
            &format!(r#"{{"request_id":"{}","approve":true}}"#, to_bob.id.0),
        )
        .await,
        call(
            &t.lead,
            "review_plan",
            &format!(r#"{{"request_id":"{}","approve":true}}"#, shutdown.id.0),
        )
        .await,
    ];
    assert_eq!(
        results,
        [
            Err("Error [request_wrong_sender]: request `req-1` is from `alice` to `bob`; `lead` cannot answer it for `alice`".into()),
            Err("Error [request_wrong_sender]: request `req-2` is a shutdown request, not plan_approval".into()),
        ]
    );
    assert_eq!(t.f.requests.all().unwrap(), [to_bob, shutdown]);
    assert_eq!(t.f.mailbox.claim(&id("alice")).unwrap(), None);
    assert_eq!(t.f.mailbox.claim(&id("bob")).unwrap(), None);
    assert!(t.runtime.woken.lock().unwrap().is_empty());
}
