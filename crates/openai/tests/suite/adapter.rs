use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::{
    AgentRunner, FixedPrompt, Message, ModelClient, ModelError, ModelRequest, PreparedCall,
    ToolEffect, ToolFailure, ToolHandler, ToolRegistry, ToolSpec,
};
use agent_openai::{ApiKey, OpenAiConfig, OpenAiModel, Sampling};
use async_trait::async_trait;
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const KEY: &str = "sk-test-key-never-printed";

fn config(server: &MockServer) -> OpenAiConfig {
    OpenAiConfig {
        base_url: format!("{}/v1", server.uri()),
        api_key: ApiKey::new(KEY),
        model: "test-model".into(),
        fallback_model: None,
        sampling: Sampling {
            temperature: Some(0.0),
            max_tokens: Some(64),
        },
        request_timeout: std::time::Duration::from_secs(5),
    }
}

fn completion(message: Value, usage: Value) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": usage
    })
}

/// Answers with the given bodies in order (the last one repeats).
struct Sequence {
    bodies: Vec<Value>,
    next: AtomicUsize,
}

impl Respond for Sequence {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let i = self
            .next
            .fetch_add(1, Ordering::SeqCst)
            .min(self.bodies.len() - 1);
        ResponseTemplate::new(200).set_body_json(self.bodies[i].clone())
    }
}

struct Upper;

#[async_trait]
impl ToolHandler for Upper {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        Ok(call.arguments["text"]
            .as_str()
            .unwrap_or_default()
            .to_uppercase())
    }
}

fn upper_spec() -> ToolSpec {
    ToolSpec::new(
        "upper",
        "Upper-case the text.",
        ToolEffect::Read,
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    )
}

#[tokio::test]
async fn a_full_tool_round_trip_through_real_http() {
    let server = MockServer::start().await;
    let tool_call = json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "upper", "arguments": "{\"text\":\"hi\"}"}}]
    });
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(Sequence {
            bodies: vec![
                completion(tool_call, json!({"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55})),
                completion(
                    json!({"role": "assistant", "content": "It is HI."}),
                    json!({"prompt_tokens": 60, "completion_tokens": 4, "total_tokens": 64, "prompt_tokens_details": {"cached_tokens": 48}}),
                ),
            ],
            next: AtomicUsize::new(0),
        })
        .expect(2)
        .mount(&server)
        .await;

    let tools = Arc::new(
        ToolRegistry::builder()
            .tool(upper_spec(), Arc::new(Upper))
            .build()
            .unwrap(),
    );
    let model = Arc::new(OpenAiModel::new(&config(&server)).unwrap());
    let runner =
        AgentRunner::builder(model, tools, Arc::new(FixedPrompt("Be brief.".into()))).build();
    let mut history = Vec::new();
    let outcome = runner.run_turn(&mut history, "shout hi").await.unwrap();
    assert_eq!(outcome.final_text, "It is HI.");

    let bodies: Vec<Value> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    let tools_sent = json!([{
        "type": "function",
        "function": {
            "name": "upper",
            "description": "Upper-case the text.",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        }
    }]);
    assert_eq!(
        bodies[0],
        json!({
            "model": "test-model",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "shout hi"}
            ],
            "temperature": 0.0,
            "max_tokens": 64,
            "tools": tools_sent,
            "tool_choice": "auto"
        })
    );
    // The assistant's tool-call message goes back with "" content, never null.
    assert_eq!(
        bodies[1]["messages"],
        json!([
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "shout hi"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "upper", "arguments": "{\"text\":\"hi\"}"}}]},
            {"role": "tool", "content": "HI", "tool_call_id": "call_1"}
        ])
    );
}

#[tokio::test]
async fn usage_and_cached_tokens_are_kept_and_no_tools_means_no_tool_fields() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(completion(
            json!({"role": "assistant", "content": "ok"}),
            json!({"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11, "prompt_tokens_details": {"cached_tokens": 8}}),
        )))
        .mount(&server)
        .await;
    let model = OpenAiModel::new(&config(&server)).unwrap();
    let reply = model.complete(&hi()).await.unwrap();
    assert_eq!(
        reply.usage,
        Some(agent_core::Usage {
            prompt_tokens: 10,
            completion_tokens: 1,
            total_tokens: 11,
            cached_prompt_tokens: Some(8)
        })
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    let body: Value =
        serde_json::from_slice(&server.received_requests().await.unwrap()[0].body).unwrap();
    assert_eq!(body.get("tools"), None);
    assert_eq!(body.get("tool_choice"), None);
}

async fn error_for(status: u16, body: Value) -> ModelError {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(status).set_body_json(body))
        .mount(&server)
        .await;
    let model = OpenAiModel::new(&config(&server)).unwrap();
    model.complete(&hi()).await.unwrap_err()
}

fn api_error(message: &str, code: Option<&str>) -> Value {
    json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": code}})
}

#[tokio::test]
async fn http_errors_map_to_typed_errors_without_the_key() {
    let cases = [
        (
            401,
            api_error(
                &format!("Incorrect API key provided: {KEY}"),
                Some("invalid_api_key"),
            ),
            ModelError::Auth {
                status: 401,
                message: "Incorrect API key provided: [redacted]".into(),
            },
        ),
        (
            429,
            api_error("Rate limit reached", Some("rate_limit_exceeded")),
            ModelError::RateLimited {
                message: "Rate limit reached".into(),
                retry_after: None,
            },
        ),
        (
            500,
            json!({"error": "boom"}),
            ModelError::Server {
                status: 500,
                message: r#"{"error":"boom"}"#.into(),
                retry_after: None,
            },
        ),
        (
            400,
            api_error(
                "This model's maximum context length is 8192 tokens",
                Some("context_length_exceeded"),
            ),
            ModelError::PromptTooLong {
                message: "This model's maximum context length is 8192 tokens".into(),
            },
        ),
        (
            422,
            api_error("bad message", None),
            ModelError::Http {
                status: 422,
                message: "bad message".into(),
            },
        ),
    ];
    for (status, body, expected) in cases {
        let err = error_for(status, body).await;
        assert_eq!(err, expected);
        let expected_status = if status == 400 { None } else { Some(status) };
        assert_eq!(err.status(), expected_status);
        assert!(!err.to_string().contains(KEY), "{err}");
        assert!(!format!("{err:?}").contains(KEY), "{err:?}");
    }
}

#[tokio::test]
async fn an_unreachable_server_is_a_transport_error() {
    // Bind and drop a listener so the port is (very likely) closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let model = OpenAiModel::new(&OpenAiConfig {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        api_key: ApiKey::new(KEY),
        model: "m".into(),
        fallback_model: None,
        sampling: Sampling::default(),
        request_timeout: std::time::Duration::from_secs(5),
    })
    .unwrap();
    let err = model.complete(&hi()).await.unwrap_err();
    assert!(matches!(err, ModelError::Transport { .. }), "{err:?}");
    assert!(!err.to_string().contains(KEY));
}

#[tokio::test]
async fn a_server_that_never_answers_is_a_timeout_not_a_hang() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(std::time::Duration::from_secs(30)))
        .mount(&server)
        .await;
    let mut cfg = config(&server);
    cfg.request_timeout = std::time::Duration::from_millis(200);
    let model = OpenAiModel::new(&cfg).unwrap();
    let err = model.complete(&hi()).await.unwrap_err();
    assert!(matches!(err, ModelError::Transport { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("could not reach the model server: "),
        "{err}"
    );
}

/// A one-message request with no tools.
fn hi() -> ModelRequest {
    ModelRequest {
        messages: vec![Message::user("hi").into()],
        ..ModelRequest::default()
    }
}

fn ok_reply(usage: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(completion(
        json!({"role": "assistant", "content": "ok"}),
        usage,
    ))
}

#[tokio::test]
async fn the_prompt_cache_key_goes_with_every_request_once_set() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ok_reply(
            json!({"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}),
        ))
        .mount(&server)
        .await;
    let keyed = OpenAiModel::new(&config(&server))
        .unwrap()
        .prompt_cache_key("session-1");
    keyed.complete(&hi()).await.unwrap();
    keyed.complete(&hi()).await.unwrap();
    OpenAiModel::new(&config(&server))
        .unwrap()
        .complete(&hi())
        .await
        .unwrap();
    let keys: Vec<Option<Value>> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| {
            serde_json::from_slice::<Value>(&r.body)
                .unwrap()
                .get("prompt_cache_key")
                .cloned()
        })
        .collect();
    assert_eq!(
        keys,
        vec![Some(json!("session-1")), Some(json!("session-1")), None]
    );
}

#[tokio::test]
async fn a_server_that_reports_no_cached_tokens_leaves_them_unknown() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ok_reply(
            json!({"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}),
        ))
        .mount(&server)
        .await;
    let reply = OpenAiModel::new(&config(&server))
        .unwrap()
        .complete(&hi())
        .await
        .unwrap();
    assert_eq!(
        reply.usage,
        Some(agent_core::Usage {
            prompt_tokens: 10,
            completion_tokens: 1,
            total_tokens: 11,
            cached_prompt_tokens: None
        })
    );
}
