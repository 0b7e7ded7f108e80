//! Simple rules built from a tool's effect or from a closure.

use agent_core::{Behavior, PreparedCall, ToolEffect, Verdict};

use crate::pipeline::{PermissionRule, RuleError};

/// Gives every call with `effect` the same behaviour: "bash asks" (execute → ask) is the
/// built-in default, "writes ask" is what P03 adds.
#[derive(Debug, Clone)]
pub struct EffectRule {
    /// The rule's name, as its verdicts carry it.
    pub name: String,
    /// The calls it speaks about.
    pub effect: ToolEffect,
    /// What it says about them.
    pub behavior: Behavior,
    /// Why, shown in the question or the denial.
    pub reason: String,
}

impl EffectRule {
    /// A rule called `name` giving every `effect` call `behavior`, for `reason`.
    pub fn new(name: &str, effect: ToolEffect, behavior: Behavior, reason: &str) -> Self {
        Self {
            name: name.into(),
            effect,
            behavior,
            reason: reason.into(),
        }
    }
}

impl PermissionRule for EffectRule {
    fn name(&self) -> &str {
        &self.name
    }

    fn evaluate(&self, call: &PreparedCall) -> Result<Verdict, RuleError> {
        Ok(if call.effect == self.effect {
            Verdict::new(self.behavior, &self.name, &self.reason)
        } else {
            Verdict::passthrough(&self.name)
        })
    }
}

type RuleBody = dyn Fn(&PreparedCall) -> Result<Verdict, RuleError> + Send + Sync;

/// A rule from a closure, for rules added at build time.
pub struct RuleFn {
    name: String,
    body: Box<RuleBody>,
}

impl std::fmt::Debug for RuleFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuleFn").field("name", &self.name).finish()
    }
}

impl RuleFn {
    /// A rule called `name` whose verdict `body` computes.
    pub fn new(
        name: impl Into<String>,
        body: impl Fn(&PreparedCall) -> Result<Verdict, RuleError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            name: name.into(),
            body: Box::new(body),
        }
    }
}

impl PermissionRule for RuleFn {
    fn name(&self) -> &str {
        &self.name
    }

    fn evaluate(&self, call: &PreparedCall) -> Result<Verdict, RuleError> {
        (self.body)(call)
    }
}
