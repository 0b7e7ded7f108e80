//! The Chat Completions adapter: our `ModelRequest` in, our `ModelReply` out.
//!
//! Portability rules that keep small OpenAI-compatible servers happy (learned on llama.cpp):
//! an assistant message with tool calls carries `content: ""`, never `null`; `tools` and
//! `tool_choice: "auto"` are sent only when there are tools; streaming only when asked
//! (`--stream`, [`crate::stream`]); usage details are optional. async-openai provides the request and response types; the HTTP exchange is ours
//! ([`crate::http`]): one attempt per call, no automatic retries (recovery is chapter 11).

use std::time::Duration;

use agent_core::{
    EventSink, Message, ModelClient, ModelError, ModelReply, ModelRequest, NoEvents, ToolCall,
    Usage,
};
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
use crate::errors::{map_http_error, map_status, map_stream_error};
use crate::http::{HttpError, HttpLayer, Opened};
use crate::stream::{Assembler, DEFAULT_STREAM_IDLE, DONE, SseParser, StreamError, Streaming};
use crate::wire::RequestEncoder;

/// A [`ModelClient`] speaking Chat Completions to any compatible server.
///
/// ```
/// use std::time::Duration;
///
/// use agent_core::{Message, ModelClient, ModelReply, ModelRequest};
/// use agent_openai::{ApiKey, OpenAiConfig, OpenAiModel, Sampling};
/// use serde_json::json;
/// use wiremock::matchers::{method, path};
/// use wiremock::{Mock, MockServer, ResponseTemplate};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// // A local stand-in for the server: no network, no key.
/// let server = MockServer::start().await;
/// let answer = json!({
///     "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "small",
///     "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello."},
///                  "finish_reason": "stop"}]
/// });
/// Mock::given(method("POST"))
///     .and(path("/v1/chat/completions"))
///     .respond_with(ResponseTemplate::new(200).set_body_json(answer))
///     .mount(&server)
///     .await;
///
/// let model = OpenAiModel::new(&OpenAiConfig {
///     base_url: format!("{}/v1", server.uri()),
///     api_key: ApiKey::new("local"),
///     model: "small".into(),
///     fallback_model: None,
///     sampling: Sampling::default(),
///     request_timeout: Duration::from_secs(10),
/// })
/// .unwrap();
/// let request = ModelRequest {
///     messages: vec![Message::user("hi").into()],
///     ..ModelRequest::default()
/// };
/// let reply = model.complete(&request).await.unwrap();
/// assert_eq!(reply.content.as_deref(), Some("Hello."));
/// # });
/// ```
pub struct OpenAiModel {
    http: HttpLayer,
    model: String,
    sampling: Sampling,
    key: ApiKey,
    /// Writes the bodies (with the `prompt_cache_key`, see [`OpenAiModel::prompt_cache_key`]),
    /// keeping each message's bytes from the previous request.
    encoder: RequestEncoder,
    cache_key: Option<String>,
    stream: Streaming,
    /// A streamed reply that sends nothing for this long has stalled.
    stream_idle: Duration,
    /// The whole exchange's deadline, streamed or not (`--request-timeout`).
    timeout: Duration,
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
    /// A client for `config`'s server and model. No request is made yet.
    pub fn new(config: &OpenAiConfig) -> Result<Self, HttpError> {
        let http = HttpLayer::new(
            format!("{}/chat/completions", config.base_url),
            config.api_key.clone(),
            config.request_timeout,
        )?;
        Ok(Self {
            http,
            model: config.model.clone(),
            sampling: config.sampling,
            key: config.api_key.clone(),
            encoder: RequestEncoder::new(config.model.clone(), config.sampling, None),
            cache_key: None,
            stream: Streaming::Off,
            stream_idle: DEFAULT_STREAM_IDLE.min(config.request_timeout),
            timeout: config.request_timeout,
        })
    }

    /// Sends `key` as `prompt_cache_key` with every request: one id for the whole session, so
    /// a provider that shards its prompt cache routes every request of the session to the
    /// same cache (OpenAI; servers that do not know the field ignore it). It goes in here, at
    /// the wire, and not into [`ModelRequest`]: it says where to look the prefix up, not what
    /// the model reads, so recorded requests and request snapshots stay as they were.
    pub fn prompt_cache_key(mut self, key: impl Into<String>) -> Self {
        self.cache_key = Some(key.into());
        self.encoder = self.new_encoder();
        self
    }

    /// Streams replies ([`Streaming::On`], `--stream`): the text is told as it arrives
    /// ([`ModelClient::complete_streamed`]) and the reply assembled is the one the
    /// non-streaming path returns. Off (the default) sends today's bytes.
    pub fn streaming(mut self, stream: Streaming) -> Self {
        self.stream = stream;
        self.encoder = self.new_encoder();
        self
    }

    /// Changes how long a streamed reply may send nothing (default
    /// [`DEFAULT_STREAM_IDLE`], at most the request timeout).
    pub fn with_stream_idle(mut self, idle: Duration) -> Self {
        self.stream_idle = idle;
        self
    }

    fn new_encoder(&self) -> RequestEncoder {
        RequestEncoder::new(self.model.clone(), self.sampling, self.cache_key.clone())
            .streaming(self.stream)
    }

    /// Changes the reply size bound (default [`crate::http::DEFAULT_MAX_REPLY_BYTES`]).
    pub fn with_max_reply_bytes(mut self, limit: usize) -> Self {
        self.http = self.http.with_max_reply_bytes(limit);
        self
    }

    /// The model every request names.
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
        messages: request
            .messages
            .iter()
            .map(|m| to_chat_message(m))
            .collect(),
        temperature: sampling.temperature,
        ..CreateChatCompletionRequest::default()
    };
    // `max_tokens` rather than `max_completion_tokens`: it is the field every
    // OpenAI-compatible server knows (llama.cpp's and llama-cpp-python's ignore the newer one).
    #[allow(deprecated)]
    {
        // A per-request limit (chapter 11's retry after a cut-off reply) wins.
        body.max_tokens = request.max_tokens.or(sampling.max_tokens);
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

impl OpenAiModel {
    fn encode(&self, request: &ModelRequest) -> Result<bytes::Bytes, ModelError> {
        tracing::debug!(model = %self.model, messages = request.messages.len(), stream = ?self.stream, "chat completion");
        self.encoder
            .encode(request)
            .map_err(|err| ModelError::InvalidResponse {
                message: err.to_string(),
            })
    }

    /// One streamed exchange, bounded as a whole by the request timeout.
    async fn streamed(
        &self,
        request: &ModelRequest,
        deltas: &dyn EventSink,
    ) -> Result<ModelReply, ModelError> {
        let bytes = self.encode(request)?;
        let reply = match tokio::time::timeout(self.timeout, self.read_stream(bytes, deltas)).await
        {
            Ok(reply) => reply?,
            Err(_) => {
                return Err(map_http_error(
                    HttpError::Timeout {
                        after: self.timeout,
                    },
                    &self.key,
                ));
            }
        };
        log_usage(&reply);
        Ok(reply)
    }

    async fn read_stream(
        &self,
        bytes: bytes::Bytes,
        deltas: &dyn EventSink,
    ) -> Result<ModelReply, ModelError> {
        let http = |err| map_http_error(err, &self.key);
        let mut body = match self.http.open(bytes).await.map_err(http)? {
            Opened::Failed(raw) => return Err(map_status(&raw, &self.key)),
            Opened::Stream(body) => body,
        };
        let mut parser = SseParser::default();
        let mut assembler = Assembler::default();
        loop {
            let Some(chunk) = body.next_chunk(self.stream_idle).await.map_err(http)? else {
                return Err(map_stream_error(StreamError::Cut, &self.key));
            };
            let end = parser.feed(&chunk, |data| {
                if data == DONE {
                    return Some(Ok(()));
                }
                assembler.apply(data, deltas).err().map(Err)
            });
            match end {
                None => {}
                Some(Ok(())) => break,
                Some(Err(err)) => return Err(map_stream_error(err, &self.key)),
            }
        }
        // Dropping the body closes the connection: whatever follows `[DONE]` is not read.
        drop(body);
        assembler
            .finish()
            .map_err(|err| map_stream_error(err, &self.key))
    }
}

fn log_usage(reply: &ModelReply) {
    if let Some(usage) = &reply.usage {
        tracing::debug!(
            prompt = usage.prompt_tokens,
            completion = usage.completion_tokens,
            cached = usage.cached_prompt_tokens,
            "usage"
        );
    }
}

#[async_trait]
impl ModelClient for OpenAiModel {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        if self.stream == Streaming::On {
            return self.streamed(request, &NoEvents).await;
        }
        let bytes = self.encode(request)?;
        let raw = self
            .http
            .post_json(bytes)
            .await
            .map_err(|err| map_http_error(err, &self.key))?;
        if !(200..300).contains(&raw.status) {
            return Err(map_status(&raw, &self.key));
        }
        let response: CreateChatCompletionResponse = serde_json::from_slice(&raw.body)
            .map_err(|err| crate::errors::unparsable(&err, &raw.body, &self.key))?;
        let reply = from_chat_response(response)?;
        log_usage(&reply);
        Ok(reply)
    }

    async fn complete_streamed(
        &self,
        request: &ModelRequest,
        deltas: &dyn EventSink,
    ) -> Result<ModelReply, ModelError> {
        match self.stream {
            Streaming::On => self.streamed(request, deltas).await,
            Streaming::Off => self.complete(request).await,
        }
    }
}
