//! The hooks of an agent, in registration order, plugged into the runner as [`TurnHooks`].
//!
//! Failures fail closed where it matters: a PreToolUse hook that errors blocks the call; any
//! other failing hook is reported as [`AgentEvent::HookFailed`] and the run goes on.

use std::fmt;
use std::sync::Arc;

use agent_core::Verdict;
use agent_core::seams::{HookStop, PostToolVerdict, PreToolVerdict, PromptBlocked, TurnHooks};
use agent_core::tool::{FailureCode, PreparedCall, ToolFailure};
use agent_core::{AgentEvent, Events, Message};
use async_trait::async_trait;

use crate::error::{HookError, HookFailed};
use crate::event::{HookEvent, HookEventKind};
use crate::output::{
    EventOutput, HookOutput, PostToolUseOutput, PreToolUseOutput, StopOutput,
    UserPromptSubmitOutput, hook_context,
};

/// A hook. Rust values implement this directly; shell commands are [`crate::ShellHook`]s.
/// The answer must be the output of `event`'s kind, or [`HookOutput::Nothing`].
#[async_trait]
pub trait Hook: Send + Sync {
    /// The name failures are reported under.
    fn name(&self) -> &str;
    /// Runs the hook for `event`; an error is reported (and blocks a PreToolUse call).
    async fn run(&self, event: &HookEvent) -> Result<HookOutput, HookError>;
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
    F: Fn(&HookEvent) -> Result<HookOutput, HookError> + Send + Sync,
{
    /// A hook called `name` that runs `body` for each event it is registered for.
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
    F: Fn(&HookEvent) -> Result<HookOutput, HookError> + Send + Sync,
{
    fn name(&self) -> &str {
        &self.name
    }

    async fn run(&self, event: &HookEvent) -> Result<HookOutput, HookError> {
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
///
/// ```
/// use std::sync::Arc;
///
/// use agent_core::TurnHooks;
/// use agent_hooks::{
///     FnHook, HookEvent, HookEventKind, HookOutput, HookRegistry, UserPromptSubmitOutput,
/// };
///
/// let mut hooks = HookRegistry::new();
/// let guard = FnHook::new("no-secrets", |event: &HookEvent| {
///     let HookEvent::UserPromptSubmit { prompt } = event else {
///         return Ok(HookOutput::Nothing);
///     };
///     Ok(HookOutput::UserPromptSubmit(UserPromptSubmitOutput {
///         block: prompt.contains("password").then(|| "looks like a secret".to_string()),
///         ..UserPromptSubmitOutput::default()
///     }))
/// });
/// hooks.register(HookEventKind::UserPromptSubmit, None, Arc::new(guard));
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let blocked = hooks.user_prompt_submit("my password is hunter2").await.unwrap_err();
/// assert_eq!(blocked.to_string(), "looks like a secret (hook `no-secrets`)");
/// assert!(hooks.user_prompt_submit("list the files").await.unwrap().is_empty());
/// # });
/// ```
#[derive(Default)]
pub struct HookRegistry {
    hooks: Vec<Registration>,
    events: Events,
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
    /// No hooks; failures are told to no one until [`HookRegistry::set_events`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `hook` for `event`, after those already registered. For tool events, a
    /// `matcher` runs it only for the tool of that name; `None` runs it for every tool.
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

    /// No hook is registered.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// Where failures that are reported rather than enforced go.
    pub fn set_events(&mut self, events: Events) -> &mut Self {
        self.events = events;
        self
    }

    /// Told, not logged here: whoever watches the run decides how to show it.
    fn tell_failed(&self, failure: HookFailed) {
        self.events.emit(AgentEvent::HookFailed {
            hook: failure.hook,
            event: failure.event.to_string(),
            message: failure.source.to_string(),
        });
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

    /// Runs one hook and takes its event's output; the error names the hook and the event.
    async fn run_one<T: EventOutput>(
        &self,
        reg: &Registration,
        event: &HookEvent,
    ) -> Result<T, HookFailed> {
        let output = reg.hook.run(event).await.and_then(T::take);
        output.map_err(|source| HookFailed {
            event: event.kind(),
            hook: reg.hook.name().to_string(),
            source,
        })
    }
}

#[async_trait]
impl TurnHooks for HookRegistry {
    async fn user_prompt_submit(&self, prompt: &str) -> Result<Vec<Message>, PromptBlocked> {
        let event = HookEvent::UserPromptSubmit {
            prompt: prompt.to_string(),
        };
        let mut context = Vec::new();
        for reg in self.matching(HookEventKind::UserPromptSubmit, None) {
            match self.run_one::<UserPromptSubmitOutput>(reg, &event).await {
                Ok(output) => {
                    if let Some(reason) = output.block {
                        return Err(PromptBlocked {
                            hook: reg.hook.name().to_string(),
                            reason,
                        });
                    }
                    if let Some(text) = output.additional_context {
                        context.push(hook_context(reg.hook.name(), &text).into_message());
                    }
                }
                Err(failure) => self.tell_failed(failure),
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
            let output = match self.run_one::<PreToolUseOutput>(reg, &event).await {
                Ok(output) => output,
                // Fail closed: a guard that cannot answer must not wave the call through.
                Err(failure) => {
                    return PreToolVerdict::Block(ToolFailure::new(
                        FailureCode::HookError,
                        failure.to_string(),
                    ));
                }
            };
            if let Some(reason) = output.block {
                let message = format!("{} (hook `{}`)", reason, reg.hook.name());
                return PreToolVerdict::Block(ToolFailure::new(FailureCode::HookBlocked, message));
            }
            if let Some(behavior) = output.permission {
                let source = format!("hook:{}", reg.hook.name());
                hints.push(Verdict::new(
                    behavior,
                    source,
                    "recommended by a PreToolUse hook",
                ));
            }
            if let Some(input) = output.updated_input {
                call.arguments = input;
            }
        }
        PreToolVerdict::Continue { call, hints }
    }

    async fn post_tool_use(
        &self,
        call: &PreparedCall,
        output: Result<String, ToolFailure>,
    ) -> PostToolVerdict {
        let mut verdict = PostToolVerdict::proceed(output);
        for reg in self.matching(HookEventKind::PostToolUse, Some(&call.name)) {
            let event = HookEvent::PostToolUse {
                call_id: call.call_id.clone(),
                tool: call.name.clone(),
                input: call.arguments.clone(),
                output: match &verdict.output {
                    Ok(text) => text.clone(),
                    Err(failure) => failure.to_string(),
                },
                is_error: verdict.output.is_err(),
            };
            match self.run_one::<PostToolUseOutput>(reg, &event).await {
                Ok(answer) => {
                    if let Some(text) = answer.updated_output {
                        verdict.output = Ok(text);
                    }
                    if let Some(reason) = answer.stop {
                        tracing::info!(hook = reg.hook.name(), %reason, "hook stopped the run");
                        // The first hook to stop is the one the outcome names.
                        verdict.stop.get_or_insert(HookStop {
                            hook: reg.hook.name().to_string(),
                            tool: call.name.clone(),
                            reason,
                        });
                    }
                }
                Err(failure) => self.tell_failed(failure),
            }
        }
        verdict
    }

    async fn stop(&self, final_text: &str) -> Option<String> {
        let event = HookEvent::Stop {
            final_text: final_text.to_string(),
        };
        for reg in self.matching(HookEventKind::Stop, None) {
            match self.run_one::<StopOutput>(reg, &event).await {
                Ok(output) => {
                    if let Some(message) = output.continue_with {
                        return Some(message);
                    }
                }
                Err(failure) => self.tell_failed(failure),
            }
        }
        None
    }
}
