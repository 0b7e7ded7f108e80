//! One reply's tool calls: each through the hooks, the gate and its handler, answered in order.

use std::sync::Arc;

use super::AgentRunner;
use crate::cancel::{Cancellation, cancelled_failure};
use crate::event::AgentEvent;
use crate::message::{Message, ToolCall};
use crate::seams::{GateDecision, HookStop, PostToolVerdict, PreToolVerdict};
use crate::tool::{FailureCode, ToolFailure};

impl AgentRunner {
    /// Answers every call of one reply, in order. Returns the stop when a hook ended the run;
    /// later calls of the batch are still answered so the history stays paired. Once `cancel`
    /// fires, the running call is dropped and it and the rest are answered `Error [cancelled]`.
    pub(super) async fn run_tool_batch(
        &self,
        history: &mut Vec<Arc<Message>>,
        calls: &[ToolCall],
        cancel: &Cancellation,
    ) -> Option<HookStop> {
        let mut stopped: Option<HookStop> = None;
        let mut batch: Vec<(ToolCall, String)> = Vec::with_capacity(calls.len());
        for call in calls {
            self.events.emit(&AgentEvent::ToolStarted(call.clone()));
            let result = if stopped.is_some() {
                Err(ToolFailure::new(
                    FailureCode::HookStoppedContinuation,
                    "a hook stopped the run before this call ran",
                ))
            } else {
                match cancel.run(self.run_one(call)).await {
                    Some(PostToolVerdict { output, stop }) => {
                        stopped = stop;
                        output
                    }
                    None => Err(cancelled_failure()),
                }
            };
            self.events.emit(&AgentEvent::ToolFinished {
                call: call.clone(),
                result: result.clone(),
            });
            let content = match result {
                Ok(text) => text,
                Err(failure) => failure.to_string(),
            };
            batch.push((call.clone(), content));
        }
        if let Some(shaper) = &self.shaper {
            shaper.shape(&mut batch).await;
        }
        history.extend(
            batch
                .into_iter()
                .map(|(call, content)| Arc::new(Message::tool_result(call.id, content))),
        );
        stopped
    }

    /// Runs one call through the hooks, the gate and its handler. Failures before the handler
    /// never stop the run: only a PostToolUse hook can.
    async fn run_one(&self, call: &ToolCall) -> PostToolVerdict {
        let failed = |failure| PostToolVerdict::proceed(Err(failure));
        let prepared = match self.tools.prepare(call) {
            Ok(prepared) => prepared,
            Err(failure) => return failed(failure),
        };
        let (prepared, hints) = match self.hooks.pre_tool_use(prepared).await {
            PreToolVerdict::Continue {
                call: rewritten,
                hints,
            } => {
                // A hook may rewrite the input, never the identity of the call.
                if rewritten.call_id != call.id || rewritten.name != call.name {
                    let failure = ToolFailure::new(
                        FailureCode::InvalidArguments,
                        "a PreToolUse hook changed the call id or tool name",
                    );
                    return failed(failure);
                }
                match self.tools.revalidate(&rewritten) {
                    Ok(valid) => (valid, hints),
                    Err(failure) => return failed(failure),
                }
            }
            PreToolVerdict::Block(failure) => return failed(failure),
        };
        let output = match self.gate.check(&prepared, &hints).await {
            GateDecision::Allow => self.tools.execute(&prepared).await,
            GateDecision::Deny { reason } => {
                Err(ToolFailure::new(FailureCode::PermissionDenied, reason))
            }
        };
        self.hooks.post_tool_use(&prepared, output).await
    }
}
