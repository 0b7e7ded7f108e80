//! Transient failures: retried with backoff or the server's `Retry-After`, within the attempt
//! limit and the deadline; other 4xx at once.

use std::sync::Arc;
use std::time::Duration;

use agent_core::{ModelClient, ModelError, ModelReply, RetryLimit};
use agent_recovery::{Jitter, RecoveringModel, RetryPolicy};
use agent_test_support::{ScriptStep, ScriptedModel};

use super::{Rig, bodies, hi, no_jitter, openai, server, status, t0, text};

fn secs(values: &[f64]) -> Vec<Duration> {
    values.iter().map(|v| Duration::from_secs_f64(*v)).collect()
}

#[tokio::test]
async fn a_429_then_a_reply_is_retried_once_after_the_base_delay() {
    let server = server(vec![status(429), text("hello", "stop")]).await;
    let rig = Rig::new(openai(&server, "m"), no_jitter());
    let reply = rig.model.complete(&hi()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("hello"));
    assert_eq!(bodies(&server).await.len(), 2);
    assert_eq!(rig.clock.sleeps(), secs(&[0.5]));
    assert_eq!(rig.lines(), ["retrying in 0.5 s (429, attempt 2 of 6)"]);
}

#[tokio::test]
async fn every_transient_status_is_retried_until_the_attempt_limit() {
    let server = server([500, 502, 503, 504, 529, 429, 200].map(status).to_vec()).await;
    let rig = Rig::new(openai(&server, "m"), RetryPolicy::default());
    let err = rig.model.complete(&hi()).await.unwrap_err();
    // Six attempts: the seventh answer is never asked for.
    assert_eq!(bodies(&server).await.len(), 6);
    let policy = RetryPolicy::default();
    let mut jitter = Jitter::seeded(7);
    let expected: Vec<Duration> = (1..=5)
        .map(|n| policy.backoff(n, jitter.next_permille()))
        .collect();
    assert_eq!(rig.clock.sleeps(), expected);
    assert_eq!(
        err,
        ModelError::GaveUp {
            attempts: 6,
            elapsed: expected.iter().sum(),
            limit: RetryLimit::Attempts { max: 6 },
            last: Box::new(ModelError::RateLimited {
                message: "status 429".into(),
                retry_after: None,
            }),
        }
    );
}

#[tokio::test]
async fn retry_after_in_seconds_and_as_an_http_date_are_honoured() {
    // The date is read against the wall clock after the first wait: 13 s after t0 is 10 s on.
    let date = httpdate(t0() + Duration::from_secs(13));
    let server = server(vec![
        status(429).insert_header("retry-after", "3"),
        status(503).insert_header("retry-after", date.as_str()),
        text("ok", "stop"),
    ])
    .await;
    let rig = Rig::new(openai(&server, "m"), RetryPolicy::default());
    rig.model.complete(&hi()).await.unwrap();
    assert_eq!(rig.clock.sleeps(), secs(&[3.0, 10.0]));
    assert_eq!(
        rig.lines(),
        [
            "retrying in 3.0 s (429, attempt 2 of 6)",
            "retrying in 10.0 s (503, attempt 3 of 6)",
        ]
    );
}

fn httpdate(at: std::time::SystemTime) -> String {
    // RFC 9110's preferred format, written out by hand so the test does not trust the parser.
    let secs = at
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert_eq!(secs, 1_735_689_613);
    "Wed, 01 Jan 2025 00:00:13 GMT".to_string()
}

#[tokio::test]
async fn a_retry_after_past_the_deadline_ends_the_run_at_once() {
    let server = server(vec![
        status(429).insert_header("retry-after", "3600"),
        text("never", "stop"),
    ])
    .await;
    let policy = RetryPolicy {
        deadline: Duration::from_secs(60),
        ..RetryPolicy::default()
    };
    let rig = Rig::new(openai(&server, "m"), policy);
    let err = rig.model.complete(&hi()).await.unwrap_err();
    assert_eq!(bodies(&server).await.len(), 1);
    assert_eq!(rig.clock.sleeps(), Vec::<Duration>::new());
    assert_eq!(
        err.to_string(),
        "gave up after 1 attempt in 0.0 s, at the 60 s deadline; the last one failed: \
         rate limited by the model server (HTTP 429): status 429"
    );
}

#[tokio::test]
async fn the_deadline_ends_a_run_of_backoffs_with_a_typed_error() {
    let server = server(vec![status(500); 6]).await;
    let policy = RetryPolicy {
        deadline: Duration::from_secs(3),
        ..no_jitter()
    };
    let rig = Rig::new(openai(&server, "m"), policy);
    let err = rig.model.complete(&hi()).await.unwrap_err();
    // 0.5 s and 1 s fit in 3 s; the next 2 s would end at 3.5 s.
    assert_eq!(rig.clock.sleeps(), secs(&[0.5, 1.0]));
    assert_eq!(bodies(&server).await.len(), 3);
    assert_eq!(
        err,
        ModelError::GaveUp {
            attempts: 3,
            elapsed: Duration::from_millis(1500),
            limit: RetryLimit::Deadline {
                after: Duration::from_secs(3)
            },
            last: Box::new(ModelError::Server {
                status: 500,
                message: r#"{"error":{"message":"status 500"}}"#.into(),
                retry_after: None,
            }),
        }
    );
}

#[tokio::test]
async fn other_client_errors_fail_at_once_with_the_servers_message() {
    for code in [400, 401, 403, 404, 422] {
        let server = server(vec![status(code), text("never", "stop")]).await;
        let rig = Rig::new(openai(&server, "m"), RetryPolicy::default());
        let err = rig.model.complete(&hi()).await.unwrap_err();
        let message = format!("status {code}");
        let expected = match code {
            401 | 403 => ModelError::Auth {
                status: code,
                message,
            },
            _ => ModelError::Http {
                status: code,
                message,
            },
        };
        assert_eq!(err, expected);
        assert_eq!(bodies(&server).await.len(), 1, "HTTP {code}");
        assert_eq!(rig.lines(), Vec::<String>::new());
    }
}

#[tokio::test]
async fn a_refused_connection_is_retried_like_a_transient_status() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let config = agent_openai::OpenAiConfig {
        base_url: format!("http://{address}/v1"),
        api_key: agent_openai::ApiKey::new("sk-test"),
        model: "m".into(),
        fallback_model: None,
        sampling: agent_openai::Sampling::default(),
        request_timeout: Duration::from_secs(30),
    };
    let primary = Arc::new(agent_openai::OpenAiModel::new(&config).unwrap());
    let policy = RetryPolicy {
        max_attempts: 3,
        ..no_jitter()
    };
    let rig = Rig::new(primary, policy);
    let err = rig.model.complete(&hi()).await.unwrap_err();
    let ModelError::GaveUp {
        attempts,
        limit,
        last,
        ..
    } = err
    else {
        panic!("not a give-up: {err:?}");
    };
    assert_eq!(
        (
            attempts,
            limit,
            matches!(*last, ModelError::Transport { .. })
        ),
        (3, RetryLimit::Attempts { max: 3 }, true)
    );
    assert_eq!(
        rig.lines(),
        [
            "retrying in 0.5 s (connection error or timeout, attempt 2 of 6)",
            "retrying in 1.0 s (connection error or timeout, attempt 3 of 6)",
        ]
        .map(|l| l.replace("of 6", "of 3"))
    );
}

#[tokio::test(start_paused = true)]
async fn the_default_clock_waits_on_tokios_clock() {
    let script = ScriptedModel::new([
        ScriptStep::Fail(ModelError::RateLimited {
            message: "slow down".into(),
            retry_after: Some(agent_core::RetryAfter::Seconds(Duration::from_secs(2))),
        }),
        ScriptStep::Reply(ModelReply::text("done")),
    ]);
    let model = RecoveringModel::new(
        Arc::new(script),
        RetryPolicy::default(),
        Arc::new(agent_core::NoEvents),
    );
    let start = tokio::time::Instant::now();
    let reply = model.complete(&hi()).await.unwrap();
    assert_eq!(
        (reply.content.as_deref(), start.elapsed()),
        (Some("done"), Duration::from_secs(2))
    );
}

/// A server that never answers: only a timeout ends its call.
struct Silent;

#[async_trait::async_trait]
impl ModelClient for Silent {
    async fn complete(
        &self,
        _request: &agent_core::ModelRequest,
    ) -> Result<ModelReply, ModelError> {
        std::future::pending().await
    }
}

#[tokio::test(start_paused = true)]
async fn the_deadline_ends_an_attempt_still_in_flight() {
    // Measured before: a silent server held the run until its --request-timeout, 60 s past a
    // 300 s deadline. The deadline now bounds the attempt itself.
    let policy = RetryPolicy {
        deadline: Duration::from_secs(300),
        ..RetryPolicy::default()
    };
    let model = RecoveringModel::new(Arc::new(Silent), policy, Arc::new(agent_core::NoEvents));
    let start = tokio::time::Instant::now();
    // The outer timeout only keeps a regression from hanging the suite (paused clock: no wait).
    let error = tokio::time::timeout(Duration::from_secs(3600), model.complete(&hi()))
        .await
        .expect("the deadline ends the call")
        .unwrap_err();
    assert_eq!(
        (error, start.elapsed()),
        (
            ModelError::GaveUp {
                attempts: 1,
                elapsed: Duration::from_secs(300),
                limit: RetryLimit::Deadline {
                    after: Duration::from_secs(300)
                },
                last: Box::new(ModelError::Transport {
                    message: "no reply yet when the deadline came".into()
                }),
            },
            Duration::from_secs(300)
        )
    );
}
