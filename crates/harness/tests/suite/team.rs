//! Chapters 15–16 over the session: a teammate is a session agent woken by durable mail, the
//! lead is woken by its result with no input, and the shutdown handshake costs no model call.

use std::sync::Arc;

use agent_core::{AgentId, Message, ModelReply};
use agent_harness::{AgentSpec, Capabilities, Capability};
use agent_prompting::PromptContext;
use agent_team::{RequestStatus, TeamRecord, TeammateStatus};
use serde_json::json;

use super::{call, caps};

pub const P15: [Capability; 5] = [
    Capability::Bash,
    Capability::Files,
    Capability::Policy,
    Capability::Teammates,
    Capability::Mailbox,
];

pub fn p16() -> Capabilities {
    caps(&P15)
        .with(Capability::Protocols)
        .with(Capability::PlanGate)
}

pub use agent_harness::test_util::{TeamFixture as Team, done, ids_out};

/// A session whose lead (on `lead`, with `capabilities`) may start teammates, each on its own
/// script in `mates`; every question approved.
pub fn team(
    dir: &std::path::Path,
    capabilities: Capabilities,
    lead: Vec<ModelReply>,
    mates: Vec<(&str, Vec<ModelReply>)>,
) -> Team {
    let spec = AgentSpec {
        capabilities,
        context: PromptContext::from_value(json!({"chapter": 15})).unwrap(),
    };
    Team::builder(dir, spec).lead(lead).mates(mates).build()
}

/// The last message of a request, with message ids (they name a process) as `<id>`.
pub fn last_text(messages: &[Arc<Message>]) -> String {
    ids_out(messages.last().unwrap().text())
}

#[tokio::test]
async fn a_teammate_is_woken_by_mail_and_its_result_wakes_the_lead_with_no_input() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    let spawn =
        json!({"name": "alice", "role": "reads notes", "prompt": "Read notes.txt and report."});
    let mut t = team(
        dir.path(),
        caps(&P15),
        vec![
            ModelReply::tool_calls(vec![call("c1", "spawn_teammate", spawn)]),
            ModelReply::text("Alice is on it."),
            ModelReply::text("Alice says: alpha and beta."),
        ],
        vec![(
            "alice",
            vec![
                ModelReply::tool_calls(vec![call("a1", "read_file", json!({"path": "notes.txt"}))]),
                ModelReply::text("notes.txt has alpha and beta."),
            ],
        )],
    );
    t.run("Ask a teammate to read notes.txt.").await;

    let lead = t.lead.requests();
    let tools: Vec<String> = lead[0].tools.iter().map(|s| s.name.clone()).collect();
    assert_eq!(
        tools,
        [
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "spawn_teammate",
            "send_message",
            "list_teammates"
        ]
    );
    assert_eq!(lead.len(), 3);
    assert_eq!(
        last_text(&lead[2].messages),
        "<teammate-message id=\"<id>\" from=\"alice\" type=\"result\">\nnotes.txt has alpha and beta.\n</teammate-message>"
    );
    let alice = t.mates["alice"].requests();
    let tools: Vec<String> = alice[0].tools.iter().map(|s| s.name.clone()).collect();
    assert_eq!(
        tools,
        [
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "send_message"
        ]
    );
    assert_eq!(
        last_text(&alice[0].messages),
        "<teammate-message id=\"<id>\" from=\"lead\" type=\"message\">\nRead notes.txt and report.\n</teammate-message>"
    );
    assert_eq!(alice.len(), 2);
    assert_eq!((t.counts("lead"), t.counts("alice")), (done(1), done(1)));
    assert_eq!(
        t.team.records(),
        [TeamRecord {
            name: AgentId::new("alice").unwrap(),
            role: "reads notes".into(),
            status: TeammateStatus::ShutDown,
            current: None,
            last_result: Some("notes.txt has alpha and beta.".into()),
        }]
    );
}

#[tokio::test]
async fn a_shutdown_is_answered_by_the_teammates_runtime_with_no_model_call() {
    let dir = tempfile::tempdir().unwrap();
    let spawn = json!({"name": "alice", "role": "helper", "prompt": "Say hi."});
    let mut t = team(
        dir.path(),
        p16(),
        vec![
            ModelReply::tool_calls(vec![call("c1", "spawn_teammate", spawn)]),
            ModelReply::text("Started."),
            ModelReply::tool_calls(vec![call(
                "c2",
                "request_shutdown",
                json!({"teammate": "alice"}),
            )]),
            ModelReply::text("Asked alice to stop."),
            ModelReply::text("Alice has stopped."),
        ],
        vec![("alice", vec![ModelReply::text("hi")])],
    );
    t.run("Start alice, then stop her when she reports.").await;

    let lead = t.lead.requests();
    assert_eq!(lead.len(), 5);
    assert_eq!(
        last_text(&lead[4].messages),
        "<protocol-response id=\"req-1\" kind=\"shutdown\" from=\"alice\" decision=\"approved\" message=\"<id>\">\nStopped: nothing was running, and no message is held.\n</protocol-response>"
    );
    // One model call: her first message. The shutdown cost none.
    assert_eq!(t.mates["alice"].requests().len(), 1);
    let statuses: Vec<RequestStatus> = t
        .team
        .requests()
        .all()
        .unwrap()
        .iter()
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses, [RequestStatus::Approved]);
    assert_eq!(t.team.records()[0].status, TeammateStatus::ShutDown);
    assert_eq!((t.counts("lead"), t.counts("alice")), (done(2), done(2)));
}
