//! [`Assembly`]: the agent being built, into which each feature installs itself, and
//! [`ChildAssembly`], the same for one subagent.

use std::sync::Arc;

use agent_core::seams::{AllowAll, NoHooks};
use agent_core::{
    AgentInbox, AgentRunner, AgentRunnerBuilder, Events, PermissionGate, RegistryError,
    ToolRegistry, ToolRegistryBuilder, TurnHooks,
};
use agent_cron::Scheduler;
use agent_jobs::JobManager;
use agent_memory::MemorySession;
use agent_policy::PermissionRule;
use agent_prompting::PromptSection;

use super::{Features, PromptStyle};
use crate::agent::MemoryUse;
use crate::prompts::{dynamic_prompt, fixed_system_prompt};
use crate::{Agent, AgentDeps, AgentSpec, BuildError, MemoryPlacement};

/// Where a feature's tools go in the registry: the order the model is sent them in, whatever
/// order the features are installed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ToolSlot {
    /// `bash` (chapter 1).
    Bash,
    /// `job_output`, `job_kill` (chapter 13), right after the `bash` that starts the jobs.
    Jobs,
    /// `read_file`, `write_file`, `edit_file`, `glob` (chapter 2).
    Files,
    /// `todo_write` (chapter 5).
    Todo,
    /// `load_skill` (chapter 7).
    Skills,
    /// `task` (chapter 6).
    Subagent,
    /// The task-list tools (chapter 12).
    Tasks,
    /// The task-board tools (chapter 17), after the task list's.
    Board,
    /// The lead's worktree tools (chapter 18), after the board's.
    Worktrees,
    /// The schedule tools (chapter 14).
    Cron,
    /// `spawn_teammate` (chapter 15).
    Spawn,
    /// `send_message` (chapter 15), right after it.
    Mail,
    /// `list_teammates` (chapter 15).
    Roster,
    /// The protocol tools (chapter 16): the lead's `request_shutdown`, `review_plan`, a
    /// teammate's `submit_plan`.
    Protocols,
    /// `connect_mcp`, `disconnect_mcp` (chapter 19); a server's own tools are appended to
    /// the live registry after every built-in.
    Mcp,
}

/// Adds one feature's tools to a registry.
type AddTools = Box<dyn FnOnce(ToolRegistryBuilder) -> ToolRegistryBuilder + Send>;

/// The tools features add, each at its slot.
#[derive(Default)]
pub(crate) struct Tools(Vec<(ToolSlot, AddTools)>);

impl Tools {
    /// Adds what `add` registers at `slot`; within a slot, in the order added.
    pub(crate) fn add(
        &mut self,
        slot: ToolSlot,
        add: impl FnOnce(ToolRegistryBuilder) -> ToolRegistryBuilder + Send + 'static,
    ) {
        self.0.push((slot, Box::new(add)));
    }

    /// The registry, slot by slot.
    pub(crate) fn build(mut self) -> Result<ToolRegistry, RegistryError> {
        // Stable: a slot's tools keep the order they were added in.
        self.0.sort_by_key(|(slot, _)| *slot);
        self.0
            .into_iter()
            .fold(ToolRegistry::builder(), |tools, (_, add)| add(tools))
            .build()
    }
}

/// One step of setting up the runner (a history processor, the result shaper, the overflow
/// processor), applied in the order the features are installed.
pub(crate) type RunnerStep = Box<dyn FnOnce(AgentRunnerBuilder) -> AgentRunnerBuilder + Send>;

/// What one feature gives each subagent, run once for every `task` call (chapter 6).
pub(crate) type ChildInstall = Arc<dyn Fn(&mut ChildAssembly) + Send + Sync>;

/// Which memories a new agent starts with selected (chapter 9 on).
#[derive(Debug, Clone, Copy)]
pub(crate) enum StartSelection<'a> {
    /// None: each turn selects its own.
    Empty,
    /// What a turn with this prompt would select by keywords, for a preview that never calls
    /// a model and never changes a live session.
    KeywordsFor(&'a str),
}

/// The agent being built. Each installed feature takes what it needs from `deps` and the
/// shared parts (model, gate, hooks, inbox) and adds what it brings.
pub(crate) struct Assembly<'a> {
    /// What is built.
    pub(crate) spec: &'a AgentSpec,
    /// The answers of the same walk, for features that depend on another's presence.
    pub(crate) features: Features,
    /// Which memories the agent starts with selected.
    pub(crate) start: StartSelection<'a>,
    /// What the caller brought; `deps.model` is the model every feature uses (chapter 11's
    /// recovering one, once it is installed).
    pub(crate) deps: AgentDeps,
    /// Where features tell what they do.
    pub(crate) events: Events,
    /// Decides every call; allows all until chapter 3's pipeline is installed.
    pub(crate) gate: Arc<dyn PermissionGate>,
    /// Rules other features add to chapter 3's pipeline, after its own (chapter 16's plan
    /// gate); the policy feature takes them when it builds the pipeline.
    pub(crate) rules: Vec<Arc<dyn PermissionRule>>,
    /// Runs around every call; none until chapter 4.
    pub(crate) hooks: Arc<dyn TurnHooks>,
    /// What reaches the agent from outside its loop (job notices, scheduled runs, and from
    /// chapter 15 on mail): stored by the runner before a request, or started as a turn by the
    /// session. Empty, it changes nothing in a request.
    pub(crate) inbox: Arc<AgentInbox>,
    /// The tools, each at its slot.
    pub(crate) tools: Tools,
    /// The runner's processors and shapers, in installation order.
    pub(crate) runner: Vec<RunnerStep>,
    /// The optional sections of chapter 10's prompt, each placed by its own order.
    pub(crate) sections: Vec<PromptSection>,
    /// Paragraphs appended to the fixed prompt of chapters 1–9.
    pub(crate) paragraphs: Vec<String>,
    /// What a subagent gets, feature by feature.
    pub(crate) children: Vec<ChildInstall>,
    /// The background jobs (chapter 13 on); the session kills them when it ends.
    pub(crate) jobs: Option<Arc<JobManager>>,
    /// The scheduled prompts (chapter 14 on); the session runs what is due.
    pub(crate) scheduler: Option<Arc<Scheduler>>,
    /// The per-turn memory lifecycle (chapter 9 on).
    pub(crate) memory: Option<Arc<MemorySession>>,
    /// The lead's MCP servers (chapter 19 on); bound to the registry once it is built, closed
    /// by the session when it ends.
    pub(crate) mcp: Option<Arc<crate::mcp_hub::McpHub>>,
    /// Where a teammate's `bash` and file tools run (chapter 18 on): `None`, the workspace.
    pub(crate) route: Option<Arc<crate::routing::Router>>,
    /// Where the selected memories go.
    pub(crate) memory_placement: MemoryPlacement,
    /// Whether the agent's turns save memories.
    pub(crate) memory_use: MemoryUse,
}

impl<'a> Assembly<'a> {
    pub(crate) fn new(
        spec: &'a AgentSpec,
        features: Features,
        deps: AgentDeps,
        start: StartSelection<'a>,
    ) -> Self {
        Self {
            spec,
            features,
            start,
            events: Events::new(deps.events.clone()),
            deps,
            gate: Arc::new(AllowAll),
            rules: Vec::new(),
            hooks: Arc::new(NoHooks),
            inbox: Arc::new(AgentInbox::new()),
            tools: Tools::default(),
            runner: Vec::new(),
            sections: Vec::new(),
            paragraphs: Vec::new(),
            children: Vec::new(),
            jobs: None,
            scheduler: None,
            memory: None,
            mcp: None,
            route: None,
            memory_placement: MemoryPlacement::Prompt,
            memory_use: MemoryUse::ReadWrite,
        }
    }

    /// Adds a step to the runner's set-up, after the steps of the features installed before.
    pub(crate) fn runner(
        &mut self,
        step: impl FnOnce(AgentRunnerBuilder) -> AgentRunnerBuilder + Send + 'static,
    ) {
        self.runner.push(Box::new(step));
    }

    /// Gives every subagent what `install` adds.
    pub(crate) fn for_children(
        &mut self,
        install: impl Fn(&mut ChildAssembly) + Send + Sync + 'static,
    ) {
        self.children.push(Arc::new(install));
    }

    /// The agent: the registry built, the prompt chosen, the runner set up.
    pub(crate) fn finish(self) -> Result<Agent, BuildError> {
        let workspace = self.deps.workspace.clone();
        let tools = Arc::new(self.tools.build()?);
        if let Some(hub) = &self.mcp {
            hub.bind(&tools);
        }
        let prompt: Arc<dyn agent_core::SystemPromptProvider> = match self.features.prompt {
            PromptStyle::Dynamic => {
                let provider = dynamic_prompt(self.spec, &workspace, &tools, self.sections);
                Arc::new(provider.events(self.events.clone()))
            }
            PromptStyle::Fixed => fixed_system_prompt(&workspace, &self.paragraphs),
        };
        let mut runner = AgentRunner::builder(self.deps.model.clone(), tools, prompt)
            .max_turns(self.deps.max_turns)
            .final_answer(self.deps.final_answer)
            .gate(self.gate)
            .hooks(self.hooks)
            .events(self.deps.events.clone());
        // First: it must see the history as stored, before any feature's processor shapes it.
        if let Some(log) = &self.deps.history_log {
            runner = runner.processor(Arc::new(crate::history_log::HistoryRecorder(log.clone())));
        }
        for step in self.runner {
            runner = step(runner);
        }
        // Stored in the history once, before the request after a job ends (see `Inbox`).
        runner = runner.inbox(self.inbox.clone());
        Ok(Agent {
            spec: self.spec.clone(),
            runner: runner.build(),
            history: Vec::new(),
            memory: self.memory,
            memory_placement: self.memory_placement,
            memory_use: self.memory_use,
            inbox: self.inbox,
            jobs: self.jobs,
            scheduler: self.scheduler,
            mcp: self.mcp,
            log: self.deps.history_log.clone(),
        })
    }
}

/// One subagent being built (chapter 6): its registry and plan are its own, built fresh for
/// every `task` call; model, gate and hooks are its parent's.
pub(crate) struct ChildAssembly {
    /// Where the child's features tell what they do (its parent's sink).
    pub(crate) events: Events,
    /// The child's tools.
    pub(crate) tools: Tools,
    /// The child's processors, in the order its features were installed.
    pub(crate) runner: Vec<RunnerStep>,
}

impl ChildAssembly {
    /// Adds a step to the child runner's set-up.
    pub(crate) fn runner(
        &mut self,
        step: impl FnOnce(AgentRunnerBuilder) -> AgentRunnerBuilder + Send + 'static,
    ) {
        self.runner.push(Box::new(step));
    }
}
