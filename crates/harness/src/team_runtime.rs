//! Chapters 15–16 wired into the session: the [`TeamRuntime`] the team tools call, over the
//! [`Session`] that owns the agents.
//!
//! - A teammate is a session agent: `spawn_teammate` builds it with [`build_agent`] (the lead's
//!   model, permission settings and hooks, the project's trusted skills and memory (read
//!   only), its own history; its team tools and plan gate from
//!   its [`TeamSeat`], installed by the team features like every capability's part) and hands it to the running loop
//!   through the session's [`Joiner`]; its events and approval questions carry its name.
//! - Mail is durable first: every message is a file in the recipient's mailbox
//!   (`agent_team::Mailbox`); sending one wakes the recipient through the session. An idle
//!   agent's next turn is its oldest message, claimed from the mailbox and rendered as a typed
//!   fragment (`delivery`), and acknowledged only when that turn has ended with the message in
//!   the agent's history. While an agent is mid-turn its mail waits: the session asks for work
//!   only for idle agents, so no tool call is ever separated from its result.
//! - A teammate's final answer goes to the lead as a `result` message, which wakes the lead
//!   with no input from the person.
//! - A shutdown request (chapter 16) is answered by the teammate's runtime, not its model: the
//!   answer is recorded and sent, the request acknowledged, and the session drops the agent.
//! - When the session ends, each turn it cuts short puts its message back in `ready`; one that
//!   cannot be moved does not stop the others and stays held until [`SessionTeam::close`]
//!   is tried again (or the next session's recovery puts it back).

mod autonomy;
mod delivery;

pub use autonomy::AutonomyConfig;
pub use delivery::{CloseError, Unreleased};

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use agent_core::AgentId;
use agent_prompting::PromptContext;
use agent_skills::SkillCatalog;
use agent_team::{
    Deliveries, MailKind, MailMessage, Mailbox, Member, PlanRequirement, ProtocolRequest,
    RequestKind, RequestStore, Roster, RuntimeError, TeamFile, TeamRecord, TeamRuntime, TeamTools,
    TeammateSpec, TeammateStatus,
};
use agent_trust::{TrustKind, Verdict};
use agent_workspace::{Clock, Workspace};
use async_trait::async_trait;

use crate::session::{Joiner, Session};
use crate::{AgentDeps, AgentSpec, Capabilities, Capability, Features, Team, build_agent};

/// An agent's place in a team ([`AgentDeps::team`]): what the team features (teammates,
/// mailbox, protocols, plan gate) install from. Which of them are installed is the agent's
/// capabilities' business; a seat alone switches nothing on.
#[derive(Debug, Clone, Default)]
pub enum TeamSeat {
    /// In no team: the team features install nothing.
    #[default]
    Alone,
    /// The lead: it starts teammates, writes to them and, with the protocols, asks them to
    /// stop and reviews their plans.
    Lead(TeamTools),
    /// A teammate, named by [`AgentDeps::id`]: it writes to the others and, with the
    /// protocols, submits plans; with the plan gate its changes wait for an approved plan.
    Teammate {
        /// The stores and the runtime its tools work on.
        tools: TeamTools,
        /// Whether its gate is closed before its first plan.
        plan: PlanRequirement,
    },
}

/// The capabilities a teammate may have, whatever the lead has: its fixed tool set (`bash`,
/// the file tools, `send_message`, `submit_plan`), its plan gate, the project's skills
/// (`load_skill`) and memory (read only) and what shapes its loop without adding a tool. No
/// subagents, tasks, jobs or schedules, and no teammates of its own: a teammate works on the
/// lead's messages.
const TEAMMATE_CAPABILITIES: [Capability; 15] = [
    Capability::Bash,
    Capability::Files,
    Capability::Policy,
    Capability::Hooks,
    Capability::Artifacts,
    Capability::Compaction,
    Capability::DynamicPrompt,
    Capability::Recovery,
    Capability::Mailbox,
    Capability::Protocols,
    Capability::PlanGate,
    Capability::Skills,
    Capability::Memory,
    // Chapter 17: the board's tools (all but `create_task`), acting as the teammate.
    Capability::TaskBoard,
    // Chapter 18: its calls routed to the worktree of the task it holds (no tool).
    Capability::Worktrees,
];

/// The trust verdict on the workspace's skills, `None` when there is none. A teammate gets
/// the project's skills — the catalog and `load_skill`, which only reads a catalogued
/// `SKILL.md` inside the workspace, as `read_file` could, so its fixed tool set gains no
/// power — only when there are trusted ones: with none there is nothing to load, and its
/// requests stay those of a team without skills. Asked without reporting a refusal (the
/// lead's start reported it); the skills feature checks the trust again when it scans.
fn trusted_skills(deps: &AgentDeps) -> Option<Verdict> {
    let print = SkillCatalog::scan(&deps.workspace).fingerprint()?;
    Some(deps.trust.verdict(TrustKind::Skills, &print))
}

/// Why something a teammate needs could not be made.
pub type SetupError = Box<dyn std::error::Error + Send + Sync>;

/// Makes a teammate's [`AgentDeps`] (the lead's model and settings), given its name and the
/// joiner whose sink and approval provider it must be built with.
pub type TeammateDeps =
    Arc<dyn Fn(&AgentId, &Joiner) -> Result<AgentDeps, SetupError> + Send + Sync>;

/// What [`attach`] needs besides the session.
pub struct TeamSetup {
    /// The workspace the mailboxes and the request store live in.
    pub workspace: Workspace,
    /// The clock messages and requests are stamped with.
    pub clock: Arc<dyn Clock>,
    /// How a teammate's dependencies are made.
    pub teammate_deps: TeammateDeps,
    /// How long a teammate has to answer a shutdown request before it is stopped by force
    /// ([`SHUTDOWN_DEADLINE`] unless a test says otherwise).
    pub shutdown_deadline: Duration,
}

/// How long a teammate has to answer a shutdown request: it answers between turns, so this is
/// how long its running turn may go on after it was asked to stop.
pub const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(30);

impl std::fmt::Debug for TeamSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TeamSetup")
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

/// Why the team could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    /// The lead's mailbox could not be recovered.
    #[error(transparent)]
    Mail(#[from] agent_team::MailError),
    /// The team file could not be written.
    #[error(transparent)]
    File(#[from] agent_team::TeamFileError),
}

/// One teammate as the runtime keeps it.
#[derive(Debug, Clone)]
struct Mate {
    record: TeamRecord,
}

/// What changes while the session runs.
#[derive(Debug, Default)]
struct State {
    /// In the order they were started.
    mates: Vec<Mate>,
    /// Agents that may have mail waiting (told by `mail_sent`, cleared when a claim finds
    /// none): the mailbox is read only for them.
    pending: BTreeSet<AgentId>,
    /// The message each agent's running turn delivers.
    in_flight: BTreeMap<AgentId, MailMessage>,
    /// The session has ended: no teammate can start.
    closed: bool,
    /// How idle teammates poll the board (chapter 17); `None`: they wait for mail.
    autonomy: Option<AutonomyConfig>,
    /// Each teammate's plan requirement, for the gate checked before a claim.
    plans: BTreeMap<AgentId, PlanRequirement>,
    /// Agents whose first message's turn has ended (a teammate polls only after it).
    started: BTreeSet<AgentId>,
    /// Teammates whose poll runs.
    polling: BTreeSet<AgentId>,
    /// Teammates that found no open task for the idle limit: their poll looks only when the
    /// board changes. The value: the board's change count their last look saw (a later one
    /// means a look is due, and the session waits for it).
    resting: BTreeMap<AgentId, u64>,
    /// Teammates that gave a task back unfinished: no poll until their next message.
    parked: BTreeSet<AgentId>,
    /// Teammates whose unfinished task is being given back.
    releasing: BTreeSet<AgentId>,
    /// A task a poll claimed, waiting for its teammate's next turn.
    ready: BTreeMap<AgentId, (agent_board::Task, agent_board::Claim)>,
    /// The claim each agent's running task turn works on.
    tasks: BTreeMap<AgentId, agent_board::Claim>,
}

impl State {
    fn roster(&self) -> Roster {
        Roster::new(
            self.mates
                .iter()
                .map(|m| Member {
                    name: m.record.name.clone(),
                    role: m.record.role.clone(),
                    status: m.record.status,
                })
                .collect(),
        )
    }

    fn mate(&mut self, name: &AgentId) -> Option<&mut TeamRecord> {
        self.mates
            .iter_mut()
            .map(|m| &mut m.record)
            .find(|r| &r.name == name)
    }
}

/// The team of one session: the [`TeamRuntime`] of the team tools and the session's
/// [`crate::session::TurnSource`].
pub struct SessionTeam {
    me: Weak<SessionTeam>,
    joiner: Joiner,
    mailbox: Arc<Mailbox>,
    requests: Arc<RequestStore>,
    /// What each agent's last delivered message came to (`delivery`), across a crash.
    journal: Deliveries,
    file: TeamFile,
    lead: AgentSpec,
    teammate_deps: TeammateDeps,
    shutdown_deadline: Duration,
    /// The lead's board (chapter 17), given to every teammate.
    board: Option<crate::board_seat::BoardSeat>,
    /// The repository's worktrees (chapter 18), given to every teammate.
    worktrees: Option<agent_worktree::Worktrees>,
    /// Stops every poll to look again at whether it should go on (mail, a shutdown, the end).
    stop_polls: Arc<tokio::sync::Notify>,
    state: Mutex<State>,
}

impl std::fmt::Debug for SessionTeam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionTeam")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

/// Sets up the team of a session whose lead is built from `lead` (chapter 15 on; `None`
/// before): the lead takes its seat in `lead_deps` (its team tools), and the session asks the
/// team for the work of idle agents. Mail the lead had not acknowledged when an earlier process died goes
/// back to `ready` and is delivered first.
pub fn attach(
    session: &mut Session,
    lead: &AgentSpec,
    lead_deps: &mut AgentDeps,
    setup: TeamSetup,
) -> Result<Option<Arc<SessionTeam>>, TeamError> {
    if Features::of(lead.capabilities).team == Team::Alone {
        return Ok(None);
    }
    let mailbox = Arc::new(Mailbox::new(setup.workspace.clone(), setup.clock.clone()));
    let requests = Arc::new(RequestStore::new(setup.workspace.clone(), setup.clock));
    let lead_id = AgentId::lead();
    let recovered = mailbox.recover(&lead_id)?;
    if recovered > 0 {
        tracing::info!(
            recovered,
            "team: mail left in processing went back to ready"
        );
    }
    let journal = Deliveries::new(&setup.workspace);
    if let Err(err) = journal.remove_leftovers() {
        tracing::warn!("team: {err}");
    }
    let file = TeamFile::new(&setup.workspace);
    // A new session starts with no teammate; the file says so at once.
    file.save(&[])?;
    let team = Arc::new_cyclic(|me| SessionTeam {
        me: me.clone(),
        joiner: session.joiner(),
        mailbox,
        requests,
        journal,
        file,
        lead: lead.clone(),
        teammate_deps: setup.teammate_deps,
        shutdown_deadline: setup.shutdown_deadline,
        board: lead_deps.board.clone(),
        worktrees: lead_deps.worktrees.clone(),
        stop_polls: Arc::default(),
        state: Mutex::new(State {
            // Mail from an earlier session may wait for the lead.
            pending: BTreeSet::from([lead_id]),
            autonomy: (Features::of(lead.capabilities).autonomy == crate::Autonomy::On)
                .then(AutonomyConfig::default),
            ..State::default()
        }),
    });
    lead_deps.team = TeamSeat::Lead(team.tools());
    // Chapter 15's mail first, then (chapter 17) the board.
    session.set_source(Arc::new(autonomy::Source(team.clone())));
    Ok(Some(team))
}

/// For a preview of the lead's first request (`agent-tutorial prompt`): the lead's seat as
/// `attach` gives it, over a runtime that has no teammate and starts none. Nothing is read or
/// written; an agent whose capabilities have no team ignores the seat.
pub fn preview(lead_deps: &mut AgentDeps) {
    let workspace = lead_deps.workspace.clone();
    let clock: Arc<dyn Clock> = Arc::new(agent_workspace::SystemClock);
    lead_deps.team = TeamSeat::Lead(TeamTools {
        mailbox: Arc::new(Mailbox::new(workspace.clone(), clock.clone())),
        requests: Arc::new(RequestStore::new(workspace, clock)),
        runtime: Arc::new(Closed),
    });
}

impl SessionTeam {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The team tools, calling this runtime.
    fn tools(&self) -> TeamTools {
        let runtime: Arc<dyn TeamRuntime> = match self.me.upgrade() {
            Some(me) => me,
            // Only while the team is being dropped; nothing calls it then.
            None => Arc::new(Closed),
        };
        TeamTools {
            mailbox: self.mailbox.clone(),
            requests: self.requests.clone(),
            runtime,
        }
    }

    /// The mailboxes.
    pub fn mailbox(&self) -> &Arc<Mailbox> {
        &self.mailbox
    }

    /// The protocol requests.
    pub fn requests(&self) -> &Arc<RequestStore> {
        &self.requests
    }

    /// The teammates as the team file keeps them.
    pub fn records(&self) -> Vec<TeamRecord> {
        self.state()
            .mates
            .iter()
            .map(|m| m.record.clone())
            .collect()
    }

    /// Writes the team file (a failure is logged: the file is a view, the session goes on).
    fn save(&self, state: &State) {
        let records: Vec<TeamRecord> = state.mates.iter().map(|m| m.record.clone()).collect();
        if let Err(err) = self.file.save(&records) {
            let why = std::error::Error::source(&err).map(ToString::to_string);
            tracing::warn!("team: {err}: {}", why.unwrap_or_default());
        }
    }

    /// What a teammate is built from: the lead's capabilities cut to a teammate's, and the
    /// lead's prompt context with its name and role.
    fn teammate_spec(
        &self,
        spec: &TeammateSpec,
        deps: &AgentDeps,
    ) -> Result<AgentSpec, RuntimeError> {
        let skills = trusted_skills(deps);
        let capabilities = TEAMMATE_CAPABILITIES
            .into_iter()
            .filter(|c| *c != Capability::Skills || skills == Some(Verdict::Trusted))
            .collect::<Capabilities>()
            .intersection(self.lead.capabilities);
        let mut context = self.lead.context.as_map().clone();
        context.insert("teammate".into(), spec.name.as_str().into());
        context.insert("role".into(), spec.role.as_str().into());
        let context = PromptContext::from_value(serde_json::Value::Object(context))
            .map_err(|err| RuntimeError::Other(Box::new(err)))?;
        Ok(AgentSpec {
            capabilities,
            context,
        })
    }

    /// Sends `body` from `from` to `to` as `kind` and wakes `to`; a failure is logged (the
    /// caller has nothing better to do with it).
    fn send(&self, from: &AgentId, to: &AgentId, kind: MailKind, body: &str) {
        let roster = self.roster();
        match self.mailbox.send(&roster, from, to.as_str(), kind, body) {
            Ok(mail) => self.mail_sent(&mail.to),
            Err(err) => tracing::warn!("team: a message from {from} to {to} was not sent: {err}"),
        }
    }
}

#[async_trait]
impl TeamRuntime for SessionTeam {
    fn roster(&self) -> Roster {
        self.state().roster()
    }

    async fn spawn(&self, spec: TeammateSpec) -> Result<(), RuntimeError> {
        if self.state().closed {
            return Err(RuntimeError::Closing);
        }
        let name = spec.name.clone();
        let mut deps = (self.teammate_deps)(&name, &self.joiner).map_err(RuntimeError::Other)?;
        deps.id = name.clone();
        deps.board = self.board.clone();
        deps.worktrees = self.worktrees.clone();
        deps.team = TeamSeat::Teammate {
            tools: self.tools(),
            plan: spec.plan,
        };
        let agent = build_agent(&self.teammate_spec(&spec, &deps)?, deps)
            .map_err(|err| RuntimeError::Other(Box::new(err)))?;
        {
            let mut state = self.state();
            // Checked again under the lock: two spawns in one batch must not both pass.
            state
                .roster()
                .admit(&name)
                .map_err(|err| RuntimeError::Other(Box::new(err)))?;
            state.plans.insert(name.clone(), spec.plan);
            state.mates.push(Mate {
                record: TeamRecord {
                    name: name.clone(),
                    role: spec.role.clone(),
                    status: TeammateStatus::Idle,
                    current: None,
                    last_result: None,
                },
            });
            self.save(&state);
        }
        if self.joiner.add(name.clone(), agent).is_err() {
            let mut state = self.state();
            if let Some(record) = state.mate(&name) {
                record.status = TeammateStatus::ShutDown;
            }
            self.save(&state);
            return Err(RuntimeError::Closing);
        }
        // A mailbox of this name from an earlier session: what a dead process held goes
        // back to `ready` (it is delivered before the first task, at least once).
        if let Err(err) = self.mailbox.recover(&name) {
            tracing::warn!("team: cannot recover the mailbox of {name}: {err}");
        }
        // Its first task is the lead's first message: durable like every other.
        let roster = self.roster();
        let sent = self
            .mailbox
            .send(
                &roster,
                &AgentId::lead(),
                name.as_str(),
                MailKind::Message,
                &spec.prompt,
            )
            .map_err(|err| RuntimeError::Other(Box::new(err)))?;
        self.mail_sent(&sent.to);
        Ok(())
    }

    fn mail_sent(&self, recipient: &AgentId) {
        self.state().pending.insert(recipient.clone());
        self.joiner.wake(recipient);
    }

    /// A shutdown that is still pending after the deadline is forced (see `delivery`).
    fn request_sent(&self, request: &ProtocolRequest) {
        if request.kind != RequestKind::Shutdown {
            return;
        }
        let (me, id, deadline) = (self.me.clone(), request.id.clone(), self.shutdown_deadline);
        tokio::spawn(async move {
            tokio::time::sleep(deadline).await;
            if let Some(team) = me.upgrade() {
                team.force_if_unanswered(&id);
            }
        });
    }
}

/// The runtime of a team being dropped: it has no teammate and starts none.
#[derive(Debug)]
struct Closed;

#[async_trait]
impl TeamRuntime for Closed {
    fn roster(&self) -> Roster {
        Roster::default()
    }

    async fn spawn(&self, _spec: TeammateSpec) -> Result<(), RuntimeError> {
        Err(RuntimeError::Closing)
    }

    fn mail_sent(&self, _recipient: &AgentId) {}
}
