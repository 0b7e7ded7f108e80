//! `agent-core`: what every chapter shares.
//!
//! - [`message`]: the provider-neutral conversation.
//! - [`model`]: the [`ModelClient`] trait and its request/reply/error types.
//! - [`tool`], [`schema`], [`registry`]: tool specs, strict argument checking, the registry.
//! - [`pairing`]: the "every call gets exactly one result" invariant.
//! - [`runner`]: [`AgentRunner`], the loop; [`seams`]: where later chapters plug in;
//!   [`draft`]: the messages a request's processors shape, the stored history borrowed;
//!   [`event`]: what a run tells whoever watches it ([`AgentEvent`], [`EventSink`]).
//! - [`cancel`]: stopping a turn cleanly (Ctrl-C, chapter 11).
//! - [`verdict`]: the words permission decisions are made of (merged by `agent-policy`).
//! - [`side_call`]: tool-less calls the harness makes for itself (memory, compaction).
//! - [`names`]: the name rules of tools, skills and memory records, side by side.
//!
//! The vocabulary (messages, specs, failures, events, requests) is `agent-protocol`'s,
//! re-exported here so a feature crate needs one dependency for the loop and its words.
//! This crate knows nothing about OpenAI, files on disk or the CLI.

#![warn(missing_docs)]

pub mod cancel;
pub mod draft;
pub mod error;
pub mod event;
/// Model-visible fragments: the protocol crate's, re-exported.
pub use agent_protocol::fragment;
/// The conversation: the protocol crate's, re-exported.
pub use agent_protocol::message;
pub mod model;
pub mod names;
pub mod pairing;
pub mod registry;
pub mod runner;
pub mod schema;
pub mod seams;
pub mod side_call;
pub mod tool;
/// Permission words: the protocol crate's, re-exported.
pub use agent_protocol::verdict;

pub use agent_protocol::{
    AgentId, AgentIdError, EventEnvelope, InboxItem, InboxKind, PermissionDecision, RequestId,
    Sender, TurnId,
};
pub use cancel::Cancellation;
pub use draft::{Draft, HistoryTracker, Lineage};
pub use error::error_chain;
pub use event::{
    AgentEvent, CacheUse, CollectingSink, CompactionKind, EventSink, Events, NoEvents, PlanStep,
    RecoveryAction, RetryCause, StepStatus,
};
pub use fragment::{Fragment, FragmentKind, Template};
pub use message::{Message, ToolCall};
pub use model::{
    ClientError, ModelClient, ModelError, ModelReply, ModelRequest, RetryAfter, RetryLimit, Usage,
};
pub use pairing::{PairingError, assign_unique_ids, validate_pairing};
pub use registry::{RegistryError, RegistryStamp, ToolRegistry, ToolRegistryBuilder};
pub use runner::{AgentRunner, AgentRunnerBuilder, FinalAnswer, RunError, TurnOutcome};
pub use seams::{
    AgentInbox, FixedPrompt, GateDecision, HistoryProcessor, HookStop, INBOX_CAPACITY, Inbox,
    InboxFull, PermissionGate, ProcessError, PromptBlocked, PromptError, SeamError,
    SystemPromptProvider, TurnHooks,
};
pub use tool::{
    CallSummary, FailureCode, OutputPart, PreparedCall, ToolEffect, ToolFailure, ToolHandler,
    ToolOutput, ToolSpec,
};
pub use verdict::{Behavior, Verdict};
