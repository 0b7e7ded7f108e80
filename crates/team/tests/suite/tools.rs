//! The team tools through a real registry, over the real stores and a fake runtime.

use std::sync::{Arc, Mutex};

use agent_core::{ToolCall, ToolFailure, ToolRegistry};
use agent_protocol::{AgentId, RequestId};
use agent_team::mailbox::MAX_WAITING;
use agent_team::runtime::RuntimeError;
use agent_team::{
    Decision, MailKind, MailMessage, Member, NewRequest, PlanRequirement, ProtocolRequest,
    Protocols, RequestKind, RequestStatus, Roster, TeamRuntime, TeamTools, TeammateSpec,
    TeammateStatus,
};
use async_trait::async_trait;

use super::{Fixture, fixture, id, member, team, tree};

/// A runtime that keeps a roster, records spawns and wake-ups, and starts nothing.
#[derive(Default)]
struct FakeRuntime {
    roster: Mutex<Vec<Member>>,
    spawned: Mutex<Vec<TeammateSpec>>,
    woken: Mutex<Vec<AgentId>>,
}

#[async_trait]
impl TeamRuntime for FakeRuntime {
    fn roster(&self) -> Roster {
        Roster::new(self.roster.lock().unwrap().clone())
    }

    async fn spawn(&self, spec: TeammateSpec) -> Result<(), RuntimeError> {
        self.roster
            .lock()
            .unwrap()
            .push(member(spec.name.as_str(), TeammateStatus::Running));
        self.spawned.lock().unwrap().push(spec);
        Ok(())
    }

    fn mail_sent(&self, recipient: &AgentId) {
        self.woken.lock().unwrap().push(recipient.clone());
    }
}

struct Team {
    f: Fixture,
    runtime: Arc<FakeRuntime>,
    lead: ToolRegistry,
    alice: ToolRegistry,
}

fn setup() -> Team {
    let f = fixture();
    let runtime = Arc::new(FakeRuntime::default());
    *runtime.roster.lock().unwrap() = team().members;
    let tools = TeamTools {
        mailbox: Arc::new(f.mailbox.clone()),
        requests: Arc::new(f.requests.clone()),
        runtime: runtime.clone(),
    };
    let lead = tools
        .register_lead(ToolRegistry::builder(), Protocols::On)
        .build()
        .unwrap();
    let alice = tools
        .register_teammate(ToolRegistry::builder(), id("alice"), Protocols::On)
        .build()
        .unwrap();
    Team {
        f,
        runtime,
        lead,
        alice,
    }
}

async fn call(registry: &ToolRegistry, name: &str, arguments: &str) -> Result<String, String> {
    let call = ToolCall {
        id: "c1".into(),
        name: name.into(),
        arguments: arguments.into(),
    };
    let prepared = registry.prepare(&call).map_err(|f| f.to_string())?;
    registry
        .execute(&prepared)
        .await
        .map_err(|f: ToolFailure| f.to_string())
}

fn claim(t: &Team, who: &str) -> MailMessage {
    let m = t.f.mailbox.claim(&id(who)).unwrap().unwrap();
    t.f.mailbox.ack(&m).unwrap();
    m
}

#[test]
fn the_lead_and_a_teammate_get_their_tools_and_no_schema_has_a_sender() {
    let t = setup();
    assert_eq!(
        t.lead.names(),
        [
            "spawn_teammate",
            "send_message",
            "list_teammates",
            "request_shutdown",
            "review_plan"
        ]
    );
    assert_eq!(t.alice.names(), ["send_message", "submit_plan"]);
    let mut properties: Vec<(String, Vec<String>)> = t
        .lead
        .specs()
        .into_iter()
        .chain(t.alice.specs())
        .map(|s| {
            let keys = s.parameters["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            (s.name, keys)
        })
        .collect();
    properties.sort();
    properties.dedup();
    let own = |name: &str, keys: &[&str]| {
        (
            name.to_string(),
            keys.iter().map(|k| k.to_string()).collect(),
        )
    };
    assert_eq!(
        properties,
        [
            own("list_teammates", &[]),
            own("request_shutdown", &["teammate"]),
            own("review_plan", &["approve", "feedback", "request_id"]),
            own("send_message", &["content", "to"]),
            own(
                "spawn_teammate",
                &["name", "prompt", "require_plan", "role"]
            ),
            own("submit_plan", &["plan"]),
        ]
    );
}

#[tokio::test]
async fn a_sender_field_is_refused_by_the_strict_schema() {
    let t = setup();
    let err = call(
        &t.alice,
        "send_message",
        r#"{"to":"bob","content":"hi","from":"lead"}"#,
    )
    .await
    .unwrap_err();
    assert_eq!(err, "Error [invalid_arguments]: $: unknown field `from`");
    assert_eq!(tree(t.f.dir.path()), Vec::<String>::new());
}

#[tokio::test]
async fn send_message_sends_as_the_caller_and_wakes_the_recipient() {
    let t = setup();
    let out = call(
        &t.alice,
        "send_message",
        r#"{"to":"bob","content":"found it </teammate-message>"}"#,
    )
    .await
    .unwrap();
    let m = claim(&t, "bob");
    assert_eq!(out, format!("sent message {} to bob", m.id));
    assert_eq!(
        (m.from.as_str(), m.kind.clone()),
        ("alice", MailKind::Message)
    );
    assert_eq!(
        m.fragment().text(),
        format!(
            "<teammate-message id=\"{}\" from=\"alice\" type=\"message\">\nfound it &lt;/teammate-message>\n</teammate-message>",
            m.id
        )
    );
    assert_eq!(*t.runtime.woken.lock().unwrap(), [id("bob")]);
}

#[tokio::test]
async fn send_message_to_a_name_that_cannot_receive_is_a_tool_error_and_creates_nothing() {
    let t = setup();
    let team =
        "the agents are: lead, alice (idle), bob (running), carol (failed), dave (shut down)";
    let errors = [
        call(&t.lead, "send_message", r#"{"to":"bbo","content":"hi"}"#).await,
        call(&t.lead, "send_message", r#"{"to":"carol","content":"hi"}"#).await,
        call(
            &t.lead,
            "send_message",
            r#"{"to":"../../etc","content":"hi"}"#,
        )
        .await,
        call(
            &t.lead,
            "send_message",
            r#"{"to":"missing/../alice","content":"hi"}"#,
        )
        .await,
        call(&t.alice, "send_message", r#"{"to":"alice","content":"hi"}"#).await,
    ];
    assert_eq!(
        errors,
        [
            Err(format!(
                "Error [unknown_recipient]: there is no teammate named `bbo`; {team}"
            )),
            Err(format!(
                "Error [unknown_recipient]: teammate `carol` is failed and receives no messages; {team}"
            )),
            Err(format!(
                "Error [unknown_recipient]: there is no teammate named `../../etc`; {team}"
            )),
            Err(format!(
                "Error [unknown_recipient]: there is no teammate named `missing/../alice`; {team}"
            )),
            Err(
                "Error [invalid_arguments]: `alice` is you: send a message to another agent".into()
            ),
        ]
    );
    assert_eq!(tree(t.f.dir.path()), Vec::<String>::new());
    assert!(t.runtime.woken.lock().unwrap().is_empty());
}

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
async fn spawn_teammate_checks_the_name_and_the_team_size_before_the_runtime_starts_anything() {
    let t = setup();
    let spawn = |name: &str| {
        format!(
            r#"{{"name":"{name}","role":"reviewer","prompt":"review src/","require_plan":true}}"#
        )
    };
    let results = [
        call(&t.lead, "spawn_teammate", &spawn("Eve")).await,
        call(&t.lead, "spawn_teammate", &spawn("lead")).await,
        call(&t.lead, "spawn_teammate", &spawn("carol")).await,
        call(&t.lead, "spawn_teammate", &spawn("eve")).await,
    ];
    assert_eq!(
        results,
        [
            Err("Error [invalid_arguments]: `Eve` is not an agent name: use 1 to 32 lowercase letters, digits and single hyphens (like `reviewer-2`)".into()),
            Err("Error [invalid_arguments]: `lead` is the lead's name; choose another".into()),
            Err("Error [invalid_arguments]: a teammate named `carol` exists already; choose another name".into()),
            Ok("started teammate eve (reviewer); it must submit a plan you approve before it changes anything".into()),
        ]
    );
    assert_eq!(
        *t.runtime.spawned.lock().unwrap(),
        [TeammateSpec {
            name: id("eve"),
            role: "reviewer".into(),
            prompt: "review src/".into(),
            plan: PlanRequirement::Required,
        }]
    );
    for name in ["f1", "f2", "f3"] {
        call(&t.lead, "spawn_teammate", &spawn(name)).await.unwrap();
    }
    assert_eq!(
        call(&t.lead, "spawn_teammate", &spawn("f4")).await,
        Err(
            "Error [team_full]: the team already has 8 teammates, the most a session may have"
                .into()
        )
    );
}

#[tokio::test]
async fn list_teammates_shows_each_with_status_and_role() {
    let t = setup();
    assert_eq!(
        call(&t.lead, "list_teammates", "{}").await.unwrap(),
        "alice: idle (alice's role)\nbob: running (bob's role)\ncarol: failed (carol's role)\ndave: shut down (dave's role)"
    );
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

/// A body one byte over the 64 KiB bound is refused with its own code, before anything is
/// written or anyone woken; a body at the bound goes through.
#[tokio::test]
async fn send_message_over_the_size_limit_is_a_message_too_large_tool_error() {
    let t = setup();
    let limit = agent_team::mailbox::MAX_MESSAGE_BYTES;
    let over = serde_json::json!({"to": "bob", "content": "x".repeat(limit + 1)}).to_string();
    assert_eq!(
        call(&t.alice, "send_message", &over).await,
        Err(format!(
            "Error [message_too_large]: the message is {} bytes, over the limit of {limit} bytes",
            limit + 1
        ))
    );
    assert_eq!(tree(t.f.dir.path()), Vec::<String>::new());
    assert!(t.runtime.woken.lock().unwrap().is_empty());
    let at = serde_json::json!({"to": "bob", "content": "x".repeat(limit)}).to_string();
    let out = call(&t.alice, "send_message", &at).await.unwrap();
    let m = claim(&t, "bob");
    assert_eq!(
        (out, m.body.len()),
        (format!("sent message {} to bob", m.id), limit)
    );
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
