//! [`AgentRunnerBuilder`]: everything but the model, the tools and the prompt is optional.

use std::sync::Arc;

use super::{AgentRunner, FinalAnswer};
#[cfg(doc)]
use super::{FINAL_ANSWER_NOTE, RunError};
use crate::event::EventSink;
use crate::seams::{HistoryProcessor, Inbox, PermissionGate, ResultShaper, TurnHooks};

/// Builds an [`AgentRunner`]; only the model, tools and prompt are required.
pub struct AgentRunnerBuilder {
    pub(super) runner: AgentRunner,
}

impl std::fmt::Debug for AgentRunnerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.runner.fmt(f)
    }
}

impl AgentRunnerBuilder {
    /// The bound on model requests per user turn (at least 1).
    pub fn max_turns(mut self, max_turns: usize) -> Self {
        self.runner.max_turns = max_turns.max(1);
        self
    }

    /// [`FinalAnswer::Off`] by default. With [`FinalAnswer::OnLastRequest`], the last request
    /// the turn limit allows is sent without tools and with [`FINAL_ANSWER_NOTE`], so the model
    /// must answer in text instead of the run ending in [`RunError::TurnLimit`]. Useful with
    /// small models that never stop calling tools on their own.
    pub fn final_answer(mut self, final_answer: FinalAnswer) -> Self {
        self.runner.final_answer = final_answer;
        self
    }

    /// The permission gate (chapter 3); every call runs without one.
    pub fn gate(mut self, gate: Arc<dyn PermissionGate>) -> Self {
        self.runner.gate = gate;
        self
    }

    /// The lifecycle hooks (chapter 4); none by default.
    pub fn hooks(mut self, hooks: Arc<dyn TurnHooks>) -> Self {
        self.runner.hooks = hooks;
        self
    }

    /// Appends a processor; processors run in the order they were added.
    pub fn processor(mut self, processor: Arc<dyn HistoryProcessor>) -> Self {
        self.runner.processors.push(processor);
        self
    }

    /// The processor that shrinks a request once when the model reports "prompt too long";
    /// the request is then retried once.
    pub fn overflow(mut self, processor: Arc<dyn HistoryProcessor>) -> Self {
        self.runner.overflow = Some(processor);
        self
    }

    /// Shapes each batch of tool results before it is stored.
    pub fn shaper(mut self, shaper: Arc<dyn ResultShaper>) -> Self {
        self.runner.shaper = Some(shaper);
        self
    }

    /// Where items from outside the loop come from (chapter 13's job notices).
    pub fn inbox(mut self, inbox: Arc<dyn Inbox>) -> Self {
        self.runner.inbox = Some(inbox);
        self
    }

    /// Where the loop's events go (requests, replies, tool calls and results).
    pub fn events(mut self, events: Arc<dyn EventSink>) -> Self {
        self.runner.events = events;
        self
    }

    /// The runner.
    pub fn build(self) -> AgentRunner {
        self.runner
    }
}
