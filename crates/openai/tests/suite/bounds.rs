//! One attempt per call, one deadline per call, a bounded reply, the key only where configured.

use std::time::Duration;

use agent_core::{Message, ModelClient, ModelError, ModelRequest, RetryAfter};
use agent_openai::{ApiKey, OpenAiConfig, OpenAiModel, Sampling};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const KEY: &str = "sk-test-bounds-never-printed";

fn model_at(base_url: String, timeout: Duration) -> OpenAiModel {
    OpenAiModel::new(&OpenAiConfig {
        base_url,
        api_key: ApiKey::new(KEY),
        model: "m".into(),
        fallback_model: None,
        sampling: Sampling::default(),
        request_timeout: timeout,
    })
    .unwrap()
}

fn hi() -> ModelRequest {
    ModelRequest {
        messages: vec![Message::user("hi").into()],
        ..ModelRequest::default()
    }
}

/// Guards against the old behaviour (sleeping out `Retry-After`) hanging the suite; the test
/// asserts on the outcome, this only turns a hang into a failure.
async fn within_a_minute<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), future)
        .await
        .expect("the call waited instead of failing")
}

#[tokio::test]
async fn a_429_with_retry_after_fails_at_once_after_one_request() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "3600")
                .set_body_json(serde_json::json!({"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}})),
        )
        .mount(&server)
        .await;
    let model = model_at(format!("{}/v1", server.uri()), Duration::from_secs(30));
    let err = within_a_minute(model.complete(&hi())).await.unwrap_err();
    assert_eq!(
        err,
        ModelError::RateLimited {
            message: "Rate limit reached".into(),
            retry_after: Some(RetryAfter::Seconds(Duration::from_secs(3600))),
        }
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_500_is_not_retried_either() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_string("overloaded"))
        .mount(&server)
        .await;
    let model = model_at(format!("{}/v1", server.uri()), Duration::from_secs(30));
    let err = within_a_minute(model.complete(&hi())).await.unwrap_err();
    assert_eq!(
        err,
        ModelError::Server {
            status: 503,
            message: "overloaded".into(),
            retry_after: None,
        }
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn the_request_timeout_bounds_the_whole_call() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(5)))
        .mount(&server)
        .await;
    let model = model_at(format!("{}/v1", server.uri()), Duration::from_secs(1));
    let err = model.complete(&hi()).await.unwrap_err();
    assert_eq!(
        err,
        ModelError::Transport {
            message: "no complete reply within 1 s (--request-timeout)".into()
        }
    );
}

#[tokio::test]
async fn a_reply_over_8_mib_is_a_size_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(vec![b' '; 9 * 1024 * 1024]))
        .mount(&server)
        .await;
    let model = model_at(format!("{}/v1", server.uri()), Duration::from_secs(30));
    let err = model.complete(&hi()).await.unwrap_err();
    assert_eq!(
        err,
        ModelError::InvalidResponse {
            message: "the reply is larger than the 8388608-byte limit".into()
        }
    );
}

/// A reply without a declared length (chunked) is cut while it is read, not after.
#[tokio::test]
async fn a_chunked_reply_is_cut_at_the_limit() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = vec![0u8; 64 * 1024];
        let _ = socket.read(&mut request).await.unwrap();
        socket
            .write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            .await
            .unwrap();
        let chunk = vec![b' '; 1024];
        // 64 KiB in 1 KiB chunks; the client gives up after 4 KiB and may close the socket.
        for _ in 0..64 {
            let head = format!("{:x}\r\n", chunk.len());
            if socket.write_all(head.as_bytes()).await.is_err()
                || socket.write_all(&chunk).await.is_err()
                || socket.write_all(b"\r\n").await.is_err()
            {
                return;
            }
        }
        let _ = socket.write_all(b"0\r\n\r\n").await;
    });
    let model = model_at(
        format!("http://127.0.0.1:{port}/v1"),
        Duration::from_secs(30),
    )
    .with_max_reply_bytes(4096);
    let err = model.complete(&hi()).await.unwrap_err();
    assert_eq!(
        err,
        ModelError::InvalidResponse {
            message: "the reply is larger than the 4096-byte limit".into()
        }
    );
    server.abort();
}

/// The key is sent only to the configured server: a redirect is an error, not followed.
#[tokio::test]
async fn a_redirect_is_not_followed_with_the_key() {
    let elsewhere = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&elsewhere)
        .await;
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(307).insert_header(
            "location",
            format!("{}/v1/chat/completions", elsewhere.uri()),
        ))
        .mount(&server)
        .await;
    let model = model_at(format!("{}/v1", server.uri()), Duration::from_secs(30));
    let err = model.complete(&hi()).await.unwrap_err();
    assert_eq!(
        err,
        ModelError::Http {
            status: 307,
            message: String::new()
        }
    );
    assert_eq!(elsewhere.received_requests().await.unwrap().len(), 0);
}

/// Answers with the request's own `Authorization` header in the body, as a hostile or
/// debugging server might.
struct Echo(u16);

impl wiremock::Respond for Echo {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let auth = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let body = match self.0 {
            200 => format!("not json, but {auth}"),
            404 => format!("no route for {auth}"),
            _ => {
                serde_json::json!({"error": {"message": format!("you sent {auth}"), "code": null}})
                    .to_string()
            }
        };
        ResponseTemplate::new(self.0).set_body_string(body)
    }
}

#[tokio::test]
async fn a_server_echoing_the_key_never_gets_it_into_an_error() {
    let expected = |status: u16| match status {
        400 => ModelError::Http {
            status,
            message: "you sent Bearer [redacted]".into(),
        },
        401 => ModelError::Auth {
            status,
            message: "you sent Bearer [redacted]".into(),
        },
        404 => ModelError::Http {
            status,
            message: "no route for Bearer [redacted]".into(),
        },
        500 => ModelError::Server {
            status,
            message: r#"{"error":{"code":null,"message":"you sent Bearer [redacted]"}}"#.into(),
            retry_after: None,
        },
        _ => ModelError::InvalidResponse {
            message: "not a chat completion (expected ident at line 1 column 2); the body was: \
                      not json, but Bearer [redacted]"
                .into(),
        },
    };
    for status in [400, 401, 404, 500, 200] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(Echo(status))
            .mount(&server)
            .await;
        let model = model_at(format!("{}/v1", server.uri()), Duration::from_secs(30));
        let err = model.complete(&hi()).await.unwrap_err();
        assert_eq!(err, expected(status));
        assert!(!format!("{err} {err:?}").contains(KEY));
    }
}

#[tokio::test]
async fn an_https_server_that_does_not_speak_tls_is_a_transport_error() {
    // Proves the TLS stack is there (rustls with the `ring` provider, installed by the client):
    // without a provider the client could not even be built.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        if let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = [0u8; 512];
            let _ = socket.read(&mut buf).await;
            let _ = socket
                .write_all(b"HTTP/1.1 200 OK\r\n\r\nplain text\n")
                .await;
        }
    });
    let model = model_at(
        format!("https://127.0.0.1:{port}/v1"),
        Duration::from_secs(10),
    );
    let err = model.complete(&hi()).await.unwrap_err();
    assert!(matches!(err, ModelError::Transport { .. }), "{err:?}");
}
