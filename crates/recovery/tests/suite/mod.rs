//! Shared pieces: a mock server answering a fixed sequence, the real OpenAI adapter pointed at
//! it, and a recovering model on a manual clock (a real socket rules out tokio's paused clock:
//! it would fire the request timeout while the reply is read).

mod fallback;
mod policy;
mod retry;
mod stream;
mod truncation;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use agent_core::{AgentEvent, CollectingSink, Message, ModelClient, ModelRequest, RecoveryAction};
use agent_openai::{ApiKey, OpenAiConfig, OpenAiModel, Sampling};
use agent_recovery::{Jitter, RecoveringModel, RetryPolicy};
use agent_workspace::{ManualClock, Sleeping};
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Answers each request with the next template; past the end, a 418 nobody retries.
struct Sequence(Mutex<VecDeque<ResponseTemplate>>);

impl Respond for Sequence {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        self.0
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| ResponseTemplate::new(418).set_body_string("script exhausted"))
    }
}

pub async fn server(answers: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Sequence(Mutex::new(answers.into())))
        .mount(&server)
        .await;
    server
}

/// The request bodies the server received, in order.
pub async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

pub fn openai(server: &MockServer, model: &str) -> Arc<dyn ModelClient> {
    let config = OpenAiConfig {
        base_url: format!("{}/v1", server.uri()),
        api_key: ApiKey::new("sk-test"),
        model: model.into(),
        fallback_model: None,
        sampling: Sampling::default(),
        request_timeout: Duration::from_secs(30),
    };
    Arc::new(OpenAiModel::new(&config).unwrap())
}

/// 2025-01-01T00:00:00Z: the manual clock's wall time at its start.
pub fn t0() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_735_689_600)
}

pub struct Rig {
    pub model: RecoveringModel,
    pub clock: Arc<ManualClock>,
    pub events: Arc<CollectingSink>,
}

impl Rig {
    pub fn new(primary: Arc<dyn ModelClient>, policy: RetryPolicy) -> Self {
        let clock = Arc::new(ManualClock::with_sleeping(t0(), Sleeping::Jumps));
        let events = Arc::new(CollectingSink::new());
        let model = RecoveringModel::new(primary, policy, events.clone())
            .clock(clock.clone())
            .jitter(Jitter::seeded(7));
        Self {
            model,
            clock,
            events,
        }
    }

    /// The recovery actions told so far, as the lines the CLI prints.
    pub fn lines(&self) -> Vec<String> {
        self.actions().iter().map(ToString::to_string).collect()
    }

    pub fn actions(&self) -> Vec<RecoveryAction> {
        self.events
            .events()
            .into_iter()
            .filter_map(|e| match e {
                AgentEvent::Recovery(action) => Some(action),
                _ => None,
            })
            .collect()
    }
}

/// The policy without jitter, so waits are the plain backoff.
pub fn no_jitter() -> RetryPolicy {
    RetryPolicy {
        jitter_percent: 0,
        ..RetryPolicy::default()
    }
}

pub fn hi() -> ModelRequest {
    ModelRequest {
        messages: vec![Arc::new(Message::user("hi"))],
        ..ModelRequest::default()
    }
}

pub fn completion(message: Value, finish_reason: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]
    }))
}

pub fn text(content: &str, finish_reason: &str) -> ResponseTemplate {
    completion(
        json!({"role": "assistant", "content": content}),
        finish_reason,
    )
}

pub fn status(code: u16) -> ResponseTemplate {
    ResponseTemplate::new(code)
        .set_body_json(json!({"error": {"message": format!("status {code}")}}))
}
