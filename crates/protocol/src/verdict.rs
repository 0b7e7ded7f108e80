//! The shared vocabulary of permission decisions. It lives at the bottom so that the gate seam
//! (here) and the hooks that recommend a decision (chapter 4) can name it without depending on
//! chapter 3's pipeline (`agent-policy`), which merges the verdicts.

use serde::{Deserialize, Serialize};

/// What a participant says about one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Behavior {
    Allow,
    Deny,
    Ask,
    /// No opinion: the call is left to the others.
    Passthrough,
}

/// One participant's answer, with where it came from and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub behavior: Behavior,
    pub source: String,
    pub reason: String,
}

impl Verdict {
    pub fn new(behavior: Behavior, source: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            behavior,
            source: source.into(),
            reason: reason.into(),
        }
    }

    pub fn passthrough(source: impl Into<String>) -> Self {
        Self::new(Behavior::Passthrough, source, "")
    }
}

/// A final permission decision for one call, as the audit log records it (chapter 3): the
/// merged behaviour of every participant, which one decided, and what happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionDecision {
    /// The call decided.
    pub call_id: String,
    /// Its tool.
    pub tool: String,
    /// Its validated arguments.
    pub arguments: serde_json::Value,
    /// The merged behaviour before approval.
    pub merged: Behavior,
    /// Which participant decided (a rule's name, `approval`, …).
    pub source: String,
    /// The final decision: the call runs.
    pub allowed: bool,
    /// Why, in the decider's words.
    pub reason: String,
}
