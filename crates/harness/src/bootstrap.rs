//! The composition root: turns an [`AgentSpec`] (a set of capabilities) into a wired [`Agent`].
//!
//! This is the only place that knows what each [`Capability`] wires in. Which capabilities a
//! chapter has is the chapter table's business (`agent-tutorial`'s `Profile`).

use std::sync::Arc;

use crate::prompts::{SUBAGENT_SYSTEM_PROMPT, dynamic_prompt, fixed_prompt, fixed_system_prompt};
use crate::{Capabilities, Capability, MemoryPlacement};
use agent_compaction::{ArtifactConfig, ArtifactStore, CompactionConfig, Compactor, OverflowSnip};
use agent_hooks::HookRegistry;

pub use crate::agent::Agent;
use agent_core::seams::{AllowAll, NoHooks};
use agent_core::{
    AgentId, AgentInbox, AgentRunner, EventSink, Events, ModelClient, NoEvents, PermissionGate,
    RegistryError, SystemPromptProvider, ToolEffect, ToolRegistry, ToolRegistryBuilder, TurnHooks,
};
use agent_cron::{Scheduler, SystemClock};
use agent_jobs::{JobConfig, JobManager};
use agent_memory::{MemoryDelivery, MemoryInjector, MemorySession, MemoryStore};
use agent_policy::{
    ApprovalProvider, Behavior, DestructiveCommands, EffectRule, PermissionPipeline, PromptWrites,
    ProtectedPaths, SecretReads, WorkspaceBoundary,
};
use agent_prompting::PromptContext;
use agent_recovery::{Fallback, RecoveringModel, RetryPolicy};
use agent_skills::{LoadSkill, SkillCatalog};
use agent_tasks::TaskStore;
use agent_tools::subagent::{self, ChildBuildError, SUBAGENT_MAX_TURNS, TaskTool};
use agent_tools::todo::{self, TodoList, TodoReminder, TodoWrite};
use agent_tools::{Background, BashConfig, Workspace, add_bash, add_bash_with, add_file_tools};

/// What the composition root needs from outside.
pub struct AgentDeps {
    pub model: Arc<dyn ModelClient>,
    pub workspace: Workspace,
    /// Receives what happens during a run: the loop's events and each feature's.
    pub events: Arc<dyn EventSink>,
    /// The agent's name in its session (its subagents are named after it).
    pub id: AgentId,
    pub max_turns: usize,
    /// Make the last allowed request a tool-less "answer now" request.
    pub final_answer: bool,
    pub bash: BashConfig,
    /// Answers `ask` decisions (chapter 3). `None` denies every `ask`.
    pub approval: Option<Arc<dyn ApprovalProvider>>,
    /// Hooks registered by the caller (chapter 4).
    pub hooks: HookRegistry,
    /// Where large results go (chapter 8).
    pub artifacts: ArtifactConfig,
    /// Snip, micro and summary settings (chapter 8).
    pub compaction: CompactionConfig,
    /// Retry parameters (chapter 11).
    pub retry: RetryPolicy,
    /// The model asked after repeated overloads (chapter 11); `None`: no switch.
    pub fallback: Option<Fallback>,
    /// The completion limit `model` sends by default (`--max-tokens`), so the retry after a
    /// cut-off reply asks for more than that (chapter 11).
    pub max_tokens: Option<u32>,
    /// Background jobs' time limit, log cap and clock (chapter 13).
    pub jobs: JobConfig,
    /// Where the scheduler's "now" comes from (chapter 14): the system clock, or a hand-set
    /// one in tests.
    pub cron_clock: Arc<dyn agent_cron::Clock>,
    /// Where the selected memories go (chapter 10 on; ignored before).
    pub memory_placement: MemoryPlacement,
    /// Whether the workspace's skills (chapter 7) and durable schedules (chapter 14) may be
    /// used. Defaults to trusting all (the caller brought the workspace); the CLI passes the
    /// user's trust store.
    pub trust: Arc<dyn agent_trust::WorkspaceTrust>,
    /// Tools and permission rules a caller adds (chapters 15–16: team tools, plan gate).
    pub extra: crate::team_runtime::Extra,
}

impl std::fmt::Debug for AgentDeps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentDeps")
            .field("workspace", &self.workspace)
            .field("max_turns", &self.max_turns)
            .field("hooks", &self.hooks)
            .finish_non_exhaustive()
    }
}

impl AgentDeps {
    /// Defaults for everything but the model and the workspace: no approval (every `ask` is
    /// denied), no hooks.
    pub fn new(model: Arc<dyn ModelClient>, workspace: Workspace) -> Self {
        Self {
            model,
            workspace,
            events: Arc::new(NoEvents),
            id: AgentId::lead(),
            max_turns: agent_core::runner::DEFAULT_MAX_TURNS,
            final_answer: false,
            bash: BashConfig::default(),
            approval: None,
            hooks: HookRegistry::new(),
            artifacts: ArtifactConfig::default(),
            compaction: CompactionConfig::default(),
            retry: RetryPolicy::default(),
            fallback: None,
            max_tokens: None,
            jobs: JobConfig::default(),
            cron_clock: Arc::new(SystemClock),
            memory_placement: MemoryPlacement::Prompt,
            trust: Arc::new(agent_trust::TrustAll),
            extra: crate::team_runtime::Extra::default(),
        }
    }
}

/// What to build: the capabilities, and the context the dynamic prompt (chapter 10) names
/// the agent by (the chapter table passes `{"chapter": 10, "profile": "P10"}`).
#[derive(Debug, Clone)]
pub struct AgentSpec {
    /// What the agent can do.
    pub capabilities: Capabilities,
    /// The `context:` line of the dynamic prompt's identity section.
    pub context: PromptContext,
}

/// Why an agent could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Two tools with one name, or a bad schema.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// The prompt context is not a JSON object of plain values.
    #[error("invalid prompt context: {0}")]
    Context(#[from] agent_prompting::ContextError),
}

/// The tools of `caps` except `task`; used for the agent and, fresh, for each subagent
/// (whose `bash` never starts background jobs: it ends before their notices could reach it).
fn base_tools(
    caps: Capabilities,
    workspace: &Workspace,
    bash: BashConfig,
    jobs: Option<&Arc<JobManager>>,
    todo: &Arc<TodoList>,
    skills: &Arc<SkillCatalog>,
) -> ToolRegistryBuilder {
    let mut tools = ToolRegistry::builder();
    if caps.has(Capability::Bash) {
        tools = match jobs {
            None => add_bash(tools, workspace, bash),
            Some(jobs) => {
                let on = Background::On(jobs.clone());
                agent_jobs::tools::add_job_tools(add_bash_with(tools, workspace, bash, on), jobs)
            }
        };
    }
    if caps.has(Capability::Files) {
        tools = add_file_tools(tools, workspace);
    }
    if caps.has(Capability::Todo) {
        tools = tools.tool(todo::spec(), Arc::new(TodoWrite(todo.clone())));
    }
    if caps.has(Capability::Skills) {
        let handler = LoadSkill {
            catalog: skills.clone(),
            workspace: workspace.clone(),
        };
        tools = tools.tool(agent_skills::spec(), Arc::new(handler));
    }
    tools
}

/// Chapter 3's pipeline: the boundary and the deny list can only deny; `bash` asks by
/// default; P03 adds "writes ask" and "reading a secret-looking file asks".
fn permission_gate(workspace: &Workspace, deps: &AgentDeps, events: &Events) -> PermissionPipeline {
    let mut pipeline = PermissionPipeline::new()
        .events(events.clone())
        .rule(Arc::new(WorkspaceBoundary(workspace.clone())))
        .rule(Arc::new(DestructiveCommands))
        // Before the effect rules, so their reason is the one shown: writes that change what
        // runs next time (`.git/`, the state folders, hooks, skills) always ask, and a task's
        // text (chapter 12) reaches every future prompt, so it asks like a write.
        .rule(Arc::new(ProtectedPaths(workspace.clone())))
        .rule(Arc::new(PromptWrites::new([
            agent_tasks::TASK_CREATE,
            agent_tasks::TASK_UPDATE,
        ])))
        .rule(Arc::new(EffectRule::new(
            "execute_asks",
            ToolEffect::Execute,
            Behavior::Ask,
            "running a command needs approval",
        )))
        .rule(Arc::new(EffectRule::new(
            "writes_ask",
            ToolEffect::Write,
            Behavior::Ask,
            "changing a file needs approval",
        )))
        .rule(Arc::new(SecretReads::new(workspace.clone())));
    if let Some(approval) = &deps.approval {
        pipeline = pipeline.approval(approval.clone());
    }
    pipeline
}

/// What a subagent shares with its parent (chapter 6): model, workspace, permission gate and
/// hooks. Its registry, plan and history are its own, built fresh for every `task` call.
struct ChildParts {
    caps: Capabilities,
    model: Arc<dyn ModelClient>,
    workspace: Workspace,
    bash: BashConfig,
    skills: Arc<SkillCatalog>,
    gate: Arc<dyn PermissionGate>,
    hooks: Arc<dyn TurnHooks>,
    events: Events,
}

impl ChildParts {
    fn runner(&self) -> Result<AgentRunner, ChildBuildError> {
        // `base_tools` never adds `task`: a subagent cannot start subagents.
        let todo = Arc::new(TodoList::new(self.events.clone()));
        let registry = base_tools(
            self.caps,
            &self.workspace,
            self.bash,
            None,
            &todo,
            &self.skills,
        )
        .build()?;
        let mut child = AgentRunner::builder(
            self.model.clone(),
            Arc::new(registry),
            fixed_prompt(SUBAGENT_SYSTEM_PROMPT, &self.workspace),
        )
        .max_turns(SUBAGENT_MAX_TURNS)
        .gate(self.gate.clone())
        .hooks(self.hooks.clone())
        .events(self.events.sink().clone());
        if self.caps.has(Capability::Todo) {
            child = child.processor(Arc::new(TodoReminder::new(self.events.clone())));
        }
        Ok(child.build())
    }
}

/// Which memories a new agent starts with selected (chapter 9 on).
#[derive(Debug, Clone, Copy)]
enum StartSelection<'a> {
    /// None: each turn selects its own.
    Empty,
    /// What a turn with this prompt would select by keywords, for a preview that never calls
    /// a model and never changes a live session.
    KeywordsFor(&'a str),
}

/// Builds the agent `spec` describes.
pub fn build_agent(spec: &AgentSpec, deps: AgentDeps) -> Result<Agent, BuildError> {
    build(spec, deps, StartSelection::Empty)
}

/// Builds an agent whose next request shows what a first turn with `prompt` would send, memories
/// selected by keywords: for `agent-tutorial prompt`. Nothing of another agent is touched.
pub fn build_preview_agent(
    spec: &AgentSpec,
    deps: AgentDeps,
    prompt: &str,
) -> Result<Agent, BuildError> {
    build(spec, deps, StartSelection::KeywordsFor(prompt))
}

/// Chapter 11: every model call of the agent (the loop's, memory's, compaction's, a
/// subagent's) goes through the recovering model. "Prompt too long" stays the loop's: its
/// overflow processor (chapter 8's group-preserving snip) compacts once and retries once.
fn recovering(deps: &AgentDeps) -> Arc<dyn ModelClient> {
    let mut model = RecoveringModel::new(deps.model.clone(), deps.retry, deps.events.clone())
        .configured_max_tokens(deps.max_tokens);
    if let Some(fallback) = &deps.fallback {
        model = model.fallback(fallback.clone());
    }
    Arc::new(model)
}

fn build(
    spec: &AgentSpec,
    mut deps: AgentDeps,
    start: StartSelection<'_>,
) -> Result<Agent, BuildError> {
    let caps = spec.capabilities;
    if caps.has(Capability::Recovery) {
        deps.model = recovering(&deps);
    }
    let workspace = deps.workspace.clone();
    let events = Events::new(deps.events.clone());
    let gate: Arc<dyn PermissionGate> = if caps.has(Capability::Policy) {
        let pipeline = permission_gate(&workspace, &deps, &events);
        Arc::new(deps.extra.add_rules(pipeline))
    } else {
        Arc::new(AllowAll)
    };
    let mut hooks = deps.hooks;
    hooks.set_events(events.clone());
    let hooks = Arc::new(hooks);
    let turn_hooks: Arc<dyn TurnHooks> = if caps.has(Capability::Hooks) {
        hooks.clone()
    } else {
        Arc::new(NoHooks)
    };

    // Scanned once, here: a skill added on disk needs a rebuild (see docs/ch07.md).
    let skills = Arc::new(if caps.has(Capability::Skills) {
        SkillCatalog::scan(&workspace).trusted(&*deps.trust)
    } else {
        SkillCatalog::default()
    });
    let todo = Arc::new(TodoList::new(events.clone()));
    // Chapter 13: the session's jobs; dropping the agent drops them and kills what still runs.
    // What reaches the agent from outside its loop (job notices, scheduled runs, and from
    // chapter 15 on mail): stored by the runner before a request, or started as a turn by the
    // session. Empty, it changes nothing in a request.
    let inbox = Arc::new(AgentInbox::new());
    let jobs = caps.has(Capability::Background).then(|| {
        let manager = JobManager::new(workspace.clone(), deps.jobs.clone())
            .inbox(inbox.clone())
            .events(events.clone());
        Arc::new(manager)
    });
    let mut tools = base_tools(caps, &workspace, deps.bash, jobs.as_ref(), &todo, &skills);
    if caps.has(Capability::Subagent) {
        let child = ChildParts {
            caps,
            model: deps.model.clone(),
            workspace: workspace.clone(),
            bash: deps.bash,
            skills: skills.clone(),
            gate: gate.clone(),
            hooks: turn_hooks.clone(),
            events: events.clone(),
        };
        tools = tools.tool(
            subagent::spec(),
            Arc::new(TaskTool::new(move || child.runner()).events(events.clone(), deps.id.clone())),
        );
    }
    // Chapter 12: the persistent task list, for the main agent only (a subagent's tools are
    // its parent's chapter-5 set: it works on one delegated job, not on the backlog).
    let task_store = caps
        .has(Capability::TaskGraph)
        .then(|| Arc::new(TaskStore::open(&workspace)));
    if let Some(store) = &task_store {
        tools = agent_tasks::register(tools, store);
    }
    // Chapter 14: scheduled prompts, for the main agent only (a subagent ends with its task;
    // the REPL that runs what is due talks to the main agent).
    let scheduler = caps.has(Capability::Cron).then(|| {
        Arc::new(Scheduler::new(&workspace, deps.cron_clock.clone()).trust(deps.trust.clone()))
    });
    if let Some(scheduler) = &scheduler {
        tools = agent_cron::add_cron_tools(tools, scheduler);
    }
    let tools = Arc::new(deps.extra.add_tools(tools).build()?);

    let memory = caps.has(Capability::Memory).then(|| {
        // Chapter 9 shows the selection as its own message; chapter 10's prompt renders it.
        let delivery = if caps.has(Capability::DynamicPrompt) {
            MemoryDelivery::InSystemPrompt
        } else {
            MemoryDelivery::OwnMessage
        };
        let session =
            MemorySession::new(MemoryStore::open(&workspace), deps.model.clone(), delivery)
                .events(events.clone())
                // What it saves reaches every future prompt: a write, decided by the gate.
                .gate(gate.clone());
        let selected = match start {
            StartSelection::Empty => Vec::new(),
            StartSelection::KeywordsFor(prompt) => {
                session.select_by_keywords(prompt).unwrap_or_else(|err| {
                    // The preview then shows no memory, as a turn whose load failed would.
                    tracing::warn!("memory: cannot load memories: {err}");
                    Vec::new()
                })
            }
        };
        Arc::new(session.with_selection(selected))
    });
    let placement = if caps.has(Capability::DynamicPrompt) {
        deps.memory_placement
    } else {
        MemoryPlacement::Prompt
    };
    let prompt: Arc<dyn SystemPromptProvider> = if caps.has(Capability::DynamicPrompt) {
        // `Reminder`: the prompt never shows memory; `Agent` stores the block in the history.
        let provider = dynamic_prompt(
            spec,
            &workspace,
            &tools,
            &skills,
            memory
                .as_ref()
                .filter(|_| placement == MemoryPlacement::Prompt),
            task_store.as_ref(),
        )?;
        Arc::new(provider.events(events.clone()))
    } else {
        fixed_system_prompt(caps, &workspace, &skills)
    };

    let mut runner = AgentRunner::builder(deps.model.clone(), tools, prompt)
        .max_turns(deps.max_turns)
        .final_answer(deps.final_answer)
        .gate(gate)
        .hooks(turn_hooks)
        .events(deps.events.clone());
    // Processor order matters: the reminder counts rounds in the full history; compaction
    // shapes the conversation; the memory message goes in last, so it is never compacted.
    if caps.has(Capability::Todo) {
        runner = runner.processor(Arc::new(TodoReminder::new(events.clone())));
    }
    if caps.has(Capability::Artifacts) {
        let store = ArtifactStore::new(workspace.clone(), deps.artifacts).events(events.clone());
        runner = runner.shaper(Arc::new(store));
    }
    if caps.has(Capability::Compaction) {
        let compactor = Compactor::new(deps.model.clone(), workspace.clone(), deps.compaction);
        runner = runner
            .processor(Arc::new(compactor.events(events.clone())))
            .overflow(Arc::new(OverflowSnip { keep_groups: 2 }));
    }
    // Only a session that delivers its own message needs the injector; in chapter 10 the
    // prompt provider reads the selection instead.
    if let Some(session) = memory
        .as_ref()
        .filter(|s| s.delivery() == MemoryDelivery::OwnMessage)
    {
        runner = runner.processor(Arc::new(MemoryInjector(session.clone())));
    }
    // Stored in the history once, before the request after a job ends (see `Inbox`).
    runner = runner.inbox(inbox.clone());
    Ok(Agent {
        spec: spec.clone(),
        runner: runner.build(),
        history: Vec::new(),
        memory,
        memory_placement: placement,
        inbox,
        jobs,
        scheduler,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_test_support::ScriptedModel;

    /// The capabilities of the chapters up to memory (chapter 9), as the chapter table has them.
    fn up_to_memory() -> Capabilities {
        Capability::ALL
            .into_iter()
            .take_while(|c| *c != Capability::DynamicPrompt)
            .collect()
    }

    /// The processors of the runner built for `capabilities`, by name, in order.
    fn processors(capabilities: Capabilities) -> Vec<&'static str> {
        let dir = tempfile::tempdir().unwrap();
        let deps = AgentDeps::new(
            Arc::new(ScriptedModel::new([])),
            Workspace::new(dir.path()).unwrap(),
        );
        let spec = AgentSpec {
            capabilities,
            context: PromptContext::from_value(serde_json::json!({})).unwrap(),
        };
        let agent = build_agent(&spec, deps).unwrap();
        agent.runner.processor_names().collect()
    }

    #[test]
    fn only_memory_without_the_dynamic_prompt_registers_the_memory_injector() {
        assert_eq!(
            processors(up_to_memory()),
            ["todo_reminder", "compaction", "memory_injector"]
        );
        assert_eq!(
            processors(up_to_memory().with(Capability::DynamicPrompt)),
            ["todo_reminder", "compaction"]
        );
    }
}
