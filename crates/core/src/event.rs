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
