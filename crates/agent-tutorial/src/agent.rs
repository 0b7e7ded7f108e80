//! `Agent`: what `build_agent` returns — the runner for one profile, the conversation so far,
//! and the per-turn memory lifecycle around the loop.

use std::sync::Arc;

use crate::Profile;
use agent_compaction::Compactor;
use agent_core::{AgentRunner, Message, ModelRequest, RunError, ToolRegistry, TurnOutcome};
use agent_hooks::HookRegistry;
use agent_memory::MemorySession;
use agent_prompting::DynamicPromptRenderer;
use agent_skills::SkillCatalog;
use agent_tools::todo::{self, TodoList};

/// A built agent: the runner for its profile and the conversation so far.
#[derive(Debug)]
pub struct Agent {
    pub(crate) profile: Profile,
    pub(crate) runner: AgentRunner,
    pub(crate) history: Vec<Message>,
    pub(crate) todo: Arc<TodoList>,
    pub(crate) hooks: Arc<HookRegistry>,
    pub(crate) skills: Arc<SkillCatalog>,
    pub(crate) compactor: Option<Arc<Compactor>>,
    pub(crate) memory: Option<Arc<MemorySession>>,
    pub(crate) renderer: Option<Arc<DynamicPromptRenderer>>,
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

    /// The current plan (chapter 5).
    pub fn todos(&self) -> Vec<todo::TodoItem> {
        self.todo.items()
    }

    /// Hook failures that were reported rather than enforced (chapter 4).
    pub fn hook_errors(&self) -> Vec<String> {
        self.hooks.errors()
    }

    /// The skill catalog scanned when the agent was built (chapter 7).
    pub fn skills(&self) -> &SkillCatalog {
        &self.skills
    }

    /// How many compaction summaries the model was asked for (chapter 8).
    pub fn summaries_made(&self) -> usize {
        self.compactor.as_ref().map_or(0, |c| c.summaries_made())
    }

    /// How many system prompts the dynamic renderer served from its cache (chapter 10).
    pub fn prompt_cache_hits(&self) -> Option<usize> {
        self.renderer.as_ref().map(|r| r.cache_hits())
    }

    /// The memory session (chapter 9 on).
    pub fn memory(&self) -> Option<&Arc<MemorySession>> {
        self.memory.as_ref()
    }

    /// Runs one user turn, keeping the history for the next. With memory (chapter 9 on):
    /// select before the turn, extract and consolidate after it. Memory failures are recorded
    /// in the session and never change the outcome.
    pub async fn run_turn(&mut self, prompt: &str) -> Result<TurnOutcome, RunError> {
        let Some(memory) = self.memory.clone() else {
            return self.runner.run_turn(&mut self.history, prompt).await;
        };
        memory.begin_turn(prompt).await;
        let start = self.history.len();
        let outcome = self.runner.run_turn(&mut self.history, prompt).await?;
        memory.complete(&self.history[start..]).await;
        Ok(outcome)
    }

    /// [`Agent::preview_request`] after selecting memories for `prompt` as a turn would — by
    /// keywords, since a preview never calls a model.
    pub async fn preview_turn(&self, prompt: &str) -> Result<ModelRequest, RunError> {
        if let Some(memory) = &self.memory {
            memory.select_by_keywords(prompt);
        }
        self.preview_request(prompt).await
    }

    /// The request the next turn would send first, without calling the model.
    pub async fn preview_request(&self, prompt: &str) -> Result<ModelRequest, RunError> {
        let mut history = self.history.clone();
        history.push(Message::user(prompt));
        self.runner.prepare_request(&history).await
    }
}
