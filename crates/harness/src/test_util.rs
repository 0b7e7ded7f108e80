//! Test support, behind the `test-util` feature: a session whose lead may start teammates,
//! every agent on a scripted model. The harness's own team tests (chapters 15–16 over the
//! session) and the project's acceptance tests (the chapters' profiles) build their teams here,
//! so the two suites drive one setup instead of two copies that drift.
//!
//! A failed setup is a failed test: this module panics instead of returning errors.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test fixture: a setup that cannot be built fails the test that asked for it"
)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_core::{AgentId, ModelClient, ModelError, ModelReply, ModelRequest};
use agent_hooks::HookRegistry;
use agent_policy::StaticApproval;
use agent_team::Counts;
use agent_test_support::{Recording, ScriptedModel};
use agent_tools::Workspace;
use agent_trust::{TrustAll, WorkspaceTrust};
use agent_workspace::{Clock, SystemClock};

use crate::session::{Interrupts, Mode, Op, Session};
use crate::team_runtime::{SHUTDOWN_DEADLINE, SessionTeam, TeamSetup, attach};
use crate::{AgentDeps, AgentSpec, build_agent};

/// A model that never answers: a turn on it runs until the session drops it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

#[async_trait::async_trait]
impl ModelClient for Silent {
    async fn complete(&self, _request: &ModelRequest) -> Result<ModelReply, ModelError> {
        std::future::pending().await
    }
}

/// What a teammate that has no script of its own runs on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Unscripted {
    /// An empty script: its first request fails (and it is failed).
    #[default]
    Empty,
    /// [`Silent`]: its turn never ends by itself.
    Silent,
}

/// Who answers the teammates' questions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Questions {
    /// Every question is approved at once.
    #[default]
    ApproveAll,
    /// Each is asked through the session (`SessionEvent::ApprovalRequested`, naming who
    /// asks), as the CLI does at a terminal.
    Session,
}

/// A model on `replies` that records every request.
pub fn scripted(replies: Vec<ModelReply>) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::replies(replies).recording(Recording::Requests))
}

/// How a [`TeamFixture`] is set up; from [`TeamFixture::builder`].
pub struct TeamBuilder {
    dir: std::path::PathBuf,
    spec: AgentSpec,
    lead: Vec<ModelReply>,
    mates: Vec<(String, Vec<ModelReply>)>,
    trust: Arc<dyn WorkspaceTrust>,
    clock: Arc<dyn Clock>,
    unscripted: Unscripted,
    questions: Questions,
    shutdown_deadline: Duration,
    board: Option<crate::board_seat::BoardSeat>,
    worktrees: Option<agent_worktree::Worktrees>,
    mcp: Option<Arc<crate::mcp_hub::McpHub>>,
    /// Answers for the lead instead of its script (a model that answers from the request).
    lead_model: Option<Arc<dyn ModelClient>>,
    /// Answers for every teammate with no script, instead of [`Unscripted`].
    mate_model: Option<Arc<dyn ModelClient>>,
    /// The hooks of each agent, by its name (none by default).
    hooks: Option<HooksFor>,
}

/// Builds the hooks of the agent it is given the name of (`lead` or a teammate's).
pub type HooksFor = Arc<dyn Fn(&str) -> HookRegistry + Send + Sync>;

impl std::fmt::Debug for TeamBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TeamBuilder")
            .field("dir", &self.dir)
            .field("unscripted", &self.unscripted)
            .field("questions", &self.questions)
            .finish_non_exhaustive()
    }
}

impl TeamBuilder {
    /// The lead's replies, in order.
    pub fn lead(mut self, replies: Vec<ModelReply>) -> Self {
        self.lead = replies;
        self
    }

    /// Teammate `name`'s replies (used if the lead starts it).
    pub fn mate(mut self, name: &str, replies: Vec<ModelReply>) -> Self {
        self.mates.push((name.to_string(), replies));
        self
    }

    /// Several teammates' replies at once.
    pub fn mates(self, mates: Vec<(&str, Vec<ModelReply>)>) -> Self {
        mates
            .into_iter()
            .fold(self, |builder, (name, replies)| builder.mate(name, replies))
    }

    /// How the lead and every teammate judge the workspace ([`TrustAll`] by default).
    pub fn trust(mut self, trust: Arc<dyn WorkspaceTrust>) -> Self {
        self.trust = trust;
        self
    }

    /// The clock the mail, the requests and the lead's schedules follow ([`SystemClock`] by
    /// default).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// What a teammate with no script runs on.
    pub fn unscripted(mut self, unscripted: Unscripted) -> Self {
        self.unscripted = unscripted;
        self
    }

    /// The board every agent of the session is seated at (chapter 17 on; none by default).
    pub fn board(mut self, board: crate::board_seat::BoardSeat) -> Self {
        self.board = Some(board);
        self
    }

    /// The repository's worktrees, given to every agent (chapter 18 on; none by default).
    pub fn worktrees(mut self, trees: agent_worktree::Worktrees) -> Self {
        self.worktrees = Some(trees);
        self
    }

    /// The lead's MCP servers (chapter 19 on; none by default): its teammates get none.
    pub fn mcp(mut self, hub: Arc<crate::mcp_hub::McpHub>) -> Self {
        self.mcp = Some(hub);
        self
    }

    /// `model` answers for the lead instead of its script ([`TeamFixture::run`] then has no
    /// script to check: drive the session).
    pub fn lead_model(mut self, model: Arc<dyn ModelClient>) -> Self {
        self.lead_model = Some(model);
        self
    }

    /// `model` answers for every teammate that has no script.
    pub fn mate_model(mut self, model: Arc<dyn ModelClient>) -> Self {
        self.mate_model = Some(model);
        self
    }

    /// Hooks for the lead and for each teammate, `hooks(name)` building the agent's own
    /// (chapter 4's registry; a subagent shares its parent's).
    pub fn hooks(mut self, hooks: impl Fn(&str) -> HookRegistry + Send + Sync + 'static) -> Self {
        self.hooks = Some(Arc::new(hooks));
        self
    }

    /// Who answers the teammates' questions.
    pub fn questions(mut self, questions: Questions) -> Self {
        self.questions = questions;
        self
    }

    /// Builds the session: the team attached, the lead added (its questions all approved).
    pub fn build(self) -> TeamFixture {
        let workspace = Workspace::new(&self.dir).unwrap();
        let mut session = Session::new(Interrupts::CancelTurn);
        let lead_model = scripted(self.lead);
        let mates: BTreeMap<String, Arc<ScriptedModel>> = self
            .mates
            .into_iter()
            .map(|(name, replies)| (name, scripted(replies)))
            .collect();
        let lead: Arc<dyn ModelClient> = match self.lead_model {
            Some(model) => model,
            None => lead_model.clone(),
        };
        let mut deps = AgentDeps::new(lead, workspace.clone());
        deps.events = session.sink(&AgentId::lead());
        deps.approval = Some(Arc::new(StaticApproval::ApproveAll));
        deps.trust = self.trust.clone();
        deps.cron_clock = self.clock.clone();
        deps.board = self.board;
        deps.worktrees = self.worktrees;
        deps.mcp = self.mcp;
        if let Some(hooks) = &self.hooks {
            deps.hooks = hooks(AgentId::lead().as_str());
        }
        let (scripts, ws, trust) = (mates.clone(), workspace.clone(), self.trust);
        let hooks = self.hooks;
        let (unscripted, questions, mate_model) =
            (self.unscripted, self.questions, self.mate_model);
        let setup = TeamSetup {
            workspace,
            clock: self.clock,
            shutdown_deadline: self.shutdown_deadline,
            teammate_deps: Arc::new(move |name, joiner| {
                let model: Arc<dyn ModelClient> = match scripts.get(name.as_str()) {
                    Some(model) => model.clone(),
                    None if mate_model.is_some() => {
                        mate_model.clone().unwrap_or_else(|| Arc::new(Silent))
                    }
                    None if unscripted == Unscripted::Silent => Arc::new(Silent),
                    None => scripted(vec![]),
                };
                let mut deps = AgentDeps::new(model, ws.clone());
                deps.events = joiner.sink(name);
                deps.approval = Some(match questions {
                    Questions::ApproveAll => Arc::new(StaticApproval::ApproveAll),
                    Questions::Session => joiner.approval(name),
                });
                deps.trust = trust.clone();
                if let Some(hooks) = &hooks {
                    deps.hooks = hooks(name.as_str());
                }
                Ok(deps)
            }),
        };
        let team = attach(&mut session, &self.spec, &mut deps, setup)
            .unwrap()
            .expect("the spec has no team capability");
        session.add(AgentId::lead(), build_agent(&self.spec, deps).unwrap());
        TeamFixture {
            session,
            lead: lead_model,
            mates,
            team,
        }
    }
}

/// A session whose lead (on [`lead`](Self::lead)) may start teammates, each on its own
/// script in [`mates`](Self::mates).
#[derive(Debug)]
pub struct TeamFixture {
    /// The session; run it with [`run`](Self::run) or by hand.
    pub session: Session,
    /// The lead's model.
    pub lead: Arc<ScriptedModel>,
    /// Each scripted teammate's model, by name.
    pub mates: BTreeMap<String, Arc<ScriptedModel>>,
    /// The team attached to the session.
    pub team: Arc<SessionTeam>,
}

impl TeamFixture {
    /// A team in the workspace `dir` whose lead is built from `spec`, with no script yet.
    pub fn builder(dir: &Path, spec: AgentSpec) -> TeamBuilder {
        TeamBuilder {
            dir: dir.to_path_buf(),
            spec,
            lead: Vec::new(),
            mates: Vec::new(),
            trust: Arc::new(TrustAll),
            clock: Arc::new(SystemClock),
            unscripted: Unscripted::default(),
            questions: Questions::default(),
            shutdown_deadline: SHUTDOWN_DEADLINE,
            board: None,
            worktrees: None,
            mcp: None,
            lead_model: None,
            mate_model: None,
            hooks: None,
        }
    }

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

    /// What `name`'s mailbox holds.
    pub fn counts(&self, name: &str) -> Counts {
        let id = AgentId::new(name).unwrap();
        self.team.mailbox().counts(&id).unwrap()
    }

    /// Every request `agent` (`lead` or a scripted teammate) sent.
    pub fn requests(&self, agent: &str) -> Vec<ModelRequest> {
        match agent {
            "lead" => self.lead.requests(),
            name => self.mates[name].requests(),
        }
    }
}

/// Counts of a mailbox that has acknowledged `n` messages and holds nothing else.
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
