//! `agent-protocol`: the words every crate of the harness shares, and nothing that runs.
//!
//! - [`message`]: the provider-neutral conversation ([`Message`], [`ToolCall`]).
//! - [`model`]: what one model call sends and gets back ([`ModelRequest`], [`ModelReply`],
//!   [`ModelError`]).
//! - [`tool`]: what the model is offered and how a call fails ([`ToolSpec`], [`ToolEffect`],
//!   [`ToolFailure`], [`FailureCode`], [`PreparedCall`]); [`output`]: what a call returns
//!   ([`ToolOutput`]).
//! - [`verdict`]: the words permission decisions are made of.
//! - [`event`]: what a run tells whoever watches it ([`AgentEvent`], [`EventEnvelope`]).
//! - [`fragment`]: every text the harness injects into what the model reads ([`Fragment`]).
//! - [`ids`] and [`inbox`]: who said it, in which turn, and what arrives from outside a loop.
//!
//! No tokio, no I/O: the file and process layer (`agent-workspace`) and the loop
//! (`agent-core`) both stand on this crate, and neither has to compile the other.
//!
//! ```
//! use agent_protocol::{FailureCode, ToolFailure};
//!
//! let failure = ToolFailure::new(FailureCode::PathEscape, "`../x` leads outside the workspace");
//! assert_eq!(failure.to_string(), "Error [path_escape]: `../x` leads outside the workspace");
//! ```

#![warn(missing_docs)]

pub mod event;
pub mod fragment;
pub mod ids;
pub mod inbox;
pub mod message;
pub mod model;
pub mod output;
pub mod tool;
pub mod verdict;

pub use event::{
    AgentEvent, CacheUse, CompactionKind, EventEnvelope, PlanStep, RecoveryAction, RetryCause,
    StepStatus,
};
pub use fragment::{Filling, Fragment, FragmentKind, FragmentRole, Marker, Template};
pub use ids::{AgentId, AgentIdError, TurnId};
pub use inbox::{InboxItem, InboxKind, RequestId, Sender};
pub use message::{Message, ToolCall};
pub use model::{ClientError, ModelError, ModelReply, ModelRequest, RetryAfter, RetryLimit, Usage};
pub use output::{OutputPart, ToolOutput};
pub use tool::{
    CallSummary, FailureCode, PreparedCall, ToolEffect, ToolFailure, ToolSpec, parse_arguments,
    string_argument,
};
pub use verdict::{Behavior, PermissionDecision, Verdict};
