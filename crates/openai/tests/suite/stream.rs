//! `--stream`: replies read as server-sent events from a local server that writes them as a
//! network would (byte by byte, cut, stalled, too large), assembled into exactly the reply the
//! JSON path returns.

use std::sync::Arc;
use std::time::Duration;

use agent_core::{
    AgentEvent, Cancellation, CollectingSink, EventSink, Message, ModelClient, ModelError,
    ModelReply, ModelRequest, RetryAfter, ToolCall, Usage,
};
use agent_openai::{ApiKey, OpenAiConfig, OpenAiModel, Sampling, Streaming};

use super::sse_server::{Answer, Reply, SseServer};

fn model(base_url: &str, stream: Streaming) -> OpenAiModel {
    OpenAiModel::new(&OpenAiConfig {
        base_url: base_url.to_string(),
        api_key: ApiKey::new("sk-test-stream"),
        model: "m".into(),
        fallback_model: None,
        sampling: Sampling::default(),
        request_timeout: Duration::from_secs(30),
    })
    .unwrap()
    .streaming(stream)
}

fn hi() -> ModelRequest {
    ModelRequest {
        messages: vec![Message::user("hi").into()],
        ..ModelRequest::default()
    }
}

fn deltas(sink: &CollectingSink) -> Vec<String> {
    sink.events()
        .into_iter()
        .map(|event| match event {
            AgentEvent::TextDelta { text } => text,
            other => panic!("not a delta: {other:?}"),
        })
        .collect()
}

/// Guards against a hang turning into a stuck suite; the tests assert on outcomes only.
async fn within_a_minute<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), future)
        .await
        .expect("the call hung")
}

fn usage() -> Option<Usage> {
    Some(Usage {
        prompt_tokens: 11,
        completion_tokens: 7,
        total_tokens: 18,
        cached_prompt_tokens: Some(4),
    })
}

const STREAM_FIELDS: &str = r#","stream":true,"stream_options":{"include_usage":true}"#;

#[tokio::test]
async fn a_stream_written_byte_by_byte_is_the_reply_the_json_path_returns() {
    let reply = Reply::text("Hello, world");
    let answers = vec![
        Answer::Reply {
            reply: reply.clone(),
            piece: 1,
        },
        Answer::Reply { reply, piece: 1 },
    ];
    let server = SseServer::start(answers).await;
    let sink = CollectingSink::new();
    let streamed = model(&server.base_url, Streaming::On)
        .complete_streamed(&hi(), &sink)
        .await
        .unwrap();
    let whole = model(&server.base_url, Streaming::Off)
        .complete(&hi())
        .await
        .unwrap();
    let expected = ModelReply {
        content: Some("Hello, world".into()),
        tool_calls: Vec::new(),
        usage: usage(),
        finish_reason: Some("stop".into()),
    };
    assert_eq!((&streamed, &whole), (&expected, &expected));
    assert_eq!(deltas(&sink), ["Hel", "lo,", " wo", "rld"]);
    // The streamed request is the other one with the two stream fields, nothing else.
    let plain = r#"{"messages":[{"role":"user","content":"hi"}],"model":"m"}"#;
    assert_eq!(
        server.bodies(),
        [
            format!(
                r#"{{"messages":[{{"role":"user","content":"hi"}}],"model":"m"{STREAM_FIELDS}}}"#
            ),
            plain.to_string()
        ]
    );
}

#[tokio::test]
async fn tool_call_fragments_are_joined_by_index_into_whole_calls() {
    let reply = Reply {
        content: None,
        tool_calls: vec![
            (
                "call_1".into(),
                "read_file".into(),
                r#"{"path":"src/main.rs"}"#.into(),
            ),
            (
                "call_2".into(),
                "bash".into(),
                r#"{"command":"ls -la"}"#.into(),
            ),
        ],
        finish: "tool_calls".into(),
    };
    let server = SseServer::start(vec![
        Answer::Reply {
            reply: reply.clone(),
            piece: 7,
        },
        Answer::Reply { reply, piece: 7 },
    ])
    .await;
    let sink = CollectingSink::new();
    let streamed = model(&server.base_url, Streaming::On)
        .complete_streamed(&hi(), &sink)
        .await
        .unwrap();
    let whole = model(&server.base_url, Streaming::Off)
        .complete(&hi())
        .await
        .unwrap();
    let expected = ModelReply {
        content: None,
        tool_calls: vec![
            ToolCall {
                id: "call_1".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"src/main.rs"}"#.into(),
            },
            ToolCall {
                id: "call_2".into(),
                name: "bash".into(),
                arguments: r#"{"command":"ls -la"}"#.into(),
            },
        ],
        usage: usage(),
        finish_reason: Some("tool_calls".into()),
    };
    assert_eq!((&streamed, &whole), (&expected, &expected));
    assert_eq!(sink.events(), Vec::<AgentEvent>::new());
}

/// The events of `text`'s stream up to (not including) the `n`-th content chunk's end.
fn cut_after_chunks(text: &str, n: usize) -> Vec<u8> {
    let sse = Reply::text(text).sse();
    let mut at = 0;
    // The keepalive, the role chunk, then `n` content chunks: each event ends in "\n\n".
    for _ in 0..n + 2 {
        at += sse[at..].find("\n\n").unwrap() + 2;
    }
    sse.as_bytes()[..at].to_vec()
}

#[tokio::test]
async fn a_stream_cut_before_done_is_a_retryable_transport_error() {
    let server = SseServer::start(vec![Answer::Raw {
        body: cut_after_chunks("Hello", 1),
        piece: 1,
    }])
    .await;
    let sink = CollectingSink::new();
    let err = model(&server.base_url, Streaming::On)
        .complete_streamed(&hi(), &sink)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ModelError::Transport {
            message: "the streamed reply was cut off before its end (no [DONE])".into()
        }
    );
    assert_eq!(deltas(&sink), ["Hel"]);
}

#[tokio::test]
async fn done_ends_the_reply_even_while_the_connection_stays_open() {
    let server = SseServer::start(vec![Answer::Stall {
        body: Reply::text("Hi").sse().into_bytes(),
    }])
    .await;
    let reply = within_a_minute(model(&server.base_url, Streaming::On).complete(&hi()))
        .await
        .unwrap();
    assert_eq!(
        reply,
        ModelReply {
            content: Some("Hi".into()),
            tool_calls: Vec::new(),
            usage: usage(),
            finish_reason: Some("stop".into()),
        }
    );
    // The client let go of the connection once it had `[DONE]`.
    within_a_minute(server.answered(1)).await;
}

#[tokio::test]
async fn a_stream_larger_than_the_reply_limit_is_a_size_error() {
    let long = "x".repeat(3000);
    let server = SseServer::start(vec![Answer::Raw {
        body: Reply::text(&long).sse().into_bytes(),
        piece: 512,
    }])
    .await;
    let err = model(&server.base_url, Streaming::On)
        .with_max_reply_bytes(4096)
        .complete(&hi())
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ModelError::InvalidResponse {
            message: "the reply is larger than the 4096-byte limit".into()
        }
    );
}

#[tokio::test]
async fn a_stalled_stream_fails_at_the_idle_deadline() {
    let server = SseServer::start(vec![Answer::Stall {
        body: cut_after_chunks("Hello", 1),
    }])
    .await;
    let sink = CollectingSink::new();
    let err = within_a_minute(
        model(&server.base_url, Streaming::On)
            .with_stream_idle(Duration::from_millis(200))
            .complete_streamed(&hi(), &sink),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err,
        ModelError::Transport {
            message: "the streamed reply stalled: no data for 0.2 s".into()
        }
    );
    assert_eq!(deltas(&sink), ["Hel"]);
    within_a_minute(server.answered(1)).await;
}

#[tokio::test]
async fn a_stream_that_never_ends_fails_at_the_request_timeout() {
    let server = SseServer::start(vec![Answer::Trickle]).await;
    let model = OpenAiModel::new(&OpenAiConfig {
        base_url: server.base_url.clone(),
        api_key: ApiKey::new("sk-test-stream"),
        model: "m".into(),
        fallback_model: None,
        sampling: Sampling::default(),
        request_timeout: Duration::from_secs(1),
    })
    .unwrap()
    .streaming(Streaming::On)
    .with_stream_idle(Duration::from_secs(30));
    let err = within_a_minute(model.complete(&hi())).await.unwrap_err();
    assert_eq!(
        err,
        ModelError::Transport {
            message: "no complete reply within 1 s (--request-timeout)".into()
        }
    );
}

/// Cancels the turn when the first text arrives, as a Ctrl-C while the answer streams.
struct CancelOnText(Cancellation);

impl EventSink for CancelOnText {
    fn emit(&self, event: &AgentEvent) {
        if let AgentEvent::TextDelta { .. } = event {
            self.0.cancel();
        }
    }
}

#[tokio::test]
async fn cancelling_the_turn_drops_the_stream_and_closes_the_connection() {
    let server = SseServer::start(vec![Answer::Stall {
        body: cut_after_chunks("Hello", 1),
    }])
    .await;
    let model = model(&server.base_url, Streaming::On);
    let cancel = Cancellation::new();
    let sink = CancelOnText(cancel.clone());
    let outcome = within_a_minute(cancel.run(model.complete_streamed(&hi(), &sink))).await;
    assert_eq!(outcome, None);
    // The server sees the connection closed: the body was dropped, not left to stall.
    within_a_minute(server.answered(1)).await;
}

#[tokio::test]
async fn a_failure_status_is_the_same_typed_error_as_without_streaming() {
    let body = r#"{"error":{"message":"slow down","code":"rate_limit_exceeded"}}"#;
    let server = SseServer::start(vec![Answer::Status {
        status: 429,
        body: body.into(),
    }])
    .await;
    let err = model(&server.base_url, Streaming::On)
        .complete(&hi())
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ModelError::RateLimited {
            message: "slow down".into(),
            retry_after: None::<RetryAfter>,
        }
    );
}

/// One session of two rounds (a tool call, its result, the answer), run streamed and not:
/// the replies, and so the history and the second request, are the same bytes.
#[tokio::test]
async fn a_session_sends_the_same_requests_streamed_or_not() {
    let round_1 = Reply {
        content: Some("Let me look.".into()),
        tool_calls: vec![("call_1".into(), "bash".into(), r#"{"command":"ls"}"#.into())],
        finish: "tool_calls".into(),
    };
    let round_2 = Reply::text("There are 3 files: a, b and c.");
    let answers = || {
        vec![
            Answer::Reply {
                reply: round_1.clone(),
                piece: 1,
            },
            Answer::Reply {
                reply: round_2.clone(),
                piece: 1,
            },
        ]
    };
    let mut runs = Vec::new();
    for stream in [Streaming::On, Streaming::Off] {
        let server = SseServer::start(answers()).await;
        let model = model(&server.base_url, stream).prompt_cache_key("session-1");
        let mut history: Vec<Arc<Message>> = vec![
            Message::system("You are terse.").into(),
            Message::user("What is here?").into(),
        ];
        let mut replies = Vec::new();
        for _ in 0..2 {
            let request = ModelRequest {
                messages: history.clone(),
                ..ModelRequest::default()
            };
            let reply = model
                .complete_streamed(&request, &CollectingSink::new())
                .await
                .unwrap();
            history.push(reply.to_message().into());
            for call in &reply.tool_calls {
                history.push(Message::tool_result(&call.id, "a\nb\nc").into());
            }
            replies.push(reply);
        }
        runs.push((replies, server.bodies()));
    }
    let (streamed_replies, streamed_bodies) = &runs[0];
    let (replies, bodies) = &runs[1];
    assert_eq!(streamed_replies, replies);
    // Each streamed body is the other run's with the two stream fields after the model.
    let with_stream: Vec<String> = bodies
        .iter()
        .map(|b| {
            b.replacen(
                r#""model":"m""#,
                &format!(r#""model":"m"{STREAM_FIELDS}"#),
                1,
            )
        })
        .collect();
    assert_eq!(streamed_bodies, &with_stream);
    assert_eq!(bodies.len(), 2);
}
