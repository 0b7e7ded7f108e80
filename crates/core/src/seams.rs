//! The points where later chapters plug into the loop. Each seam has a do-nothing default so
//! chapter 1's runner is the plain loop and nothing more.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use agent_protocol::{InboxItem, InboxKind, Sender};
use async_trait::async_trait;

use crate::draft::Draft;
use crate::message::{Message, ToolCall};
use crate::tool::{PreparedCall, ToolFailure};
use crate::verdict::Verdict;

/// Why a seam failed: what it was doing, and the error that stopped it as the `source`, so
/// `{:#}` prints the whole chain.
#[derive(Debug, Clone)]
pub struct SeamError {
    context: String,
    /// Shared, not boxed, so that a run error carrying it can still be cloned.
    source: Arc<dyn std::error::Error + Send + Sync>,
}

impl std::fmt::Display for SeamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.context)
    }
}

/// Written by hand: the source is the error inside the `Arc` (so callers can downcast it to
/// the provider's own type), not the `Arc` itself.
impl std::error::Error for SeamError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.source.as_ref())
    }
}

impl SeamError {
    /// `context` (what was being done) with the seam's own error as the cause.
    pub fn new(
        context: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self {
            context: context.into(),
            source: Arc::new(source),
        }
    }

    /// The text of this error and each cause, `: `-separated.
    pub fn chain(&self) -> String {
        crate::error::error_chain(self)
    }
}

/// Equal when they read the same, causes included: a source has no equality of its own, and
/// tests compare run errors whole.
impl PartialEq for SeamError {
    fn eq(&self, other: &Self) -> bool {
        self.chain() == other.chain()
    }
}

impl Eq for SeamError {}

/// Why the system prompt could not be produced (chapter 10's provider).
pub type PromptError = SeamError;

/// Asked for the system prompt before EVERY model request. Zero arguments on purpose: whatever
/// the prompt depends on is bound when the provider is built (chapter 10).
#[async_trait]
pub trait SystemPromptProvider: Send + Sync {
    /// The system prompt for the next request; empty is an error (there is no fallback).
    async fn system_prompt(&self) -> Result<String, PromptError>;

    /// The prompt for a request that offers no tools (`--final-answer`'s last request): a
    /// prompt that lists tools must not list them here, or the model is told about tools it
    /// cannot call. The same prompt by default, for prompts that list none.
    async fn system_prompt_without_tools(&self) -> Result<String, PromptError> {
        self.system_prompt().await
    }
}

/// The fixed prompt of chapters 1–9: rendered once at build time, returned every time.
#[derive(Debug, Clone)]
pub struct FixedPrompt(pub String);

#[async_trait]
impl SystemPromptProvider for FixedPrompt {
    async fn system_prompt(&self) -> Result<String, PromptError> {
        Ok(self.0.clone())
    }
}

/// The verdict of a permission check for one prepared call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateDecision {
    /// The call runs.
    Allow,
    /// The call does not run; the model is told `reason` as `permission_denied`.
    Deny {
        /// Why, in words the model reads.
        reason: String,
    },
}

/// Consulted before a tool runs (chapter 3 plugs its pipeline in here). `hints` are the
/// permission recommendations PreToolUse hooks made for this call (chapter 4).
#[async_trait]
pub trait PermissionGate: Send + Sync {
    /// Decides one prepared call.
    async fn check(&self, call: &PreparedCall, hints: &[Verdict]) -> GateDecision;
}

/// Chapters 1–2: no permission system, every valid call runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

#[async_trait]
impl PermissionGate for AllowAll {
    async fn check(&self, _call: &PreparedCall, _hints: &[Verdict]) -> GateDecision {
        GateDecision::Allow
    }
}

/// Why a history processor failed; this ends the run (a request we cannot shape correctly
/// must not be sent).
pub type ProcessError = SeamError;

/// Shapes what is sent, never what is stored: it receives the history's messages (without
/// the system prompt) and returns the messages for this one request. Reminders (chapter 5),
/// compaction (chapter 8) and memory messages (chapter 9) are processors.
///
/// The messages are shared with the stored history (`Arc`): a processor drops, reorders or
/// adds pointers, and builds a new message for what it changes. It cannot alter a stored
/// message in place, which is what keeps the history canonical.
#[async_trait]
pub trait HistoryProcessor: Send + Sync {
    /// The processor's name, for errors and events.
    fn name(&self) -> &'static str;
    /// The messages to send for this request.
    async fn process(&self, messages: Vec<Arc<Message>>)
    -> Result<Vec<Arc<Message>>, ProcessError>;

    /// [`process`](Self::process) on a [`Draft`], which is what the runner calls. The stored
    /// history comes borrowed, with its [`Lineage`](crate::Lineage): a processor that
    /// overrides this reads it without taking a pointer to every message, and can keep what it
    /// derived from it for the next request of the same lineage, so its cost follows what is
    /// new instead of the whole session. By default, the draft as a vector through `process`.
    async fn shape<'a>(&self, draft: Draft<'a>) -> Result<Draft<'a>, ProcessError> {
        Ok(Draft::owned(self.process(draft.into_vec()).await?))
    }
}

/// What a PreToolUse hook decided.
#[derive(Debug, Clone, PartialEq)]
pub enum PreToolVerdict {
    /// Run the call (possibly with rewritten input; the runner validates it again), with the
    /// permission recommendations the hooks made.
    Continue {
        /// The call to run.
        call: PreparedCall,
        /// Permission recommendations for the gate.
        hints: Vec<Verdict>,
    },
    /// Do not run it; the reason goes back to the model.
    Block(ToolFailure),
}

/// What the PostToolUse hooks made of a call's result: the output to store, and whether one of
/// them ended the run.
#[derive(Debug, Clone, PartialEq)]
pub struct PostToolVerdict {
    /// The result the model reads.
    pub output: Result<String, ToolFailure>,
    /// Keep `output`, then end the run after the current batch.
    pub stop: Option<HookStop>,
}

impl PostToolVerdict {
    /// The output unchanged, the run going on.
    pub fn proceed(output: Result<String, ToolFailure>) -> Self {
        Self { output, stop: None }
    }
}

/// A PostToolUse hook ended the run. One value from the hook to the runner to
/// [`TurnOutcome::stopped`](crate::TurnOutcome::stopped); its `Display` is the turn's final text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookStop {
    /// The hook that asked.
    pub hook: String,
    /// The tool whose call it had just seen.
    pub tool: String,
    /// Why, in the hook's words.
    pub reason: String,
}

impl std::fmt::Display for HookStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Run stopped by a hook after `{}`.", self.tool)
    }
}

/// A UserPromptSubmit hook refused the prompt; the prompt is not stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason} (hook `{hook}`)")]
pub struct PromptBlocked {
    /// The hook that refused.
    pub hook: String,
    /// Why, in the hook's words.
    pub reason: String,
}

/// Lifecycle hooks (chapter 4). Defaults do nothing.
#[async_trait]
pub trait TurnHooks: Send + Sync {
    /// May block the prompt (Err) or add context to the turn (returned messages are appended
    /// after the user message).
    async fn user_prompt_submit(&self, _prompt: &str) -> Result<Vec<Message>, PromptBlocked> {
        Ok(Vec::new())
    }
    /// May rewrite, recommend a permission for, or block a prepared call.
    async fn pre_tool_use(&self, call: PreparedCall) -> PreToolVerdict {
        PreToolVerdict::Continue {
            call,
            hints: Vec::new(),
        }
    }
    /// May rewrite a call's result or end the run after the batch.
    async fn post_tool_use(
        &self,
        _call: &PreparedCall,
        output: Result<String, ToolFailure>,
    ) -> PostToolVerdict {
        PostToolVerdict::proceed(output)
    }
    /// Returning a message forces one more turn with it (the runner honours this once a run).
    async fn stop(&self, _final_text: &str) -> Option<String> {
        None
    }
}

/// No hooks.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl TurnHooks for NoHooks {}

/// Items that arrive from outside the loop while it runs: chapter 13's completion notices of
/// background jobs, and from chapter 15 on teammates' mail. The runner takes them right before
/// each model request and appends them to the STORED history as one user message (their bodies
/// joined by line breaks, oldest first), so each one is stored once and sent from then on,
/// never twice. (A [`HistoryProcessor`] cannot do this: it shapes one request and stores
/// nothing, so it would either add the notice to every request or let the model forget it
/// after one.) Taken only at that point, an item can never land between a tool call and its
/// result: the results of a batch are appended all at once, before the next request.
pub trait Inbox: Send + Sync {
    /// Every item waiting that joins a request, oldest first; each is handed out once.
    fn take(&self) -> Vec<InboxItem>;
}

/// The most items one [`AgentInbox`] holds; a post past it is refused (and said in the log).
pub const INBOX_CAPACITY: usize = 256;

/// An agent's inbox: posted to from outside the loop (a job's supervisor, the scheduler, a
/// teammate), read by the runner ([`Inbox::take`]: the items that join the next request) and by
/// the session that drives the agent ([`AgentInbox::take_turn`]: the items that start a turn of
/// their own). Every post wakes whoever waits in [`AgentInbox::changed`], so an idle agent can
/// be woken without input.
#[derive(Debug, Default)]
pub struct AgentInbox {
    items: Mutex<VecDeque<InboxItem>>,
    wake: tokio::sync::Notify,
}

/// The inbox already holds [`INBOX_CAPACITY`] items.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the inbox is full ({INBOX_CAPACITY} items); the item from {from:?} was dropped")]
pub struct InboxFull {
    /// Who sent the dropped item.
    pub from: Sender,
}

/// Whether an item of `kind` starts a turn of its own (a scheduled run) or joins the next
/// request of whatever turn runs (a job notice, mail).
pub fn starts_a_turn(kind: InboxKind) -> bool {
    matches!(kind, InboxKind::ScheduledRun)
}

impl AgentInbox {
    /// An empty inbox.
    pub fn new() -> Self {
        Self::default()
    }

    fn items(&self) -> std::sync::MutexGuard<'_, VecDeque<InboxItem>> {
        // Every change is one push or one drain: a panic cannot leave the queue half changed.
        self.items.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `item` and wakes whoever waits.
    pub fn post(&self, item: InboxItem) -> Result<(), InboxFull> {
        {
            let mut items = self.items();
            if items.len() >= INBOX_CAPACITY {
                return Err(InboxFull { from: item.from });
            }
            items.push_back(item);
        }
        // `notify_one` keeps a permit when no one waits yet: a post between a look and the
        // wait is not lost.
        self.wake.notify_one();
        Ok(())
    }

    /// The oldest item that starts a turn of its own, taken out.
    pub fn take_turn(&self) -> Option<InboxItem> {
        let mut items = self.items();
        let at = items.iter().position(|i| starts_a_turn(i.kind))?;
        items.remove(at)
    }

    /// Whether any item waits (of any kind).
    pub fn is_empty(&self) -> bool {
        self.items().is_empty()
    }

    /// Waits until something is posted (at once if something was posted since the last wait).
    pub async fn changed(&self) {
        self.wake.notified().await;
    }
}

impl Inbox for AgentInbox {
    fn take(&self) -> Vec<InboxItem> {
        let mut items = self.items();
        let (joins, stays): (VecDeque<InboxItem>, VecDeque<InboxItem>) =
            items.drain(..).partition(|i| !starts_a_turn(i.kind));
        *items = stays;
        joins.into()
    }
}

/// Shapes one batch of tool results before they are stored (chapter 8 moves large results to
/// files and keeps a preview). Receives `(call, result text)` pairs in call order and must keep
/// one entry per call.
#[async_trait]
pub trait ResultShaper: Send + Sync {
    /// Shapes the batch in place.
    async fn shape(&self, batch: &mut [(ToolCall, String)]);
}
