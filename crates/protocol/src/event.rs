//! What happens during a run, told to whoever watches it.
//!
//! The runner emits the loop's events; each feature (plan, hooks, compaction, memory, the
//! dynamic prompt) emits its own where the thing happens. Events are owned, plain data in this
//! crate's vocabulary, so a watcher (the CLI, a test) needs no feature crate to read them, and
//! this crate needs to know no feature's types.

use std::sync::Arc;

use crate::ids::{AgentId, TurnId};
use crate::message::ToolCall;
use crate::model::{ModelReply, ModelRequest};
use crate::tool::ToolFailure;
use crate::verdict::PermissionDecision;

/// One thing that happened during a run.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AgentEvent {
    /// Request `index` of the turn (0-based) is about to be sent. A retry after "prompt too
    /// long" is sent again with the same index.
    RequestSent {
        /// The request's place in the turn, from 0.
        index: usize,
        /// Shared with the model call: emitting a request copies no message.
        request: Arc<ModelRequest>,
    },
    /// A piece of the reply's text, the moment a streaming client (`--stream`, chapter 11)
    /// read it from the server. Only for showing: the reply itself still arrives whole as
    /// [`AgentEvent::ReplyReceived`], equal to what the non-streaming client returns.
    ///
    /// A request that is sent again (a retry after a cut stream, the larger-limit retry, the
    /// compacted retry after "prompt too long") streams its text again from the start; the
    /// attempt boundary is the [`AgentEvent::Recovery`] or [`AgentEvent::RequestSent`] before
    /// it, and a watcher that shows deltas uses it to skip what it already showed.
    TextDelta {
        /// The text, as the server sent this piece (never empty).
        text: String,
    },
    /// The model answered.
    ReplyReceived(ModelReply),
    /// A tool call is about to run (before hooks and permissions).
    ToolStarted(ToolCall),
    /// A tool call was answered: the text the model reads, or the failure it is told.
    ToolFinished {
        /// The call, as the model sent it.
        call: ToolCall,
        /// Its result.
        result: Result<String, ToolFailure>,
    },
    /// The plan was written (chapter 5); the whole plan, in order.
    PlanUpdated(Vec<PlanStep>),
    /// A hook failed and the run went on without it (chapter 4). `event` is the hook event's
    /// name (`PostToolUse`, …).
    HookFailed {
        /// The hook, as configured.
        hook: String,
        /// The hook event it ran for.
        event: String,
        /// What went wrong.
        message: String,
    },
    /// A large tool result went to a file; the history keeps a preview (chapter 8).
    ResultPersisted {
        /// The call whose result it is.
        call_id: String,
        /// The file, relative to the workspace.
        path: String,
        /// The result's size.
        bytes: usize,
    },
    /// One request was shaped smaller than the history (chapter 8), in the kind's unit.
    Compacted {
        /// How it was made smaller.
        kind: CompactionKind,
        /// The size before, in [`CompactionKind::unit`].
        before: usize,
        /// The size after, in the same unit.
        after: usize,
    },
    /// A reminder went into the next request only, `reminder` naming which (`plan`).
    ReminderInjected {
        /// Which reminder.
        reminder: String,
    },
    /// The dynamic system prompt for one request (chapter 10).
    PromptAssembled {
        /// The prompt's size.
        bytes: usize,
        /// Whether it was rendered or reused.
        cache: CacheUse,
    },
    /// The memories chosen for this turn, by name (empty when none) (chapter 9).
    MemorySelected {
        /// The records' names.
        names: Vec<String>,
    },
    /// The memories saved after this turn, by name (empty when none).
    MemoryExtracted {
        /// The records' names.
        names: Vec<String>,
    },
    /// A memory step failed; the answer is not affected.
    MemoryFailed {
        /// What went wrong.
        message: String,
    },
    /// Chapter 11 recovered (or is recovering) from a failed or cut-off model call.
    Recovery(RecoveryAction),
    /// A background job ended (chapter 13). `status` is how, as the completion notice says
    /// it (`exit 0`, `killed (time limit)`).
    JobFinished {
        /// The job's id in this session.
        id: u64,
        /// The command it ran.
        command: String,
        /// How it ended.
        status: String,
        /// How long it ran, in milliseconds (the person's line says `after 4.2s`).
        elapsed_ms: u64,
    },
    /// A schedule came due and is about to run as a turn (chapter 14). `marker` is the line
    /// that starts the turn's text.
    ScheduleDue {
        /// The schedule's id (`1` durable, `s1` session-only).
        id: String,
        /// The marker line.
        marker: String,
    },
    /// A task of the persistent graph was created or changed (chapter 12).
    TaskChanged {
        /// The task's id.
        id: u64,
        /// Its one-line subject.
        subject: String,
        /// Its status after the change.
        status: String,
    },
    /// The permission pipeline decided a call (chapter 3); the audit log is written from
    /// these events.
    PermissionDecided(PermissionDecision),
    /// A subagent started for the `task` call `call_id` (chapter 6); its events carry the id
    /// `agent` until the matching [`AgentEvent::SubagentFinished`].
    SubagentStarted {
        /// The `task` call that started it.
        call_id: String,
        /// The subagent's id.
        agent: AgentId,
        /// The task it was given.
        description: String,
    },
    /// The subagent of `call_id` ended (its final text is the call's result).
    SubagentFinished {
        /// The `task` call that started it.
        call_id: String,
        /// The subagent's id.
        agent: AgentId,
    },
    /// The turn's answer, told by the session the moment the loop returns it: before memory
    /// extraction (chapter 9) runs, so the person reads it without waiting for that.
    TurnAnswered {
        /// The answer, as the model wrote it.
        text: String,
    },
    /// The turn ended without an answer; `error` says why (as the loop's error reads).
    TurnFailed {
        /// The loop's error, as it reads.
        error: String,
    },
    /// The turn was cancelled (Ctrl-C); the history is closed (every call answered).
    TurnCancelled,
}

/// An event as it leaves a session: which agent, which of its turns, and its place in the
/// session's one stream. `seq` rises by one per event across all agents, so a watcher can
/// order and de-duplicate what it receives from several at once.
#[derive(Debug, Clone, PartialEq)]
pub struct EventEnvelope {
    /// The agent the event is about.
    pub agent: AgentId,
    /// The agent's turn it happened in; `None` between turns (a job that ends while the
    /// person is typing).
    pub turn: Option<TurnId>,
    /// The session-wide sequence number, from 1.
    pub seq: u64,
    /// What happened.
    pub event: AgentEvent,
}

/// One thing chapter 11's recovery did about a model call. Its `Display` is the one line the
/// CLI prints and the message of the matching tracing event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecoveryAction {
    /// A transient failure; the same request goes again after `wait`.
    Retrying {
        /// How long before the next attempt.
        wait: std::time::Duration,
        /// Why the last attempt failed.
        cause: RetryCause,
        /// The attempt about to be made (the first one is 1).
        attempt: u32,
        /// The attempt limit.
        max_attempts: u32,
    },
    /// Overloaded answers in a row: from the next request on, the fallback model is asked.
    FallbackModel {
        /// The fallback model's name.
        model: String,
        /// How many overloaded answers in a row led to it.
        after: u32,
    },
    /// The reply hit the completion limit: asked again once with a larger one.
    LargerLimit {
        /// The larger completion limit.
        max_tokens: u32,
    },
    /// The reply is still cut off: the model is asked to go on (`part` of `max_parts`).
    Continuing {
        /// The part about to be asked for (the first continuation is part 2).
        part: u32,
        /// The most parts a reply may have.
        max_parts: u32,
    },
    /// A tool call whose arguments were cut off was dropped, never run.
    DroppedToolCall {
        /// The call's id.
        id: String,
        /// The tool it named.
        name: String,
    },
    /// The server said the prompt is too long: the loop compacts the history once and retries.
    PromptTooLong,
}

/// Why a request is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryCause {
    /// The HTTP status of the failed answer (429, 5xx).
    Status(u16),
    /// No complete answer: the connection failed or the request timed out.
    Transport,
}

impl std::fmt::Display for RetryCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Status(status) => write!(f, "{status}"),
            Self::Transport => f.write_str("connection error or timeout"),
        }
    }
}

impl std::fmt::Display for RecoveryAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Retrying {
                wait,
                cause,
                attempt,
                max_attempts,
            } => write!(
                f,
                "retrying in {:.1} s ({cause}, attempt {attempt} of {max_attempts})",
                wait.as_secs_f64()
            ),
            Self::FallbackModel { model, after } => write!(
                f,
                "switching to the fallback model {model} after {after} overloaded answers"
            ),
            Self::LargerLimit { max_tokens } => write!(
                f,
                "reply cut off at the length limit: retrying with max_tokens {max_tokens}"
            ),
            Self::Continuing { part, max_parts } => write!(
                f,
                "continuing the cut-off reply (part {part} of {max_parts})"
            ),
            Self::DroppedToolCall { id, name } => write!(
                f,
                "dropped the cut-off tool call {name} ({id}): its arguments are incomplete, it was not run"
            ),
            Self::PromptTooLong => f.write_str(
                "the prompt is too long for the model: compacting the history once and retrying",
            ),
        }
    }
}

/// One step of the plan, as the model wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanStep {
    /// What the step is.
    pub content: String,
    /// How far it is.
    pub status: StepStatus,
}

/// Where one plan step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepStatus {
    /// Not started.
    Pending,
    /// Being worked on (at most one step at a time).
    InProgress,
    /// Done.
    Completed,
}

/// How a request was made smaller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionKind {
    /// Older groups left out (counted in messages).
    Snip,
    /// Old tool results replaced by stubs (counted in bytes).
    Micro,
    /// The older part replaced by a model-written summary (counted in messages).
    Summary,
}

impl CompactionKind {
    /// The kind's name, as the CLI shows it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Snip => "snip",
            Self::Micro => "micro",
            Self::Summary => "summary",
        }
    }

    /// What `before` and `after` count.
    pub fn unit(self) -> &'static str {
        match self {
            Self::Snip | Self::Summary => "messages",
            Self::Micro => "bytes",
        }
    }
}

/// Whether a system prompt was rendered anew or served from the renderer's cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheUse {
    /// The cached prompt was reused.
    Hit,
    /// The prompt was rendered anew.
    Miss,
}
