//! The shared vocabulary of permission decisions. It lives at the bottom so that the gate seam
//! (here) and the hooks that recommend a decision (chapter 4) can name it without depending on
//! chapter 3's pipeline (`agent-policy`), which merges the verdicts.

use serde::{Deserialize, Serialize};

/// What a participant says about one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Behavior {
    /// Let the call run.
    Allow,
    /// Refuse it; the model is told why.
    Deny,
    /// Ask the person (no one to ask means deny).
    Ask,
    /// No opinion: the call is left to the others.
    Passthrough,
}

/// One participant's answer, with where it came from and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// What it says.
    pub behavior: Behavior,
    /// Who says it (a rule's or a hook's name).
    pub source: String,
    /// Why, in words the person and the model read.
    pub reason: String,
}

impl Verdict {
    /// A verdict of `source` with its reason.
    pub fn new(behavior: Behavior, source: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            behavior,
            source: source.into(),
            reason: reason.into(),
        }
    }

    /// `source` has no opinion on the call.
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
