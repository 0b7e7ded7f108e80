//! What happens during a run, told to whoever watches it.
//!
//! The runner emits the loop's events; each feature (plan, hooks, compaction, memory, the
//! dynamic prompt) emits its own where the thing happens. Events are owned, plain data in this
//! crate's vocabulary, so a watcher (the CLI, a test) needs no feature crate to read them, and
//! this crate needs to know no feature's types.

use std::sync::{Arc, Mutex, PoisonError};

use crate::message::ToolCall;
use crate::model::{ModelReply, ModelRequest};
use crate::tool::ToolFailure;

/// One thing that happened during a run.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AgentEvent {
    /// Request `index` of the turn (0-based) is about to be sent. A retry after "prompt too
    /// long" is sent again with the same index.
    RequestSent {
        index: usize,
        /// Shared with the model call: emitting a request copies no message.
        request: Arc<ModelRequest>,
    },
    ReplyReceived(ModelReply),
    ToolStarted(ToolCall),
    ToolFinished {
        call: ToolCall,
        result: Result<String, ToolFailure>,
    },
    /// The plan was written (chapter 5); the whole plan, in order.
    PlanUpdated(Vec<PlanStep>),
    /// A hook failed and the run went on without it (chapter 4). `event` is the hook event's
    /// name (`PostToolUse`, …).
    HookFailed {
        hook: String,
        event: String,
        message: String,
    },
    /// A large tool result went to a file; the history keeps a preview (chapter 8).
    ResultPersisted {
        call_id: String,
        path: String,
        bytes: usize,
    },
    /// One request was shaped smaller than the history (chapter 8), in the kind's unit.
    Compacted {
        kind: CompactionKind,
        before: usize,
        after: usize,
    },
    /// A reminder went into the next request only, `reminder` naming which (`plan`).
    ReminderInjected {
        reminder: String,
    },
    /// The dynamic system prompt for one request (chapter 10).
    PromptAssembled {
        bytes: usize,
        cache: CacheUse,
    },
    /// The memories chosen for this turn, by name (empty when none) (chapter 9).
    MemorySelected {
        names: Vec<String>,
    },
    /// The memories saved after this turn, by name (empty when none).
    MemoryExtracted {
        names: Vec<String>,
    },
    /// A memory step failed; the answer is not affected.
    MemoryFailed {
        message: String,
    },
    /// Chapter 11 recovered (or is recovering) from a failed or cut-off model call.
    Recovery(RecoveryAction),
}

/// One thing chapter 11's recovery did about a model call. Its `Display` is the one line the
/// CLI prints and the message of the matching tracing event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecoveryAction {
    /// A transient failure; the same request goes again after `wait`.
    Retrying {
        wait: std::time::Duration,
        cause: RetryCause,
        /// The attempt about to be made (the first one is 1).
        attempt: u32,
        max_attempts: u32,
    },
    /// Overloaded answers in a row: from the next request on, the fallback model is asked.
    FallbackModel { model: String, after: u32 },
    /// The reply hit the completion limit: asked again once with a larger one.
    LargerLimit { max_tokens: u32 },
    /// The reply is still cut off: the model is asked to go on (`part` of `max_parts`).
    Continuing { part: u32, max_parts: u32 },
    /// A tool call whose arguments were cut off was dropped, never run.
    DroppedToolCall { id: String, name: String },
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
    pub content: String,
    pub status: StepStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepStatus {
    Pending,
    InProgress,
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
    Hit,
    Miss,
}

/// Receives events. Called inline, on the task doing the work: keep it quick, never fail.
pub trait EventSink: Send + Sync {
    fn emit(&self, event: &AgentEvent);
}

/// Watches nothing: the default wherever no one listens.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoEvents;

impl EventSink for NoEvents {
    fn emit(&self, _event: &AgentEvent) {}
}

/// A handle on a sink for the features that emit: cheap to clone, `Debug`, and silent by
/// default, so a feature built without one (a unit test) needs no extra wiring.
#[derive(Clone)]
pub struct Events(Arc<dyn EventSink>);

impl Events {
    pub fn new(sink: Arc<dyn EventSink>) -> Self {
        Self(sink)
    }

    pub fn emit(&self, event: AgentEvent) {
        self.0.emit(&event);
    }

    pub fn sink(&self) -> &Arc<dyn EventSink> {
        &self.0
    }
}

impl Default for Events {
    fn default() -> Self {
        Self(Arc::new(NoEvents))
    }
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Events")
    }
}

/// Keeps every event, in order; for tests and for callers that inspect a run afterwards.
#[derive(Debug, Default)]
pub struct CollectingSink(Mutex<Vec<AgentEvent>>);

impl CollectingSink {
    pub fn new() -> Self {
        Self::default()
    }

    /// Everything emitted so far.
    pub fn events(&self) -> Vec<AgentEvent> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl EventSink for CollectingSink {
    fn emit(&self, event: &AgentEvent) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event.clone());
    }
}
