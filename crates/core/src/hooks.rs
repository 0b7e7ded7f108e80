//! Chapter 4: lifecycle hooks.
//!
//! Hooks are values registered at build time for one event (and, for tool events, optionally
//! one tool name). They run in registration order. A hook answers with a [`HookResult`]; each
//! field belongs to exactly one or two events, and a field sent for the wrong event is an
//! error — silently ignoring it would hide a misconfigured hook.
//!
//! | event | fields it may set |
//! |---|---|
//! | `UserPromptSubmit` | `block`, `additional_context` |
//! | `PreToolUse` | `block`, `permission`, `updated_input` |
//! | `PostToolUse` | `updated_output`, `stop` |
//! | `Stop` | `continue_with` |
//!
//! Failures fail closed where it matters: a PreToolUse hook that errors blocks the call; any
//! other failing hook is reported (see [`HookRegistry::errors`]) and the run goes on.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::Message;
use crate::seams::{PostToolVerdict, PreToolVerdict, TurnHooks};
use crate::tool::{PreparedCall, ToolFailure};
use crate::verdict::{Behavior, Verdict};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HookEventKind {
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    Stop,
}

impl fmt::Display for HookEventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// What a hook is told. Serialized as JSON for shell hooks (`{"event": "PreToolUse", …}`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event")]
pub enum HookEvent {
    UserPromptSubmit {
        prompt: String,
    },
    PreToolUse {
        call_id: String,
        tool: String,
        input: Value,
    },
    PostToolUse {
        call_id: String,
        tool: String,
        input: Value,
        output: String,
        is_error: bool,
    },
    Stop {
        final_text: String,
    },
}

impl HookEvent {
    pub fn kind(&self) -> HookEventKind {
        match self {
            Self::UserPromptSubmit { .. } => HookEventKind::UserPromptSubmit,
            Self::PreToolUse { .. } => HookEventKind::PreToolUse,
            Self::PostToolUse { .. } => HookEventKind::PostToolUse,
            Self::Stop { .. } => HookEventKind::Stop,
        }
    }
}

/// A hook's answer. Every field is optional; an empty result changes nothing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<Behavior>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_output: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continue_with: Option<String>,
}

impl HookResult {
    /// The names of the fields that are set.
    fn set_fields(&self) -> Vec<&'static str> {
        let mut fields = Vec::new();
        let mut add = |set: bool, name| {
            if set {
                fields.push(name);
            }
        };
        add(self.block.is_some(), "block");
        add(self.additional_context.is_some(), "additional_context");
        add(self.permission.is_some(), "permission");
        add(self.updated_input.is_some(), "updated_input");
        add(self.updated_output.is_some(), "updated_output");
        add(self.stop.is_some(), "stop");
        add(self.continue_with.is_some(), "continue_with");
        fields
    }

    /// Fails when a field is set that does not belong to `kind`.
    pub fn check_for(&self, kind: HookEventKind) -> Result<(), String> {
        let allowed: &[&str] = match kind {
            HookEventKind::UserPromptSubmit => &["block", "additional_context"],
            HookEventKind::PreToolUse => &["block", "permission", "updated_input"],
            HookEventKind::PostToolUse => &["updated_output", "stop"],
            HookEventKind::Stop => &["continue_with"],
        };
        match self.set_fields().into_iter().find(|f| !allowed.contains(f)) {
            Some(field) => Err(format!(
                "`{field}` is not a {kind} result field (allowed: {})",
                allowed.join(", ")
            )),
            None => Ok(()),
        }
    }
}

/// A hook. Rust values implement this directly; shell commands are wrapped by the CLI.
#[async_trait]
pub trait Hook: Send + Sync {
    fn name(&self) -> &str;
    async fn run(&self, event: &HookEvent) -> Result<HookResult, String>;
}

/// A hook from a closure, for hooks written in Rust at build time.
pub struct FnHook<F> {
    name: String,
    body: F,
}

impl<F> fmt::Debug for FnHook<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnHook").field("name", &self.name).finish()
    }
}

impl<F> FnHook<F>
where
    F: Fn(&HookEvent) -> Result<HookResult, String> + Send + Sync,
{
    pub fn new(name: impl Into<String>, body: F) -> Self {
        Self {
            name: name.into(),
            body,
        }
    }
}

#[async_trait]
impl<F> Hook for FnHook<F>
where
    F: Fn(&HookEvent) -> Result<HookResult, String> + Send + Sync,
{
    fn name(&self) -> &str {
        &self.name
    }

    async fn run(&self, event: &HookEvent) -> Result<HookResult, String> {
        (self.body)(event)
    }
}

struct Registration {
    event: HookEventKind,
    /// For tool events: run only for this tool name.
    matcher: Option<String>,
    hook: Arc<dyn Hook>,
}

/// The hooks of an agent, in registration order; plugs into the runner as [`TurnHooks`].
#[derive(Default)]
pub struct HookRegistry {
    hooks: Vec<Registration>,
    errors: Mutex<Vec<String>>,
}

impl fmt::Debug for HookRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self
            .hooks
            .iter()
            .map(|r| format!("{}:{}", r.event, r.hook.name()))
            .collect();
        f.debug_struct("HookRegistry")
            .field("hooks", &names)
            .finish()
    }
}

impl HookRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn register(
        &mut self,
        event: HookEventKind,
        matcher: Option<String>,
        hook: Arc<dyn Hook>,
    ) -> &mut Self {
        self.hooks.push(Registration {
            event,
            matcher,
            hook,
        });
        self
    }

    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// Hook failures that were reported rather than enforced.
    pub fn errors(&self) -> Vec<String> {
        self.errors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn report(&self, message: String) {
        tracing::warn!("{message}");
        self.errors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(message);
    }

    fn matching<'a>(
        &'a self,
        kind: HookEventKind,
        tool: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Registration> + 'a {
        self.hooks.iter().filter(move |r| {
            r.event == kind
                && match (&r.matcher, tool) {
                    (Some(m), Some(t)) => m == t,
                    (Some(_), None) => false,
                    (None, _) => true,
                }
        })
    }

    /// Runs one hook and checks its fields; the error names the hook and the event.
    async fn run_one(&self, reg: &Registration, event: &HookEvent) -> Result<HookResult, String> {
        let result = reg.hook.run(event).await.and_then(|r| {
            r.check_for(event.kind())?;
            Ok(r)
        });
        result.map_err(|err| format!("{} hook `{}` failed: {err}", event.kind(), reg.hook.name()))
    }
}

#[async_trait]
impl TurnHooks for HookRegistry {
    async fn user_prompt_submit(&self, prompt: &str) -> Result<Vec<Message>, String> {
        let event = HookEvent::UserPromptSubmit {
            prompt: prompt.to_string(),
        };
        let mut context = Vec::new();
        for reg in self.matching(HookEventKind::UserPromptSubmit, None) {
            match self.run_one(reg, &event).await {
                Ok(result) => {
                    if let Some(reason) = result.block {
                        return Err(format!("{} (hook `{}`)", reason, reg.hook.name()));
                    }
                    if let Some(text) = result.additional_context {
                        context.push(Message::user(format!(
                            "<hook-context source=\"{}\">\n{text}\n</hook-context>",
                            reg.hook.name()
                        )));
                    }
                }
                Err(err) => self.report(err),
            }
        }
        Ok(context)
    }

    async fn pre_tool_use(&self, mut call: PreparedCall) -> PreToolVerdict {
        let mut hints = Vec::new();
        let tool = call.name.clone();
        for reg in self.matching(HookEventKind::PreToolUse, Some(&tool)) {
            let event = HookEvent::PreToolUse {
                call_id: call.call_id.clone(),
                tool: call.name.clone(),
                input: call.arguments.clone(),
            };
            let result = match self.run_one(reg, &event).await {
                Ok(result) => result,
                // Fail closed: a guard that cannot answer must not wave the call through.
                Err(err) => return PreToolVerdict::Block(ToolFailure::new("hook_error", err)),
            };
            if let Some(reason) = result.block {
                let message = format!("{} (hook `{}`)", reason, reg.hook.name());
                return PreToolVerdict::Block(ToolFailure::new("hook_blocked", message));
            }
            if let Some(behavior) = result.permission {
                let source = format!("hook:{}", reg.hook.name());
                hints.push(Verdict::new(
                    behavior,
                    source,
                    "recommended by a PreToolUse hook",
                ));
            }
            if let Some(input) = result.updated_input {
                call.arguments = input;
            }
        }
        PreToolVerdict::Continue { call, hints }
    }

    async fn post_tool_use(
        &self,
        call: &PreparedCall,
        mut output: Result<String, ToolFailure>,
    ) -> PostToolVerdict {
        let mut stop = false;
        for reg in self.matching(HookEventKind::PostToolUse, Some(&call.name)) {
            let event = HookEvent::PostToolUse {
                call_id: call.call_id.clone(),
                tool: call.name.clone(),
                input: call.arguments.clone(),
                output: match &output {
                    Ok(text) => text.clone(),
                    Err(failure) => failure.to_string(),
                },
                is_error: output.is_err(),
            };
            match self.run_one(reg, &event).await {
                Ok(result) => {
                    if let Some(text) = result.updated_output {
                        output = Ok(text);
                    }
                    if let Some(reason) = result.stop {
                        tracing::info!(hook = reg.hook.name(), %reason, "hook stopped the run");
                        stop = true;
                    }
                }
                Err(err) => self.report(err),
            }
        }
        if stop {
            PostToolVerdict::Stop(output)
        } else {
            PostToolVerdict::Continue(output)
        }
    }

    async fn stop(&self, final_text: &str) -> Option<String> {
        let event = HookEvent::Stop {
            final_text: final_text.to_string(),
        };
        for reg in self.matching(HookEventKind::Stop, None) {
            match self.run_one(reg, &event).await {
                Ok(result) => {
                    if let Some(message) = result.continue_with {
                        return Some(message);
                    }
                }
                Err(err) => self.report(err),
            }
        }
        None
    }
}
