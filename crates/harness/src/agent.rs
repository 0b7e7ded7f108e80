//! `Agent`: what `build_agent` returns — the runner for one profile, the conversation so far,
//! and the per-turn memory lifecycle around the loop.

use std::sync::Arc;

use crate::{AgentSpec, MemoryPlacement};
use agent_core::{
    AgentRunner, Cancellation, Message, ModelRequest, RunError, ToolRegistry, TurnOutcome,
};
use agent_cron::Scheduler;
use agent_jobs::JobManager;
use agent_memory::MemorySession;

/// A built agent: the runner for its profile and the conversation so far. What its features do
/// during a run (plan, hooks, compaction, memory, prompt) is told to the event sink it was
/// built with, not kept here.
#[derive(Debug)]
pub struct Agent {
    pub(crate) spec: AgentSpec,
    pub(crate) runner: AgentRunner,
    /// Shared with every request built from it (`Arc`): a request copies no message.
    pub(crate) history: Vec<Arc<Message>>,
    /// The per-turn lifecycle around the loop (chapter 9 on); what it does is told as events.
    pub(crate) memory: Option<Arc<MemorySession>>,
    /// Where the selected memories go (chapter 10 on; always `Prompt` before).
    pub(crate) memory_placement: MemoryPlacement,
    /// The session's background jobs (chapter 13 on).
    pub(crate) jobs: Option<Arc<JobManager>>,
    /// The scheduled prompts (chapter 14 on); the REPL asks it what is due between turns.
    pub(crate) scheduler: Option<Arc<Scheduler>>,
}

impl Agent {
    /// What the agent was built from.
    pub fn spec(&self) -> &AgentSpec {
        &self.spec
    }

    /// The tools the model is offered.
    pub fn tools(&self) -> &Arc<ToolRegistry> {
        self.runner.tools()
    }

    /// The conversation so far (without the system prompt).
    pub fn history(&self) -> &[Arc<Message>] {
        &self.history
    }

    /// The session's background jobs (chapter 13 on).
    pub fn jobs(&self) -> Option<&Arc<JobManager>> {
        self.jobs.as_ref()
    }

    /// The scheduled prompts (chapter 14 on).
    pub fn scheduler(&self) -> Option<&Arc<Scheduler>> {
        self.scheduler.as_ref()
    }

    /// One line per background job that ended since the last call, for the person.
    pub fn finished_jobs(&self) -> Vec<String> {
        self.jobs
            .as_ref()
            .map(|jobs| jobs.take_finished_lines())
            .unwrap_or_default()
    }

    /// Runs one user turn, keeping the history for the next. With memory (chapter 9 on):
    /// select before the turn, extract and consolidate after it. Memory failures are told as
    /// events and never change the outcome.
    pub async fn run_turn(&mut self, prompt: &str) -> Result<TurnOutcome, RunError> {
        self.run_turn_cancellable(prompt, &Cancellation::new())
            .await
    }

    /// [`run_turn`](Self::run_turn), stopped by `cancel` (Ctrl-C, chapter 11): the history is
    /// left closed (every call answered) and the error is [`RunError::Cancelled`]. Memory
    /// selection and extraction are model calls too, so they stop as well. A cancelled turn
    /// extracts nothing; the store is written synchronously between two awaits (and
    /// atomically), so dropping the session's future can never leave a record half written.
    pub async fn run_turn_cancellable(
        &mut self,
        prompt: &str,
        cancel: &Cancellation,
    ) -> Result<TurnOutcome, RunError> {
        let Some(memory) = self.memory.clone() else {
            return self
                .runner
                .run_turn_cancellable(&mut self.history, prompt, cancel)
                .await;
        };
        cancel
            .run(memory.begin_turn(prompt))
            .await
            .ok_or(RunError::Cancelled)?;
        // Stored, not added per request: the next turn's requests then start with this one's
        // bytes, block included, and a provider's prompt cache keeps serving them.
        if self.memory_placement == MemoryPlacement::Reminder
            && let Some(block) = memory.render_selected()
        {
            self.history.push(Arc::new(Message::system(block)));
        }
        let start = self.history.len();
        let outcome = self
            .runner
            .run_turn_cancellable(&mut self.history, prompt, cancel)
            .await?;
        // Memory reads this turn's messages once, as owned ones.
        let turn: Vec<Message> = self.history[start..]
            .iter()
            .map(|m| Message::clone(m))
            .collect();
        // The answer is in: a Ctrl-C now only skips saving memories, it does not take the
        // answer away (the turn is printed, a one-shot run exits 0).
        if cancel.run(memory.complete(&turn)).await.is_none() {
            tracing::info!("memory extraction skipped: the turn was cancelled after its answer");
        }
        Ok(outcome)
    }

    /// The request the next turn would send first, without calling the model.
    pub async fn preview_request(&self, prompt: &str) -> Result<ModelRequest, RunError> {
        let mut history = self.history.clone();
        history.push(Arc::new(Message::user(prompt)));
        self.runner.prepare_request(&history).await
    }
}
