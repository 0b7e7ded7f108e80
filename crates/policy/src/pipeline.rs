//! Rules, the merge, and the pipeline that plugs into the runner's permission gate.

use std::sync::Arc;

use agent_core::{
    AgentEvent, Behavior, Events, GateDecision, PermissionDecision, PermissionGate, PreparedCall,
    Verdict,
};
use async_trait::async_trait;

use crate::approval::{self, Approval, ApprovalProvider, ApprovalRequest, Protection};
use crate::protected::{PromptWrites, ProtectedPaths};

/// Why a rule could not decide. The pipeline turns it into a deny: a rule that cannot decide
/// must not let a call through.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    /// A path the call names cannot be resolved (the boundary rule).
    #[error(transparent)]
    Path(#[from] agent_workspace::PathError),
    /// The rule's own patterns do not build (a bug, reported on every call it sees).
    #[error(transparent)]
    Patterns(#[from] globset::Error),
    /// A rule added at build time ([`crate::RuleFn`]) failed.
    #[error(transparent)]
    Custom(Box<dyn std::error::Error + Send + Sync>),
}

impl RuleError {
    /// A [`RuleError::Custom`] from any error or message.
    pub fn custom(err: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Custom(err.into())
    }
}

/// A permission rule. An `Err` is treated as deny.
pub trait PermissionRule: Send + Sync {
    /// The name its verdicts carry (shown in the audit log and in a denial's reason).
    fn name(&self) -> &str;
    /// This rule's verdict on one call; [`Verdict::passthrough`] for "no opinion".
    fn evaluate(&self, call: &PreparedCall) -> Result<Verdict, RuleError>;
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

/// The final word on one call, after approval: what runs and why.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Decision {
    Allow { reason: String },
    Deny { reason: String },
}

impl Decision {
    fn is_allowed(&self) -> bool {
        matches!(self, Self::Allow { .. })
    }

    fn reason(&self) -> &str {
        match self {
            Self::Allow { reason } | Self::Deny { reason } => reason,
        }
    }
}

/// The chapter-3 [`PermissionGate`].
///
/// ```
/// use std::sync::Arc;
///
/// use agent_core::{CallSummary, GateDecision, PermissionGate, PreparedCall, ToolEffect};
/// use agent_policy::{Behavior, DestructiveCommands, EffectRule, PermissionPipeline, StaticApproval};
/// use serde_json::json;
///
/// let pipeline = PermissionPipeline::new()
///     .rule(Arc::new(DestructiveCommands))
///     .rule(Arc::new(EffectRule::new("bash_asks", ToolEffect::Execute, Behavior::Ask, "commands ask")))
///     .approval(Arc::new(StaticApproval::ApproveAll));
/// let bash = |command: &str| PreparedCall {
///     call_id: "c1".into(),
///     name: "bash".into(),
///     arguments: json!({"command": command}),
///     effect: ToolEffect::Execute,
///     summary: CallSummary::text(command),
/// };
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert_eq!(pipeline.check(&bash("cargo test"), &[]).await, GateDecision::Allow);
/// // deny > ask > allow: approving every question does not let a denied command through.
/// let denied = pipeline.check(&bash("rm -rf /"), &[]).await;
/// let reason = "`rm -rf /` is not allowed (by destructive_commands)".to_string();
/// assert_eq!(denied, GateDecision::Deny { reason });
/// # });
/// ```
pub struct PermissionPipeline {
    rules: Vec<Arc<dyn PermissionRule>>,
    approval: Option<Arc<dyn ApprovalProvider>>,
    /// Where every final decision goes ([`AgentEvent::PermissionDecided`]): the audit log is a
    /// reader of these events, not a second sink.
    events: Events,
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

impl Default for PermissionPipeline {
    fn default() -> Self {
        Self::new()
    }
}

impl PermissionPipeline {
    /// A pipeline with no rule, no approval provider and no one told of its decisions.
    pub fn new() -> Self {
        Self {
            rules: Vec::new(),
            approval: None,
            events: Events::default(),
        }
    }

    /// Tells `events` every final decision.
    pub fn events(mut self, events: Events) -> Self {
        self.events = events;
        self
    }

    /// Adds `rule` after the rules already there; verdicts merge as deny > ask > allow
    /// whatever the order.
    pub fn rule(mut self, rule: Arc<dyn PermissionRule>) -> Self {
        self.rules.push(rule);
        self
    }

    /// Who answers `ask`; without one, every `ask` is a denial (fail closed).
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

    async fn decide(
        &self,
        call: &PreparedCall,
        merged: &Verdict,
        protection: Protection,
    ) -> Decision {
        let reason = &merged.reason;
        match merged.behavior {
            Behavior::Allow | Behavior::Passthrough => Decision::Allow {
                reason: reason.clone(),
            },
            Behavior::Deny => Decision::Deny {
                reason: reason.clone(),
            },
            Behavior::Ask => {
                let Some(provider) = &self.approval else {
                    return Decision::Deny {
                        reason: format!("{reason}; no approval provider, so denied"),
                    };
                };
                let request = ApprovalRequest {
                    tool: call.name.clone(),
                    summary: approval::summarize(call),
                    reason: reason.clone(),
                    detail: approval::detail(call),
                    protection,
                };
                match provider.approve(&request).await {
                    Ok(Approval::Approved) => Decision::Allow {
                        reason: format!("{reason}; approved"),
                    },
                    Ok(Approval::Declined) => Decision::Deny {
                        reason: format!("{reason}; the user declined"),
                    },
                    Err(err) => Decision::Deny {
                        reason: format!("{reason}; approval failed ({err}), so denied"),
                    },
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
        // A protected place asked: no remembered answer may stand in for the user's.
        let protection = if verdicts.iter().any(|v| {
            v.behavior == Behavior::Ask
                && [ProtectedPaths::NAME, PromptWrites::NAME].contains(&v.source.as_str())
        }) {
            Protection::AlwaysAsk
        } else {
            Protection::Ordinary
        };
        let decision = self.decide(call, &merged, protection).await;
        self.events
            .emit(AgentEvent::PermissionDecided(PermissionDecision {
                call_id: call.call_id.clone(),
                tool: call.name.clone(),
                arguments: call.arguments.clone(),
                merged: merged.behavior,
                source: merged.source.clone(),
                allowed: decision.is_allowed(),
                reason: decision.reason().to_string(),
            }));
        match decision {
            Decision::Allow { .. } => GateDecision::Allow,
            Decision::Deny { reason } => GateDecision::Deny {
                reason: format!("{reason} (by {})", merged.source),
            },
        }
    }
}
