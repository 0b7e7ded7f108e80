//! The composition root: turns a chapter profile into a wired [`Agent`].
//!
//! This is the only place that knows which chapter switches on what. Read it next to the
//! profile table in `agent_core::profile`: every `if profile.has(..)` here is one row there.

use std::sync::Arc;

use agent_core::{
    AgentRunner, Capability, FixedPrompt, Message, ModelClient, ModelRequest, Profile,
    RegistryError, RunError, RunObserver, ToolRegistry, TurnOutcome,
};
use agent_tools::{BashConfig, Workspace, add_bash, add_file_tools};

/// The system prompt of the chapters before the dynamic prompt (chapter 10), as Markdown so a
/// reader edits text, not code.
pub const FIXED_SYSTEM_PROMPT: &str = include_str!("../prompts/fixed_system.md");

/// What the composition root needs from outside: the model and where to work.
pub struct AgentDeps {
    pub model: Arc<dyn ModelClient>,
    pub workspace: Workspace,
    pub observer: Arc<dyn RunObserver>,
    pub max_turns: usize,
    pub bash: BashConfig,
}

impl std::fmt::Debug for AgentDeps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentDeps")
            .field("workspace", &self.workspace)
            .field("max_turns", &self.max_turns)
            .finish_non_exhaustive()
    }
}

impl AgentDeps {
    /// Defaults for everything but the model and the workspace.
    pub fn new(model: Arc<dyn ModelClient>, workspace: Workspace) -> Self {
        Self {
            model,
            workspace,
            observer: Arc::new(agent_core::seams::Silent),
            max_turns: agent_core::runner::DEFAULT_MAX_TURNS,
            bash: BashConfig::default(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Registry(#[from] RegistryError),
}

/// A built agent: the runner for its profile and the conversation so far.
#[derive(Debug)]
pub struct Agent {
    profile: Profile,
    runner: AgentRunner,
    history: Vec<Message>,
}

impl Agent {
    pub fn profile(&self) -> Profile {
        self.profile
    }

    pub fn tools(&self) -> &Arc<ToolRegistry> {
        self.runner.tools()
    }

    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// Runs one user turn, keeping the history for the next.
    pub async fn run_turn(&mut self, prompt: &str) -> Result<TurnOutcome, RunError> {
        self.runner.run_turn(&mut self.history, prompt).await
    }

    /// The request the next turn would send first, without calling the model.
    pub async fn preview_request(&self, prompt: &str) -> Result<ModelRequest, RunError> {
        let mut history = self.history.clone();
        history.push(Message::user(prompt));
        self.runner.prepare_request(&history).await
    }
}

/// Builds the agent for `profile`.
pub fn build_agent(profile: Profile, deps: AgentDeps) -> Result<Agent, BuildError> {
    let workspace = &deps.workspace;
    let mut tools = ToolRegistry::builder();
    if profile.has(Capability::Bash) {
        tools = add_bash(tools, workspace, deps.bash);
    }
    if profile.has(Capability::Files) {
        tools = add_file_tools(tools, workspace);
    }
    let tools = Arc::new(tools.build()?);

    let system = FIXED_SYSTEM_PROMPT
        .trim_end()
        .replace("{workspace}", &workspace.root().display().to_string());
    let runner = AgentRunner::builder(deps.model, tools, Arc::new(FixedPrompt(system)))
        .max_turns(deps.max_turns)
        .observer(deps.observer)
        .build();
    Ok(Agent {
        profile,
        runner,
        history: Vec::new(),
    })
}
