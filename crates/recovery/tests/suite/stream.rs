//! Streamed replies (`--stream`) under recovery: a stream cut mid-way is retried, and every
//! attempt's text reaches the watcher after the event that says a new attempt starts, which
//! is how the CLI avoids printing it twice.

use std::sync::Arc;
use std::time::Duration;

use agent_core::{AgentEvent, ModelClient, ModelReply, RecoveryAction, RetryCause, Usage};
use agent_openai::{ApiKey, OpenAiConfig, OpenAiModel, Sampling, Streaming};

#[path = "../../../openai/tests/suite/sse_server.rs"]
mod sse_server;

use sse_server::{Answer, Reply, SseServer};

use super::{Rig, hi, no_jitter};

fn streaming(server: &SseServer) -> Arc<dyn ModelClient> {
    let config = OpenAiConfig {
        base_url: server.base_url.clone(),
        api_key: ApiKey::new("sk-test"),
        model: "m".into(),
        fallback_model: None,
        sampling: Sampling::default(),
        request_timeout: Duration::from_secs(30),
    };
    Arc::new(OpenAiModel::new(&config).unwrap().streaming(Streaming::On))
}

fn delta(text: &str) -> AgentEvent {
    AgentEvent::TextDelta { text: text.into() }
}

fn usage() -> Option<Usage> {
    Some(Usage {
        prompt_tokens: 11,
        completion_tokens: 7,
        total_tokens: 18,
        cached_prompt_tokens: Some(4),
    })
}

#[tokio::test]
async fn a_cut_stream_is_retried_and_the_retry_streams_after_the_notice() {
    let full = Reply::text("Hello");
    let sse = full.sse();
    // The keepalive, the role chunk and the first piece of text, then the connection drops.
    let cut = sse.split_inclusive("\n\n").take(3).collect::<String>();
    let server = SseServer::start(vec![
        Answer::Raw {
            body: cut.into_bytes(),
            piece: 1,
        },
        Answer::Reply {
            reply: full,
            piece: 1,
        },
    ])
    .await;
    let rig = Rig::new(streaming(&server), no_jitter());
    let reply = rig
        .model
        .complete_streamed(&hi(), rig.events.as_ref())
        .await
        .unwrap();
    assert_eq!(
        reply,
        ModelReply {
            content: Some("Hello".into()),
            tool_calls: Vec::new(),
            usage: usage(),
            finish_reason: Some("stop".into()),
        }
    );
    assert_eq!(
        rig.events.events(),
        [
            delta("Hel"),
            AgentEvent::Recovery(RecoveryAction::Retrying {
                wait: Duration::from_millis(500),
                cause: RetryCause::Transport,
                attempt: 2,
                max_attempts: 6,
            }),
            delta("Hel"),
            delta("lo"),
        ]
    );
    assert_eq!(server.bodies().len(), 2);
}

#[tokio::test]
async fn a_streamed_reply_cut_at_the_length_limit_is_asked_again_like_a_whole_one() {
    let short = Reply {
        finish: "length".into(),
        ..Reply::text("Hel")
    };
    let server = SseServer::start(vec![
        Answer::Reply {
            reply: short,
            piece: 5,
        },
        Answer::Reply {
            reply: Reply::text("Hello"),
            piece: 5,
        },
    ])
    .await;
    let rig = Rig::new(streaming(&server), no_jitter());
    let reply = rig
        .model
        .complete_streamed(&hi(), rig.events.as_ref())
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some("Hello"));
    assert_eq!(
        rig.events.events(),
        [
            delta("Hel"),
            AgentEvent::Recovery(RecoveryAction::LargerLimit { max_tokens: 8192 }),
            delta("Hel"),
            delta("lo"),
        ]
    );
}
