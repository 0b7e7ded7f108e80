//! The composition root: turns a chapter profile into a wired [`Agent`].
//!
//! This is the only place that knows which chapter switches on what. Read it next to the
//! profile table in `crate::profile`: every `profile.has(..)` here is one row there.

use std::sync::Arc;

use crate::{Capability, MemoryPlacement, Profile};
use agent_compaction::{ArtifactConfig, ArtifactStore, CompactionConfig, Compactor, OverflowSnip};
use agent_hooks::HookRegistry;

pub use crate::agent::Agent;
use agent_core::seams::{AllowAll, NoHooks};
use agent_core::{
    AgentRunner, EventSink, Events, FixedPrompt, ModelClient, NoEvents, PermissionGate,
    RegistryError, SystemPromptProvider, ToolEffect, ToolRegistry, ToolRegistryBuilder, TurnHooks,
};
use agent_cron::{Scheduler, SystemClock};
use agent_jobs::{JobConfig, JobManager};
use agent_memory::{MemoryDelivery, MemoryInjector, MemorySession, MemoryStore};
use agent_policy::{
    ApprovalProvider, AuditSink, Behavior, DestructiveCommands, EffectRule, NoAudit,
    PermissionPipeline, SecretReads, WorkspaceBoundary,
};
use agent_prompting::{DynamicPromptProvider, DynamicPromptRenderer, PromptContext};
use agent_recovery::{Fallback, RecoveringModel, RetryPolicy};
use agent_skills::{LoadSkill, SkillCatalog};
use agent_tasks::TaskStore;
use agent_tools::subagent::{self, ChildBuildError, SUBAGENT_MAX_TURNS, TaskTool};
use agent_tools::todo::{self, TodoList, TodoReminder, TodoWrite};
use agent_tools::{Background, BashConfig, Workspace, add_bash, add_bash_with, add_file_tools};

/// The system prompt of the chapters before the dynamic prompt (chapter 10), as Markdown so a
/// reader edits text, not code.
pub const FIXED_SYSTEM_PROMPT: &str = include_str!("../prompts/fixed_system.md");
/// The skills paragraph appended to the fixed prompt in chapters 7–9.
pub const SKILLS_SECTION: &str = include_str!("../prompts/skills_section.md");
/// The identity section of chapter 10's dynamic prompt.
pub const IDENTITY: &str = include_str!("../prompts/identity.md");
/// The system prompt of a subagent (chapter 6).
pub const SUBAGENT_SYSTEM_PROMPT: &str = include_str!("../prompts/subagent_system.md");

/// What the composition root needs from outside.
pub struct AgentDeps {
    pub model: Arc<dyn ModelClient>,
    pub workspace: Workspace,
    /// Receives what happens during a run: the loop's events and each feature's.
    pub events: Arc<dyn EventSink>,
    pub max_turns: usize,
    /// Make the last allowed request a tool-less "answer now" request.
    pub final_answer: bool,
    pub bash: BashConfig,
    /// Answers `ask` decisions (chapter 3). `None` denies every `ask`.
    pub approval: Option<Arc<dyn ApprovalProvider>>,
    /// Receives every permission decision (chapter 3).
    pub audit: Arc<dyn AuditSink>,
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
    /// denied), no audit, no hooks.
    pub fn new(model: Arc<dyn ModelClient>, workspace: Workspace) -> Self {
        Self {
            model,
            workspace,
            events: Arc::new(NoEvents),
            max_turns: agent_core::runner::DEFAULT_MAX_TURNS,
            final_answer: false,
            bash: BashConfig::default(),
            approval: None,
            audit: Arc::new(NoAudit),
            hooks: HookRegistry::new(),
            artifacts: ArtifactConfig::default(),
            compaction: CompactionConfig::default(),
            retry: RetryPolicy::default(),
            fallback: None,
            max_tokens: None,
            jobs: JobConfig::default(),
            cron_clock: Arc::new(SystemClock),
            memory_placement: MemoryPlacement::Prompt,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error("invalid prompt context: {0}")]
    Context(#[from] agent_prompting::ContextError),
}

/// The tools of `profile` except `task`; used for the agent and, fresh, for each subagent
/// (whose `bash` never starts background jobs: it ends before their notices could reach it).
fn base_tools(
    profile: Profile,
    workspace: &Workspace,
    bash: BashConfig,
    background: Background,
    todo: &Arc<TodoList>,
    skills: &Arc<SkillCatalog>,
) -> ToolRegistryBuilder {
    let mut tools = ToolRegistry::builder();
    if profile.has(Capability::Bash) {
        tools = match background {
            Background::Off => add_bash(tools, workspace, bash),
            on => add_bash_with(tools, workspace, bash, on),
        };
    }
    if profile.has(Capability::Files) {
        tools = add_file_tools(tools, workspace);
    }
    if profile.has(Capability::Todo) {
        tools = tools.tool(todo::spec(), Arc::new(TodoWrite(todo.clone())));
    }
    if profile.has(Capability::Skills) {
        let handler = LoadSkill {
            catalog: skills.clone(),
            workspace: workspace.clone(),
        };
        tools = tools.tool(agent_skills::spec(), Arc::new(handler));
    }
    tools
}

/// The fixed system prompt of chapters 1–9; from chapter 7 on it ends with the skill catalog.
fn fixed_system_prompt(
    profile: Profile,
    workspace: &Workspace,
    skills: &SkillCatalog,
) -> Arc<FixedPrompt> {
    let mut text = FIXED_SYSTEM_PROMPT.trim_end().to_string();
    if profile.has(Capability::Skills) {
        text.push_str("\n\n");
        text.push_str(
            SKILLS_SECTION
                .trim_end()
                .replace("{catalog}", &skills.render())
                .as_str(),
        );
    }
    fixed_prompt(&text, workspace)
}

/// Chapter 3's pipeline: the boundary and the deny list can only deny; `bash` asks by
/// default; P03 adds "writes ask" and "reading a secret-looking file asks".
fn permission_gate(workspace: &Workspace, deps: &AgentDeps) -> PermissionPipeline {
    let mut pipeline = PermissionPipeline::new(deps.audit.clone())
        .rule(Arc::new(WorkspaceBoundary(workspace.clone())))
        .rule(Arc::new(DestructiveCommands))
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

fn fixed_prompt(template: &str, workspace: &Workspace) -> Arc<FixedPrompt> {
    let text = template
        .trim_end()
        .replace("{workspace}", &workspace.root().display().to_string());
    Arc::new(FixedPrompt(text))
}

/// Chapter 10's provider: identity and context bound now, tools and memory read live, the
/// skill catalog as scanned now (omitted when there is no skill).
fn dynamic_prompt(
    profile: Profile,
    workspace: &Workspace,
    tools: &Arc<ToolRegistry>,
    skills: &SkillCatalog,
    memory: Option<&Arc<MemorySession>>,
    tasks: Option<&Arc<TaskStore>>,
) -> Result<DynamicPromptProvider, BuildError> {
    #[derive(serde::Serialize)]
    struct Context {
        chapter: u8,
        profile: String,
    }
    let context = PromptContext::from_serialize(&Context {
        chapter: profile.chapter,
        profile: profile.id(),
    })?;
    let mut provider = DynamicPromptProvider::new(
        Arc::new(DynamicPromptRenderer::new()),
        IDENTITY.trim(),
        context,
        tools.clone(),
        workspace.root().display().to_string(),
    )
    .skills((!skills.is_empty()).then(|| skills.render()));
    if let Some(session) = memory {
        let session = session.clone();
        provider = provider.memory(Arc::new(move || session.render_selected()));
    }
    if let Some(store) = tasks {
        // Read from disk before every request: another process (or `agent-tutorial tasks`)
        // may have changed the list. A store that cannot be read leaves the section out.
        let store = store.clone();
        provider = provider.tasks(Arc::new(move || match store.snapshot() {
            Ok(snapshot) => agent_tasks::render::prompt_block(&snapshot.tasks),
            Err(err) => {
                tracing::warn!("tasks: cannot list open tasks for the prompt: {err}");
                None
            }
        }));
    }
    Ok(provider)
}

/// What a subagent shares with its parent (chapter 6): model, workspace, permission gate and
/// hooks. Its registry, plan and history are its own, built fresh for every `task` call.
struct ChildParts {
    profile: Profile,
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
            self.profile,
            &self.workspace,
            self.bash,
            Background::Off,
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
        if self.profile.has(Capability::Todo) {
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

/// Builds the agent for `profile`.
pub fn build_agent(profile: Profile, deps: AgentDeps) -> Result<Agent, BuildError> {
    build(profile, deps, StartSelection::Empty)
}

/// Builds an agent whose next request shows what a first turn with `prompt` would send, memories
/// selected by keywords: for `agent-tutorial prompt`. Nothing of another agent is touched.
pub fn build_preview_agent(
    profile: Profile,
    deps: AgentDeps,
    prompt: &str,
) -> Result<Agent, BuildError> {
    build(profile, deps, StartSelection::KeywordsFor(prompt))
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
    profile: Profile,
    mut deps: AgentDeps,
    start: StartSelection<'_>,
) -> Result<Agent, BuildError> {
    if profile.has(Capability::Recovery) {
        deps.model = recovering(&deps);
    }
    let workspace = deps.workspace.clone();
    let events = Events::new(deps.events.clone());
    let gate: Arc<dyn PermissionGate> = if profile.has(Capability::Policy) {
        Arc::new(permission_gate(&workspace, &deps))
    } else {
        Arc::new(AllowAll)
    };
    let mut hooks = deps.hooks;
    hooks.set_events(events.clone());
    let hooks = Arc::new(hooks);
    let turn_hooks: Arc<dyn TurnHooks> = if profile.has(Capability::Hooks) {
        hooks.clone()
    } else {
        Arc::new(NoHooks)
    };

    // Scanned once, here: a skill added on disk needs a rebuild (see docs/ch07.md).
    let skills = Arc::new(if profile.has(Capability::Skills) {
        SkillCatalog::scan(&workspace)
    } else {
        SkillCatalog::default()
    });
    let todo = Arc::new(TodoList::new(events.clone()));
    // Chapter 13: the session's jobs; dropping the agent drops them and kills what still runs.
    let jobs = profile
        .has(Capability::Background)
        .then(|| Arc::new(JobManager::new(workspace.clone(), deps.jobs.clone())));
    let background = jobs.clone().map_or(Background::Off, Background::On);
    let mut tools = base_tools(profile, &workspace, deps.bash, background, &todo, &skills);
    if profile.has(Capability::Subagent) {
        let child = ChildParts {
            profile,
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
            Arc::new(TaskTool::new(move || child.runner())),
        );
    }
    // Chapter 12: the persistent task list, for the main agent only (a subagent's tools are
    // its parent's chapter-5 set: it works on one delegated job, not on the backlog).
    let task_store = profile
        .has(Capability::TaskGraph)
        .then(|| Arc::new(TaskStore::open(&workspace)));
    if let Some(store) = &task_store {
        tools = agent_tasks::register(tools, store);
    }
    // Chapter 14: scheduled prompts, for the main agent only (a subagent ends with its task;
    // the REPL that runs what is due talks to the main agent).
    let scheduler = profile
        .has(Capability::Cron)
        .then(|| Arc::new(Scheduler::new(&workspace, deps.cron_clock.clone())));
    if let Some(scheduler) = &scheduler {
        tools = agent_cron::add_cron_tools(tools, scheduler);
    }
    let tools = Arc::new(tools.build()?);

    let memory = profile.has(Capability::Memory).then(|| {
        // Chapter 9 shows the selection as its own message; chapter 10's prompt renders it.
        let delivery = if profile.has(Capability::DynamicPrompt) {
            MemoryDelivery::InSystemPrompt
        } else {
            MemoryDelivery::OwnMessage
        };
        let session =
            MemorySession::new(MemoryStore::open(&workspace), deps.model.clone(), delivery)
                .events(events.clone());
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
    let placement = if profile.has(Capability::DynamicPrompt) {
        deps.memory_placement
    } else {
        MemoryPlacement::Prompt
    };
    let prompt: Arc<dyn SystemPromptProvider> = if profile.has(Capability::DynamicPrompt) {
        // `Reminder`: the prompt never shows memory; `Agent` stores the block in the history.
        let provider = dynamic_prompt(
            profile,
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
        fixed_system_prompt(profile, &workspace, &skills)
    };

    let mut runner = AgentRunner::builder(deps.model.clone(), tools, prompt)
        .max_turns(deps.max_turns)
        .final_answer(deps.final_answer)
        .gate(gate)
        .hooks(turn_hooks)
        .events(deps.events.clone());
    // Processor order matters: the reminder counts rounds in the full history; compaction
    // shapes the conversation; the memory message goes in last, so it is never compacted.
    if profile.has(Capability::Todo) {
        runner = runner.processor(Arc::new(TodoReminder::new(events.clone())));
    }
    if profile.has(Capability::Artifacts) {
        let store = ArtifactStore::new(workspace.clone(), deps.artifacts).events(events.clone());
        runner = runner.shaper(Arc::new(store));
    }
    if profile.has(Capability::Compaction) {
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
    if let Some(jobs) = &jobs {
        // Stored in the history once, before the request after a job ends (see `Inbox`).
        runner = runner.inbox(jobs.clone());
    }
    Ok(Agent {
        profile,
        runner: runner.build(),
        history: Vec::new(),
        memory,
        memory_placement: placement,
        jobs,
        scheduler,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_test_support::ScriptedModel;

    /// The processors `chapter`'s runner has, by name, in order. Read from the runner's
    /// `Debug` output: the runner offers no other view of them.
    fn processors(chapter: u8) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let deps = AgentDeps::new(
            Arc::new(ScriptedModel::new([])),
            Workspace::new(dir.path()).unwrap(),
        );
        let agent = build_agent(Profile::for_chapter(chapter).unwrap(), deps).unwrap();
        let debug = format!("{:?}", agent.runner);
        let list = debug
            .split_once("processors: [")
            .and_then(|(_, rest)| rest.split_once(']'))
            .map(|(list, _)| list)
            .unwrap();
        list.split(", ")
            .map(|n| n.trim_matches('"').to_string())
            .collect()
    }

    #[test]
    fn only_chapter_9_registers_the_memory_injector() {
        assert_eq!(
            processors(9),
            vec!["todo_reminder", "compaction", "memory_injector"]
        );
        assert_eq!(processors(10), vec!["todo_reminder", "compaction"]);
    }
}
