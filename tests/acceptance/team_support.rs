//! A chapter 15–16 session driven in the test: the chapter's lead, each teammate on its own
//! scripted model (they ask at the same time), every question approved, one-shot.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use agent_core::{AgentId, Message, ModelReply, ModelRequest};
use agent_cron::SystemClock;
use agent_harness::session::{Interrupts, Mode, Op, Session};
use agent_harness::team_runtime::{SHUTDOWN_DEADLINE, SessionTeam, TeamSetup, attach};
use agent_policy::StaticApproval;
use agent_team::Counts;
use agent_test_support::{Recording, ScriptedModel};
use agent_tools::Workspace;
use agent_trust::{TrustAll, WorkspaceTrust};
use agent_tutorial::{AgentDeps, Profile, agents};

use crate::support::transcript;

pub fn model(replies: Vec<ModelReply>) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::replies(replies).recording(Recording::Requests))
}

/// A session of chapter `chapter` whose lead and teammates answer from their scripts.
pub struct Team {
    pub session: Session,
    pub lead: Arc<ScriptedModel>,
    pub mates: BTreeMap<String, Arc<ScriptedModel>>,
    pub team: Arc<SessionTeam>,
}

pub fn team(
    chapter: u8,
    dir: &Path,
    lead: Vec<ModelReply>,
    mates: Vec<(&str, Vec<ModelReply>)>,
) -> Team {
    team_trusting(chapter, dir, lead, mates, Arc::new(TrustAll))
}

/// [`team`], the lead and every teammate loading the workspace with `trust`.
pub fn team_trusting(
    chapter: u8,
    dir: &Path,
    lead: Vec<ModelReply>,
    mates: Vec<(&str, Vec<ModelReply>)>,
    trust: Arc<dyn WorkspaceTrust>,
) -> Team {
    team_seated(chapter, dir, lead, mates, trust, None)
}

/// [`team`], every agent seated at `board` (chapter 17 on).
pub fn team_with(
    chapter: u8,
    dir: &Path,
    lead: Vec<ModelReply>,
    mates: Vec<(&str, Vec<ModelReply>)>,
    board: Option<agent_harness::board_seat::BoardSeat>,
) -> Team {
    team_seated(chapter, dir, lead, mates, Arc::new(TrustAll), board)
}

fn team_seated(
    chapter: u8,
    dir: &Path,
    lead: Vec<ModelReply>,
    mates: Vec<(&str, Vec<ModelReply>)>,
    trust: Arc<dyn WorkspaceTrust>,
    board: Option<agent_harness::board_seat::BoardSeat>,
) -> Team {
    let workspace = Workspace::new(dir).unwrap();
    let profile = Profile::for_chapter(chapter).unwrap();
    let mut session = Session::new(Interrupts::CancelTurn);
    let lead_model = model(lead);
    let mates: BTreeMap<String, Arc<ScriptedModel>> = mates
        .into_iter()
        .map(|(name, replies)| (name.to_string(), model(replies)))
        .collect();
    let mut deps = AgentDeps::new(lead_model.clone(), workspace.clone());
    deps.events = session.sink(&AgentId::lead());
    deps.approval = Some(Arc::new(StaticApproval::ApproveAll));
    deps.trust = trust.clone();
    deps.board = board;
    let scripts = mates.clone();
    let ws = workspace.clone();
    let setup = TeamSetup {
        workspace,
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
            deps.trust = trust.clone();
            Ok(deps)
        }),
    };
    let spec = agents::spec(profile).unwrap();
    let team = attach(&mut session, &spec, &mut deps, setup)
        .unwrap()
        .unwrap();
    session.add(AgentId::lead(), agents::build_agent(profile, deps).unwrap());
    Team {
        session,
        lead: lead_model,
        mates,
        team,
    }
}

impl Team {
    /// Runs `prompt` one-shot: the lead's turn, then whatever mail keeps the team busy; every
    /// script must be used up.
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

    pub fn requests(&self, agent: &str) -> Vec<ModelRequest> {
        match agent {
            "lead" => self.lead.requests(),
            name => self.mates[name].requests(),
        }
    }
}

/// Every request `agent` sent, labelled, the workspace and message ids made stable (before
/// the labels cut long lines, so an id is never half replaced).
pub fn requests_of(t: &Team, agent: &str, dir: &Path) -> String {
    let stable: Vec<ModelRequest> = t
        .requests(agent)
        .into_iter()
        .map(|mut request| {
            for message in &mut request.messages {
                *message = Arc::new(match Message::clone(message) {
                    Message::System { content } => Message::System {
                        content: ids_out(&content),
                    },
                    Message::User { content } => Message::User {
                        content: ids_out(&content),
                    },
                    Message::Tool {
                        tool_call_id,
                        content,
                    } => Message::Tool {
                        tool_call_id,
                        content: ids_out(&content),
                    },
                    assistant => assistant,
                });
            }
            request
        })
        .collect();
    transcript(&stable, dir)
}

/// The last message `agent` sent in its request `n`, whole, ids made stable.
pub fn last_message(t: &Team, agent: &str, n: usize) -> String {
    ids_out(t.requests(agent)[n].messages.last().unwrap().text())
}

pub fn done(n: usize) -> Counts {
    Counts {
        done: n,
        ..Counts::default()
    }
}

/// `text` with every message id (8 hex, 11 hex, 12 digits: the sender's pid, start time and
/// counter) replaced by `<id>`.
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
