//! The team tools through a real registry, over the real stores and a fake runtime.
//!
//! This file: the fake runtime and the registries both sides get, the tool sets and their
//! schemas, `send_message`, `spawn_teammate` and `list_teammates`. The protocol tools, whose
//! requests are recorded before they are delivered and answered at most once (`submit_plan`,
//! `review_plan`, `request_shutdown`), are in `tools/protocols.rs`.

mod protocols;

use std::sync::{Arc, Mutex};

use agent_core::{ToolCall, ToolFailure, ToolRegistry};
use agent_protocol::AgentId;
use agent_team::runtime::RuntimeError;
use agent_team::{
    MailKind, MailMessage, Member, PlanRequirement, Protocols, Roster, TeamRuntime, TeamTools,
    TeammateSpec, TeammateStatus,
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
