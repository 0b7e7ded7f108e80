//! Replies cut off at the length limit: a larger limit once, then continuations joined; a
//! cut-off tool call never comes back to be run.

use agent_core::{ModelClient, ModelError};
use agent_recovery::{CONTINUE_PROMPT, RetryPolicy};
use serde_json::json;

use super::{Rig, bodies, completion, hi, openai, server, text};
use wiremock::ResponseTemplate;

/// The `max_tokens` each request the server received asked for (`None`: not sent).
async fn limits(server: &wiremock::MockServer) -> Vec<Option<serde_json::Value>> {
    bodies(server)
        .await
        .iter()
        .map(|b| b.get("max_tokens").cloned())
        .collect()
}

#[tokio::test]
async fn a_cut_off_reply_is_asked_again_once_with_a_larger_limit() {
    let server = server(vec![text("Hel", "length"), text("Hello world", "stop")]).await;
    let rig = Rig::new(openai(&server, "m"), RetryPolicy::default());
    let reply = rig.model.complete(&hi()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("Hello world"));
    assert_eq!(limits(&server).await, [None, Some(json!(8192))]);
    assert_eq!(
        rig.lines(),
        ["reply cut off at the length limit: retrying with max_tokens 8192"]
    );
}

#[tokio::test]
async fn with_a_configured_limit_the_retry_doubles_it() {
    // `--max-tokens 256` cut the reply: the retry asks for 512, not the 8192 meant for a reply
    // cut by a server default nobody knows (a small local model would ramble for minutes).
    let server = server(vec![text("Hel", "length"), text("Hello world", "stop")]).await;
    let mut rig = Rig::new(openai(&server, "m"), RetryPolicy::default());
    rig.model = rig.model.configured_max_tokens(Some(256));
    let reply = rig.model.complete(&hi()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("Hello world"));
    assert_eq!(limits(&server).await, [None, Some(json!(512))]);
    assert_eq!(
        rig.lines(),
        ["reply cut off at the length limit: retrying with max_tokens 512"]
    );
}

#[tokio::test]
async fn a_reply_still_cut_off_is_continued_and_the_parts_joined() {
    let server = server(vec![
        text("The quick", "length"),
        text("The quick brown", "length"),
        text(" fox jumps", "length"),
        text(" over the dog.", "stop"),
    ])
    .await;
    let rig = Rig::new(openai(&server, "m"), RetryPolicy::default());
    let reply = rig.model.complete(&hi()).await.unwrap();
    assert_eq!(
        (reply.content.as_deref(), reply.finish_reason.as_deref()),
        (
            Some("The quick brown fox jumps over the dog."),
            Some("stop")
        )
    );
    let bodies = bodies(&server).await;
    assert_eq!(
        bodies[3],
        json!({
            "model": "m",
            "max_tokens": 8192,
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "The quick brown fox jumps"},
                {"role": "user", "content": CONTINUE_PROMPT},
            ],
        })
    );
    assert_eq!(
        rig.lines(),
        [
            "reply cut off at the length limit: retrying with max_tokens 8192",
            "continuing the cut-off reply (part 2 of 4)",
            "continuing the cut-off reply (part 3 of 4)",
        ]
    );
}

fn tool_call(id: &str, arguments: &str) -> serde_json::Value {
    json!({"id": id, "type": "function", "function": {"name": "bash", "arguments": arguments}})
}

#[tokio::test]
async fn a_cut_off_tool_call_is_never_returned_to_be_run() {
    let cut = json!({"role": "assistant", "content": null,
        "tool_calls": [tool_call("call_1", r#"{"command": "rm -rf bu"#)]});
    let server = server(vec![
        completion(cut.clone(), "length"),
        completion(cut, "length"),
    ])
    .await;
    let rig = Rig::new(openai(&server, "m"), RetryPolicy::default());
    let err = rig.model.complete(&hi()).await.unwrap_err();
    assert_eq!(
        err,
        ModelError::TruncatedToolCall {
            calls: vec!["bash (call_1)".into()]
        }
    );
    assert_eq!(
        rig.lines(),
        [
            "reply cut off at the length limit: retrying with max_tokens 8192",
            "dropped the cut-off tool call bash (call_1): its arguments are incomplete, it was not run",
        ]
    );
}

#[tokio::test]
async fn the_complete_calls_of_a_cut_off_reply_are_kept() {
    let calls = json!({"role": "assistant", "content": null, "tool_calls": [
        tool_call("call_1", r#"{"command": "ls"}"#),
        tool_call("call_2", r#"{"command": "rm -rf bu"#),
    ]});
    let server = server(vec![
        completion(calls.clone(), "length"),
        completion(calls, "length"),
    ])
    .await;
    let rig = Rig::new(openai(&server, "m"), RetryPolicy::default());
    let reply = rig.model.complete(&hi()).await.unwrap();
    let ids: Vec<&str> = reply.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_1"]);
}

#[tokio::test]
async fn the_follow_up_requests_share_the_first_requests_deadline() {
    // 4 s were spent retrying the first request; the larger-limit retry's own 503 would wait 4 s
    // more, past the 6 s deadline of the whole call. Before, each follow-up got a fresh deadline.
    let server = server(vec![
        super::status(503),
        text("Hel", "length"),
        super::status(503),
        text("Hello world", "stop"),
    ])
    .await;
    let policy = RetryPolicy {
        base: std::time::Duration::from_secs(4),
        deadline: std::time::Duration::from_secs(6),
        ..super::no_jitter()
    };
    let rig = Rig::new(openai(&server, "m"), policy);
    let error = rig.model.complete(&hi()).await.unwrap_err();
    assert!(
        matches!(
            error,
            ModelError::GaveUp {
                limit: agent_core::RetryLimit::Deadline { .. },
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(bodies(&server).await.len(), 3);
}

#[tokio::test]
async fn a_servers_usage_never_raises_the_limit_past_the_ceiling() {
    // The server says it produced 3e9 tokens: twice that must not be asked for.
    let cut = ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hel"}, "finish_reason": "length"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 3_000_000_000_u64, "total_tokens": 3_000_000_001_u64}
    }));
    let server = server(vec![cut, text("Hello world", "stop")]).await;
    let rig = Rig::new(openai(&server, "m"), RetryPolicy::default());
    rig.model.complete(&hi()).await.unwrap();
    assert_eq!(
        limits(&server).await,
        [None, Some(json!(agent_recovery::MAX_TOKENS_CEILING))]
    );
    // A larger limit the user set is theirs to keep.
    let server = super::server(vec![text("Hel", "length"), text("Hello world", "stop")]).await;
    let mut rig = Rig::new(openai(&server, "m"), RetryPolicy::default());
    rig.model = rig.model.configured_max_tokens(Some(100_000));
    rig.model.complete(&hi()).await.unwrap();
    assert_eq!(limits(&server).await, [None, Some(json!(100_000))]);
}
