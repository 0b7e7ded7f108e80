//! `Agent`: what `build_agent` returns — the runner for one set of capabilities, the
//! conversation so far, and the per-turn memory lifecycle around the loop.
//!
//! The order of one turn, every capability on (chapter 20; `tests/acceptance/ch20/order.rs`
//! records it):
//!
//! 1. prompt-submit hooks (chapter 4, `AgentRunner::submit_prompt`): a prompt they block
//!    ends the turn before anything else of it runs;
//! 2. memory selection (chapter 9, [`Agent::answer`]): the side call choosing what the
//!    prompt shows, before the loop (`AgentRunner::run_submitted`);
//! 3. before each request, the inbox: a finished job's notice (chapter 13) joins the history.
//!    Due schedules (chapter 14) and mail (chapter 15) are posted by the session to an idle
//!    agent and start its next turn;
//! 4. the history processors in feature order: plan reminder, compaction (chapter 8), memory,
//!    MCP sync (chapter 19);
//! 5. the system prompt assembled (chapter 10) from memory, skills, tasks, team and MCP state;
//! 6. the model, wrapped in recovery (chapter 11);
//! 7. per call: pre-tool hooks, the permission pipeline (its rules include the plan gate,
//!    chapter 16), the call, post-tool hooks;
//! 8. back to 3 until an answer without calls; then stop hooks, and after the answer memory
//!    extraction ([`Agent::complete`]).

use std::sync::Arc;

use crate::{AgentSpec, MemoryPlacement};
use agent_core::{
    AgentInbox, AgentRunner, Cancellation, Message, ModelRequest, RunError, ToolRegistry,
    TurnOutcome,
};
use agent_cron::Scheduler;
use agent_jobs::JobManager;
use agent_memory::MemorySession;

/// A built agent: the runner for its capabilities and the conversation so far. What its
/// features do during a run (plan, hooks, compaction, memory, prompt, jobs) is told to the
/// event sink it was built with, not kept here. [`build_agent`](crate::build_agent) builds one:
///
/// ```
/// use std::sync::Arc;
///
/// use agent_harness::{AgentDeps, AgentSpec, Capability, build_agent};
/// use agent_prompting::PromptContext;
/// use agent_test_support::ScriptedModel;
///
/// let dir = tempfile::tempdir()?;
/// let workspace = agent_tools::Workspace::new(dir.path())?;
/// let spec = AgentSpec {
///     capabilities: [Capability::Bash, Capability::Files].into_iter().collect(),
///     context: PromptContext::from_value(serde_json::json!({"chapter": 2}))?,
/// };
/// let deps = AgentDeps::new(Arc::new(ScriptedModel::new([])), workspace);
/// let agent = build_agent(&spec, deps)?;
/// assert_eq!(
///     agent.tools().names(),
///     ["bash", "read_file", "write_file", "edit_file", "glob"]
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
    /// Whether turns save memories or only read them (a teammate's, chapter 15).
    pub(crate) memory_use: MemoryUse,
    /// What reaches the agent from outside its loop; the session waits on it.
    pub(crate) inbox: Arc<AgentInbox>,
    /// The agent's background jobs (chapter 13 on); the session kills them when it ends.
    pub(crate) jobs: Option<Arc<JobManager>>,
    /// The scheduled prompts (chapter 14 on); the session runs what is due.
    pub(crate) scheduler: Option<Arc<Scheduler>>,
    /// The lead's MCP servers (chapter 19 on); the session closes them when it ends.
    pub(crate) mcp: Option<Arc<crate::mcp_hub::McpHub>>,
    /// Where the history is kept as it grows (`--continue`, chapter 11 on); `None`: nowhere.
    pub(crate) log: Option<Arc<dyn crate::HistoryLog>>,
}

/// What an agent with memory does with it after a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MemoryUse {
    /// Selects before a turn, extracts and consolidates after it (the lead, an agent alone).
    ReadWrite,
    /// Selects before a turn and saves nothing (a teammate: see the memory feature).
    ReadOnly,
}

/// A turn whose answer is in and whose memory extraction has not run yet (chapter 9 on):
/// [`Agent::answer`] returns it, [`Agent::complete`] finishes it.
#[derive(Debug)]
#[must_use = "a turn's memories are extracted only by `Agent::complete`"]
pub struct Answered {
    /// How the loop ended.
    pub outcome: TurnOutcome,
    /// Where this turn's messages start in the history.
    start: usize,
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

    /// Starts from `history` instead of an empty conversation: a session continued
    /// (`--continue`, `--resume`). Call it before the first turn; the log given in
    /// [`crate::AgentDeps::history_log`] is told nothing (it holds these messages already).
    pub fn resume(&mut self, history: Vec<Message>) {
        self.history = history.into_iter().map(Arc::new).collect();
    }

    /// Forgets the conversation (`/clear`): the next turn starts a new one with the same
    /// tools, prompt and settings, and the log starts a new session.
    pub fn clear_history(&mut self) {
        self.history.clear();
        if let Some(log) = &self.log {
            log.cleared();
        }
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
    /// extracts nothing.
    pub async fn run_turn_cancellable(
        &mut self,
        prompt: &str,
        cancel: &Cancellation,
    ) -> Result<TurnOutcome, RunError> {
        let answered = self.answer(prompt, cancel).await?;
        Ok(self.complete(answered, cancel).await)
    }

    /// The first part of a turn: the prompt-submit hooks, memory selection (chapter 9 on) and
    /// the loop, up to the answer. The session tells the answer before it calls
    /// [`complete`](Self::complete), so the person never waits for memory extraction to read it.
    pub async fn answer(
        &mut self,
        prompt: &str,
        cancel: &Cancellation,
    ) -> Result<Answered, RunError> {
        if let Some(log) = &self.log {
            log.turn_started(prompt);
        }
        // The hooks first: a prompt they block costs no memory selection either.
        let context = self.runner.submit_prompt(prompt).await?;
        if let Some(memory) = self.memory.clone() {
            cancel
                .run(memory.begin_turn(prompt))
                .await
                .ok_or(RunError::Cancelled)?;
            // Stored, not added per request: the next turn's requests then start with this
            // one's bytes, block included, and a provider's prompt cache keeps serving them.
            if self.memory_placement == MemoryPlacement::Reminder
                && let Some(block) = memory.render_selected()
            {
                self.history.push(Arc::new(Message::system(block)));
            }
        }
        let start = self.history.len();
        let outcome = self
            .runner
            .run_submitted(&mut self.history, prompt, context, cancel)
            .await;
        // Answered, failed or cancelled, the history is closed: the last reply and what
        // followed it are kept too (the requests' recorder saw the rest).
        if let Some(log) = &self.log {
            log.observe(&self.history);
        }
        Ok(Answered {
            outcome: outcome?,
            start,
        })
    }

    /// The rest of a turn after its answer: memory extraction and consolidation (chapter 9
    /// on). The answer is in: a Ctrl-C now only skips saving memories, it does not take the
    /// answer away. The store is written synchronously between two awaits (and atomically),
    /// so dropping this future can never leave a record half written.
    pub async fn complete(&mut self, answered: Answered, cancel: &Cancellation) -> TurnOutcome {
        let Some(memory) = self.memory.clone() else {
            return answered.outcome;
        };
        if self.memory_use == MemoryUse::ReadOnly {
            return answered.outcome;
        }
        // Memory reads this turn's messages once, as owned ones.
        let turn: Vec<Message> = self.history[answered.start..]
            .iter()
            .map(|m| Message::clone(m))
            .collect();
        if cancel.run(memory.complete(&turn)).await.is_none() {
            tracing::info!("memory extraction skipped: the turn was cancelled after its answer");
        }
        answered.outcome
    }

    /// The request the next turn would send first, without calling the model.
    pub async fn preview_request(&self, prompt: &str) -> Result<ModelRequest, RunError> {
        let mut history = self.history.clone();
        // As a turn stores it (see `answer`), so a preview shows the placement.
        if self.memory_placement == MemoryPlacement::Reminder
            && let Some(block) = self.memory.as_ref().and_then(|m| m.render_selected())
        {
            history.push(Arc::new(Message::system(block)));
        }
        history.push(Arc::new(Message::user(prompt)));
        self.runner.prepare_request(&history).await
    }
}
