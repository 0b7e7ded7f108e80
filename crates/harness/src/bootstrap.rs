//! The composition root: turns an [`AgentSpec`] (a set of capabilities) into a wired [`Agent`].
//!
//! What each [`Capability`](crate::Capability) wires in is its feature module's business
//! (`crate::features`); this module holds what the caller brings ([`AgentDeps`]) and the one
//! walk over the features. Which capabilities a chapter has is the chapter table's business
//! (`agent-tutorial`'s `Profile`).

use std::sync::Arc;

use crate::features::{Assembly, StartSelection, installed};
use crate::team_runtime::TeamSeat;
use crate::{Capabilities, Features, MemoryPlacement};
use agent_compaction::{ArtifactConfig, CompactOnDemand, CompactionConfig};
use agent_hooks::HookRegistry;

pub use crate::agent::Agent;
use agent_core::{AgentId, EventSink, ModelClient, NoEvents, RegistryError};
use agent_cron::SystemClock;
use agent_jobs::JobConfig;
use agent_policy::ApprovalProvider;
use agent_prompting::PromptContext;
use agent_recovery::{Fallback, RetryPolicy};
use agent_tools::{BashConfig, Workspace};

/// What the composition root needs from outside.
pub struct AgentDeps {
    /// The model every call goes to (chapter 11 wraps it in the recovering model).
    pub model: Arc<dyn ModelClient>,
    /// The directory the agent works in: every path goes through its boundary.
    pub workspace: Workspace,
    /// Receives what happens during a run: the loop's events and each feature's.
    pub events: Arc<dyn EventSink>,
    /// The agent's name in its session (its subagents are named after it).
    pub id: AgentId,
    /// The most model requests one turn may make.
    pub max_turns: usize,
    /// Make the last allowed request a tool-less "answer now" request.
    pub final_answer: agent_core::FinalAnswer,
    /// `bash`'s time limit and output cap (chapter 1).
    pub bash: BashConfig,
    /// Answers `ask` decisions (chapter 3). `None` denies every `ask`.
    pub approval: Option<Arc<dyn ApprovalProvider>>,
    /// Hooks registered by the caller (chapter 4).
    pub hooks: HookRegistry,
    /// Where large results go (chapter 8).
    pub artifacts: ArtifactConfig,
    /// Snip, micro and summary settings (chapter 8).
    pub compaction: CompactionConfig,
    /// Where a front end asks this agent's compactor for a summary at the next request
    /// (chapter 20's `/compact`); a fresh handle nobody holds asks for nothing.
    pub compact_on_demand: CompactOnDemand,
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
    /// The agent's place in a team (chapters 15–16): what the team features install their
    /// tools and the plan gate from. [`TeamSeat::Alone`] by default; `team_runtime` seats
    /// the lead and each teammate.
    pub team: TeamSeat,
    /// The session's task board (chapter 17), shared by the lead and its teammates; `None`:
    /// the board feature installs nothing.
    pub board: Option<crate::board_seat::BoardSeat>,
    /// The repository's worktrees (chapter 18 on), shared by the lead and its teammates;
    /// `None`: nobody works in a worktree.
    pub worktrees: Option<agent_worktree::Worktrees>,
    /// The workspace's MCP servers (chapter 19 on), the lead's only; `None`: no MCP tool.
    pub mcp: Option<Arc<crate::mcp_hub::McpHub>>,
    /// Where the agent's history is kept as it grows, so the session can be continued
    /// (chapter 11 on, the lead's only; see [`crate::HistoryLog`]). `None`: nowhere.
    pub history_log: Option<Arc<dyn crate::HistoryLog>>,
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
            final_answer: agent_core::FinalAnswer::Off,
            bash: BashConfig::default(),
            approval: None,
            hooks: HookRegistry::new(),
            artifacts: ArtifactConfig::default(),
            compaction: CompactionConfig::default(),
            compact_on_demand: CompactOnDemand::default(),
            retry: RetryPolicy::default(),
            fallback: None,
            max_tokens: None,
            jobs: JobConfig::default(),
            cron_clock: Arc::new(SystemClock),
            memory_placement: MemoryPlacement::Prompt,
            trust: Arc::new(agent_trust::TrustAll),
            team: TeamSeat::Alone,
            board: None,
            worktrees: None,
            mcp: None,
            history_log: None,
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

/// Builds the agent `spec` describes: each capability's feature installs itself.
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

/// Walks the features of `spec`'s capabilities once: each installs itself, in the table's
/// order (see [`crate::features`]).
fn build(
    spec: &AgentSpec,
    deps: AgentDeps,
    start: StartSelection<'_>,
) -> Result<Agent, BuildError> {
    let installed: Vec<_> = installed(spec.capabilities).collect();
    // What the features tell first: one may depend on another's presence (memory on the
    // rendered prompt) whatever their installation order.
    let features = Features::told_by(installed.iter().copied());
    let mut agent = Assembly::new(spec, features, deps, start);
    for feature in installed {
        feature.install(&mut agent)?;
    }
    agent.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Capability;
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
