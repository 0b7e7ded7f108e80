//! Chapters 15–16 over the session: a teammate is a session agent woken by durable mail, the
//! lead is woken by its result with no input, and the shutdown handshake costs no model call.

use std::collections::BTreeMap;
use std::sync::Arc;

use agent_core::{AgentId, Message, ModelReply};
use agent_harness::session::{Interrupts, Mode, Op, Session};
use agent_harness::team_runtime::{SHUTDOWN_DEADLINE, SessionTeam, TeamSetup, attach};
use agent_harness::{AgentDeps, AgentSpec, Capabilities, Capability, build_agent};
use agent_policy::StaticApproval;
use agent_prompting::PromptContext;
use agent_team::{Counts, RequestStatus, TeamRecord, TeammateStatus};
use agent_test_support::{Recording, ScriptedModel};
use agent_tools::Workspace;
use agent_workspace::SystemClock;
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

pub fn model(replies: Vec<ModelReply>) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::replies(replies).recording(Recording::Requests))
}

/// A session whose lead (on `lead`) may start teammates, each on its own script in `mates`;
/// every question approved.
pub struct Team {
    pub session: Session,
    pub lead: Arc<ScriptedModel>,
    pub mates: BTreeMap<String, Arc<ScriptedModel>>,
    pub team: Arc<SessionTeam>,
}

pub fn team(
    dir: &std::path::Path,
    capabilities: Capabilities,
    lead: Vec<ModelReply>,
    mates: Vec<(&str, Vec<ModelReply>)>,
) -> Team {
    let workspace = Workspace::new(dir).unwrap();
    let mut session = Session::new(Interrupts::CancelTurn);
    let lead_model = model(lead);
    let mates: BTreeMap<String, Arc<ScriptedModel>> = mates
        .into_iter()
        .map(|(name, replies)| (name.to_string(), model(replies)))
        .collect();
    let spec = AgentSpec {
        capabilities,
        context: PromptContext::from_value(json!({"chapter": 15})).unwrap(),
    };
    let mut deps = AgentDeps::new(lead_model.clone(), workspace.clone());
    deps.events = session.sink(&AgentId::lead());
    deps.approval = Some(Arc::new(StaticApproval::ApproveAll));
    let scripts = mates.clone();
    let ws = workspace.clone();
    let setup = TeamSetup {
        workspace: workspace.clone(),
        clock: Arc::new(SystemClock),
        shutdown_deadline: SHUTDOWN_DEADLINE,
        teammate_deps: Arc::new(move |name, joiner| {
            let model = scripts
                .get(name.as_str())
                .cloned()
                .unwrap_or_else(|| model(vec![]));
            let mut deps = AgentDeps::new(model, ws.clone());
            deps.events = joiner.sink(name);
            deps.approval = Some(Arc::new(StaticApproval::ApproveAll));
            Ok(deps)
        }),
    };
    let team = attach(&mut session, &spec, &mut deps, setup)
        .unwrap()
        .unwrap();
    session.add(AgentId::lead(), build_agent(&spec, deps).unwrap());
    Team {
        session,
        lead: lead_model,
        mates,
        team,
    }
}

impl Team {
    /// Runs `prompt` one-shot: the lead's turn, then whatever mail keeps the team busy.
    pub async fn run(&mut self, prompt: &str) {
        self.session.handle().submit(Op::Prompt {
            agent: AgentId::lead(),
            text: prompt.into(),
        });
        self.session.run(Mode::OneShot).await;
        self.lead.finish().unwrap();
        for model in self.mates.values() {
            model.finish().unwrap();
        }
    }

    pub fn counts(&self, name: &str) -> Counts {
        let id = AgentId::new(name).unwrap();
        self.team.mailbox().counts(&id).unwrap()
    }
}

/// The last message of a request, with message ids (they name a process) as `<id>`.
pub fn last_text(messages: &[Arc<Message>]) -> String {
    ids_out(messages.last().unwrap().text())
}

/// `text` with every message id (`8 hex-11 hex-12 digits`) replaced by `<id>`.
pub fn ids_out(text: &str) -> String {
    let shape = |s: &[u8]| {
        s.len() >= 33
            && s[..8].iter().all(u8::is_ascii_hexdigit)
            && s[8] == b'-'
            && s[9..20].iter().all(u8::is_ascii_hexdigit)
            && s[20] == b'-'
            && s[21..33].iter().all(u8::is_ascii_digit)
    };
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if shape(&bytes[i..]) {
            out.push_str("<id>");
            i += 33;
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn done(n: usize) -> Counts {
    Counts {
        done: n,
        ..Counts::default()
    }
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
