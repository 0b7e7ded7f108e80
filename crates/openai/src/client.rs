//! The Chat Completions adapter: our `ModelRequest` in, our `ModelReply` out.
//!
//! Portability rules that keep small OpenAI-compatible servers happy (learned on llama.cpp):
//! an assistant message with tool calls carries `content: ""`, never `null`; `tools` and
//! `tool_choice: "auto"` are sent only when there are tools; no streaming; usage details are
//! optional. No automatic retries here: recovery is chapter 11.

use agent_core::{Message, ModelClient, ModelError, ModelReply, ModelRequest, ToolCall, Usage};
use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::types::chat::{
    ChatCompletionMessageToolCall, ChatCompletionMessageToolCalls,
    ChatCompletionRequestAssistantMessage, ChatCompletionRequestAssistantMessageContent,
    ChatCompletionRequestMessage, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestSystemMessageContent, ChatCompletionRequestToolMessage,
    ChatCompletionRequestToolMessageContent, ChatCompletionRequestUserMessage,
    ChatCompletionRequestUserMessageContent, ChatCompletionTool, ChatCompletionToolChoiceOption,
    ChatCompletionTools, CreateChatCompletionRequest, CreateChatCompletionResponse, FunctionCall,
    FunctionObject, ToolChoiceOptions,
};
use async_trait::async_trait;

use crate::config::{ApiKey, OpenAiConfig, Sampling};

/// A [`ModelClient`] speaking Chat Completions to any compatible server.
pub struct OpenAiModel {
    client: Client<OpenAIConfig>,
    model: String,
    sampling: Sampling,
    key: ApiKey,
}

impl std::fmt::Debug for OpenAiModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiModel")
            .field("model", &self.model)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl OpenAiModel {
    pub fn new(config: &OpenAiConfig) -> Self {
        let api = OpenAIConfig::new()
            .with_api_base(config.base_url.clone())
            .with_api_key(config.api_key.expose());
        let mut client = Client::with_config(api);
        // async-openai's default HTTP client has no timeout; ours does.
        match reqwest::Client::builder()
            .connect_timeout(std::time::Duration::from_secs(10))
            .timeout(config.request_timeout)
            .build()
        {
            Ok(http) => client = client.with_http_client(http),
            Err(err) => tracing::warn!("cannot set a request timeout: {err}"),
        }
        Self {
            client,
            model: config.model.clone(),
            sampling: config.sampling,
            key: config.api_key.clone(),
        }
    }

    pub fn model(&self) -> &str {
        &self.model
    }
}

/// The exact request body sent for `request` (also used by `agent-tutorial prompt --json`).
pub fn to_chat_request(
    model: &str,
    sampling: Sampling,
    request: &ModelRequest,
) -> CreateChatCompletionRequest {
    let mut body = CreateChatCompletionRequest {
        model: model.to_string(),
        messages: request.messages.iter().map(to_chat_message).collect(),
        temperature: sampling.temperature,
        ..CreateChatCompletionRequest::default()
    };
    // `max_tokens` rather than `max_completion_tokens`: it is the field every
    // OpenAI-compatible server knows (llama.cpp's and llama-cpp-python's ignore the newer one).
    #[allow(deprecated)]
    {
        body.max_tokens = sampling.max_tokens;
    }
    if !request.tools.is_empty() {
        body.tools = Some(
            request
                .tools
                .iter()
                .map(|spec| {
                    ChatCompletionTools::Function(ChatCompletionTool {
                        function: FunctionObject {
                            name: spec.name.clone(),
                            description: Some(spec.description.clone()),
                            parameters: Some(spec.parameters.clone()),
                            strict: None,
                        },
                    })
                })
                .collect(),
        );
        body.tool_choice = Some(ChatCompletionToolChoiceOption::Mode(
            ToolChoiceOptions::Auto,
        ));
    }
    body
}

fn to_chat_message(message: &Message) -> ChatCompletionRequestMessage {
    match message {
        Message::System { content } => {
            ChatCompletionRequestMessage::System(ChatCompletionRequestSystemMessage {
                content: ChatCompletionRequestSystemMessageContent::Text(content.clone()),
                name: None,
            })
        }
        Message::User { content } => {
            ChatCompletionRequestMessage::User(ChatCompletionRequestUserMessage {
                content: ChatCompletionRequestUserMessageContent::Text(content.clone()),
                name: None,
            })
        }
        Message::Assistant {
            content,
            tool_calls,
        } => {
            let calls = (!tool_calls.is_empty()).then(|| {
                tool_calls
                    .iter()
                    .map(|call| {
                        ChatCompletionMessageToolCalls::Function(ChatCompletionMessageToolCall {
                            id: call.id.clone(),
                            function: FunctionCall {
                                name: call.name.clone(),
                                arguments: call.arguments.clone(),
                            },
                        })
                    })
                    .collect()
            });
            ChatCompletionRequestMessage::Assistant(ChatCompletionRequestAssistantMessage {
                // Never `null`: some servers reject a null content next to tool calls.
                content: Some(ChatCompletionRequestAssistantMessageContent::Text(
                    content.clone().unwrap_or_default(),
                )),
                tool_calls: calls,
                ..ChatCompletionRequestAssistantMessage::default()
            })
        }
        Message::Tool {
            tool_call_id,
            content,
        } => ChatCompletionRequestMessage::Tool(ChatCompletionRequestToolMessage {
            content: ChatCompletionRequestToolMessageContent::Text(content.clone()),
            tool_call_id: tool_call_id.clone(),
        }),
    }
}

fn from_chat_response(response: CreateChatCompletionResponse) -> Result<ModelReply, ModelError> {
    let usage = response.usage.map(|u| Usage {
        prompt_tokens: u.prompt_tokens,
        completion_tokens: u.completion_tokens,
        total_tokens: u.total_tokens,
        cached_prompt_tokens: u.prompt_tokens_details.and_then(|d| d.cached_tokens),
    });
    let choice =
        response
            .choices
            .into_iter()
            .next()
            .ok_or_else(|| ModelError::InvalidResponse {
                message: "the reply has no choices".into(),
            })?;
    let mut tool_calls = Vec::new();
    for call in choice.message.tool_calls.unwrap_or_default() {
        match call {
            ChatCompletionMessageToolCalls::Function(call) => tool_calls.push(ToolCall {
                id: call.id,
                name: call.function.name,
                arguments: call.function.arguments,
            }),
            ChatCompletionMessageToolCalls::Custom(call) => {
                return Err(ModelError::InvalidResponse {
                    message: format!("custom tool call `{}` is not supported", call.id),
                });
            }
        }
    }
    let finish_reason = choice
        .finish_reason
        .and_then(|r| serde_json::to_value(r).ok())
        .and_then(|v| v.as_str().map(str::to_string));
    Ok(ModelReply {
        content: choice.message.content.filter(|c| !c.is_empty()),
        tool_calls,
        usage,
        finish_reason,
    })
}

fn looks_like_context_overflow(code: Option<&str>, message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    code == Some("context_length_exceeded")
        || message.contains("context length")
        || message.contains("context window")
        || message.contains("prompt is too long")
        || message.contains("too many tokens")
}

/// Maps a client error to a typed [`ModelError`], redacting the key from every message.
fn map_error(error: OpenAIError, key: &ApiKey) -> ModelError {
    match error {
        OpenAIError::ApiError(api) => {
            let status = api.status_code.as_u16();
            let message = key.redact(&api.api_error.message);
            match status {
                401 | 403 => ModelError::Auth { status, message },
                429 => ModelError::RateLimited {
                    message,
                    retry_after: None,
                },
                413 => ModelError::PromptTooLong { message },
                400 if looks_like_context_overflow(api.api_error.code.as_deref(), &message) => {
                    ModelError::PromptTooLong { message }
                }
                s if s >= 500 => ModelError::Server { status, message },
                _ => ModelError::Http { status, message },
            }
        }
        OpenAIError::Reqwest(err) => match err.status() {
            Some(status) => ModelError::Http {
                status: status.as_u16(),
                message: key.redact(&err.to_string()),
            },
            None => ModelError::Transport {
                message: key.redact(&err.to_string()),
            },
        },
        other => ModelError::InvalidResponse {
            message: key.redact(&other.to_string()),
        },
    }
}

#[async_trait]
impl ModelClient for OpenAiModel {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        let body = to_chat_request(&self.model, self.sampling, request);
        tracing::debug!(model = %self.model, messages = body.messages.len(), "chat completion");
        let response = self
            .client
            .chat()
            .create(body)
            .await
            .map_err(|err| map_error(err, &self.key))?;
        let reply = from_chat_response(response)?;
        if let Some(usage) = &reply.usage {
            tracing::debug!(
                prompt = usage.prompt_tokens,
                completion = usage.completion_tokens,
                cached = usage.cached_prompt_tokens,
                "usage"
            );
        }
        Ok(reply)
    }
}
