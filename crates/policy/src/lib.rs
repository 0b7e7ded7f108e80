//! `agent-policy`, chapter 3: the permission pipeline.
//!
//! Every prepared call is shown to a list of rules. Each rule answers allow, deny, ask or
//! passthrough ("no opinion"); PreToolUse hooks (chapter 4) add their recommendation to the
//! same list. The answers merge as **deny > ask > allow**, and only when every participant
//! passes does the call run unasked. `ask` goes to an approval provider that fails closed.
//! Every final decision is written to an audit sink.
//!
//! Rules read a call through what its tool says about it ([`agent_core::CallSummary`]: the
//! summary and the paths), never by guessing argument names.
//!
//! - [`pipeline`]: [`PermissionRule`], [`merge`], [`PermissionPipeline`].
//! - [`approval`]: asking a person and the audit log; [`display`]: showing a call safely;
//!   [`sanitize`](mod@sanitize): the one terminal sanitizer for everything printed that we did not write.
//! - [`rules`], [`destructive`], [`secrets`], [`boundary`], [`protected`]: the built-in rules.

#![warn(missing_docs)]

pub mod approval;
pub mod boundary;
pub mod destructive;
pub mod display;
pub mod pipeline;
pub mod protected;
pub mod rules;
pub mod sanitize;
pub mod secrets;

pub use agent_core::{Behavior, Verdict};
pub use approval::{
    Approval, ApprovalError, ApprovalProvider, ApprovalRequest, Protection, StaticApproval,
};
pub use boundary::WorkspaceBoundary;
pub use destructive::{DestructiveCommands, destructive_reason};
pub use display::{approval_question, detail_lines, wrap_escaped};
pub use pipeline::{PermissionPipeline, PermissionRule, RuleError, merge};
pub use protected::{PromptWrites, ProtectedPaths};
pub use rules::{EffectRule, RuleFn};
pub use sanitize::{escape_controls, sanitize};
pub use secrets::{SECRET_FILE_NAMES, SecretReads};
