//! Replies cut off at the completion limit (`finish_reason == "length"`): one retry with a
//! larger limit, then up to [`RetryPolicy::continuations`](crate::RetryPolicy) requests to go
//! on, the parts joined. These extra requests are this client's own: the loop stores only the
//! joined reply. A tool call whose arguments were cut off is never returned to be run.

use std::sync::Arc;

use agent_core::{EventSink, Message, ModelError, ModelReply, ModelRequest, RecoveryAction, Usage};

use crate::model::RecoveringModel;
use crate::policy::MAX_TOKENS_CEILING;

/// The user message that asks for the rest of a cut-off reply.
pub const CONTINUE_PROMPT: &str = "Your reply was cut off at the length limit. Continue exactly where you stopped: no repetition, no preamble.";

fn cut_off(reply: &ModelReply) -> bool {
    reply.finish_reason.as_deref() == Some("length")
}

fn add_usage(total: Option<Usage>, more: Option<Usage>) -> Option<Usage> {
    match (total, more) {
        (Some(a), Some(b)) => Some(Usage {
            prompt_tokens: a.prompt_tokens.saturating_add(b.prompt_tokens),
            completion_tokens: a.completion_tokens.saturating_add(b.completion_tokens),
            total_tokens: a.total_tokens.saturating_add(b.total_tokens),
            cached_prompt_tokens: None,
        }),
        (a, b) => a.or(b),
    }
}

impl RecoveringModel {
    /// The limit of the retry: twice the limit the cut-off reply had (the request's own or the
    /// configured `--max-tokens`). With no limit set, the server's default cut it, which the
    /// client does not know: twice what the reply produced, and at least the policy's.
    ///
    /// Never above [`MAX_TOKENS_CEILING`] (or the user's own larger `--max-tokens`): the usage
    /// is the server's word, and a server can say anything.
    fn larger_limit(&self, request: &ModelRequest, reply: &ModelReply) -> u32 {
        let ceiling = self
            .configured_max_tokens
            .map_or(MAX_TOKENS_CEILING, |own| own.max(MAX_TOKENS_CEILING));
        let wanted = match request.max_tokens.or(self.configured_max_tokens) {
            Some(had) => had.saturating_mul(2),
            None => reply
                .usage
                .map_or(0, |u| u.completion_tokens)
                .saturating_mul(2)
                .max(self.policy.larger_max_tokens),
        };
        wanted.min(ceiling)
    }

    pub(crate) async fn repair_cut_off(
        &self,
        request: &ModelRequest,
        reply: ModelReply,
        start: tokio::time::Instant,
        deltas: &dyn EventSink,
    ) -> Result<ModelReply, ModelError> {
        if !cut_off(&reply) {
            return Ok(reply);
        }
        let max_tokens = self.larger_limit(request, &reply);
        self.emit(RecoveryAction::LargerLimit { max_tokens });
        let larger = ModelRequest {
            max_tokens: Some(max_tokens),
            ..request.clone()
        };
        let reply = self.with_retries(&larger, start, deltas).await?;
        if !cut_off(&reply) {
            return Ok(reply);
        }
        if !reply.tool_calls.is_empty() {
            return self.drop_cut_calls(reply);
        }
        self.continue_text(request, reply, max_tokens, start, deltas)
            .await
    }

    /// Keeps the calls whose arguments are complete JSON; a cut one is dropped, never run.
    fn drop_cut_calls(&self, mut reply: ModelReply) -> Result<ModelReply, ModelError> {
        let (kept, cut): (Vec<_>, Vec<_>) = reply
            .tool_calls
            .into_iter()
            .partition(|call| serde_json::from_str::<serde_json::Value>(&call.arguments).is_ok());
        for call in &cut {
            self.emit(RecoveryAction::DroppedToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
            });
        }
        let has_text = reply
            .content
            .as_deref()
            .is_some_and(|c| !c.trim().is_empty());
        if kept.is_empty() && !has_text {
            return Err(ModelError::TruncatedToolCall {
                calls: cut
                    .iter()
                    .map(|c| format!("{} ({})", c.name, c.id))
                    .collect(),
            });
        }
        reply.tool_calls = kept;
        Ok(reply)
    }

    /// Asks the model to go on from `first`'s text, up to the policy's count, and joins.
    async fn continue_text(
        &self,
        request: &ModelRequest,
        first: ModelReply,
        max_tokens: u32,
        start: tokio::time::Instant,
        deltas: &dyn EventSink,
    ) -> Result<ModelReply, ModelError> {
        let mut text = first.content.unwrap_or_default();
        let mut usage = first.usage;
        let max_parts = self.policy.continuations.saturating_add(1);
        for part in 2..=max_parts {
            self.emit(RecoveryAction::Continuing { part, max_parts });
            let mut messages = request.messages.clone();
            messages.push(Arc::new(Message::Assistant {
                content: Some(text.clone()),
                tool_calls: Vec::new(),
            }));
            messages.push(Arc::new(Message::user(CONTINUE_PROMPT)));
            // No tools: the model is asked for the rest of its text, nothing else.
            let next = self
                .with_retries(
                    &ModelRequest {
                        messages,
                        tools: Vec::new(),
                        max_tokens: Some(max_tokens),
                    },
                    start,
                    deltas,
                )
                .await?;
            text.push_str(next.content.as_deref().unwrap_or_default());
            usage = add_usage(usage, next.usage);
            if !cut_off(&next) {
                return Ok(ModelReply {
                    content: Some(text),
                    tool_calls: Vec::new(),
                    usage,
                    finish_reason: next.finish_reason,
                });
            }
        }
        // Still cut off after every continuation: the joined text, marked so the CLI says so.
        Ok(ModelReply {
            content: Some(text),
            tool_calls: Vec::new(),
            usage,
            finish_reason: Some("length".into()),
        })
    }
}
