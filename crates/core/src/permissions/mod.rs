//! Chapter 3: the permission pipeline.
//!
//! Every prepared call is shown to a list of rules. Each rule answers allow, deny, ask or
//! passthrough ("no opinion"); PreToolUse hooks (chapter 4) add their recommendation to the
//! same list. The answers merge as **deny > ask > allow**, and only when every participant
//! passes does the call run unasked. `ask` goes to an approval provider that fails closed.
//! Every final decision is written to an audit sink.

mod approval;
mod destructive;
mod display;
mod rules;
mod secrets;

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::seams::{GateDecision, PermissionGate};
use crate::tool::PreparedCall;

pub use approval::{
    ApprovalProvider, ApprovalRequest, AuditEntry, AuditSink, MemoryAudit, NoAudit, StaticApproval,
};
pub use destructive::{DestructiveCommands, destructive_reason};
pub use display::{escape_controls, wrap_escaped};
pub use rules::{EffectRule, RuleFn};
pub use secrets::{SECRET_FILE_NAMES, SecretReads};

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

/// A permission rule. An `Err` is treated as deny: a rule that cannot decide must not let a
/// call through.
pub trait PermissionRule: Send + Sync {
    fn name(&self) -> &str;
    fn evaluate(&self, call: &PreparedCall) -> Result<Verdict, String>;
}

/// Merges verdicts: deny > ask > allow; only passthrough means allow. The winning verdict is
/// the first of the strongest behaviour, so its reason is the one shown.
pub fn merge(verdicts: &[Verdict]) -> Verdict {
    for behavior in [Behavior::Deny, Behavior::Ask, Behavior::Allow] {
        if let Some(v) = verdicts.iter().find(|v| v.behavior == behavior) {
            return v.clone();
        }
    }
    Verdict::new(Behavior::Allow, "default", "no rule objected")
}

/// The chapter-3 [`PermissionGate`].
pub struct PermissionPipeline {
    rules: Vec<Arc<dyn PermissionRule>>,
    approval: Option<Arc<dyn ApprovalProvider>>,
    audit: Arc<dyn AuditSink>,
}

impl std::fmt::Debug for PermissionPipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermissionPipeline")
            .field(
                "rules",
                &self
                    .rules
                    .iter()
                    .map(|r| r.name().to_string())
                    .collect::<Vec<_>>(),
            )
            .field("approval", &self.approval.is_some())
            .finish_non_exhaustive()
    }
}

impl PermissionPipeline {
    pub fn new(audit: Arc<dyn AuditSink>) -> Self {
        Self {
            rules: Vec::new(),
            approval: None,
            audit,
        }
    }

    pub fn rule(mut self, rule: Arc<dyn PermissionRule>) -> Self {
        self.rules.push(rule);
        self
    }

    pub fn approval(mut self, provider: Arc<dyn ApprovalProvider>) -> Self {
        self.approval = Some(provider);
        self
    }

    /// Every participant's verdict for `call`, rules first, then the hook recommendations.
    pub fn verdicts(&self, call: &PreparedCall, hints: &[Verdict]) -> Vec<Verdict> {
        let mut verdicts: Vec<Verdict> = self
            .rules
            .iter()
            .map(|rule| {
                rule.evaluate(call).unwrap_or_else(|err| {
                    Verdict::new(
                        Behavior::Deny,
                        rule.name(),
                        format!(
                            "rule `{}` failed, so the call is denied: {err}",
                            rule.name()
                        ),
                    )
                })
            })
            .collect();
        verdicts.extend(hints.iter().cloned());
        verdicts
    }

    async fn decide(&self, call: &PreparedCall, merged: &Verdict) -> (bool, String) {
        match merged.behavior {
            Behavior::Allow | Behavior::Passthrough => (true, merged.reason.clone()),
            Behavior::Deny => (false, merged.reason.clone()),
            Behavior::Ask => {
                let Some(provider) = &self.approval else {
                    return (
                        false,
                        format!("{}; no approval provider, so denied", merged.reason),
                    );
                };
                let request = ApprovalRequest {
                    tool: call.name.clone(),
                    summary: approval::summarize(call),
                    reason: merged.reason.clone(),
                };
                match provider.approve(&request).await {
                    Ok(true) => (true, format!("{}; approved", merged.reason)),
                    Ok(false) => (false, format!("{}; the user declined", merged.reason)),
                    Err(err) => (
                        false,
                        format!("{}; approval failed ({err}), so denied", merged.reason),
                    ),
                }
            }
        }
    }
}

#[async_trait]
impl PermissionGate for PermissionPipeline {
    async fn check(&self, call: &PreparedCall, hints: &[Verdict]) -> GateDecision {
        let verdicts = self.verdicts(call, hints);
        let merged = merge(&verdicts);
        let (allowed, reason) = self.decide(call, &merged).await;
        self.audit.record(&AuditEntry {
            call_id: call.call_id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            merged: merged.behavior,
            source: merged.source.clone(),
            allowed,
            reason: reason.clone(),
        });
        if allowed {
            GateDecision::Allow
        } else {
            GateDecision::Deny {
                reason: format!("{} (by {})", reason, merged.source),
            }
        }
    }
}
