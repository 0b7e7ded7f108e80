//! The encoder writes exactly the bytes serde writes for `to_chat_request`, on a first request
//! and on every later one that reuses the previous request's bytes.

use std::sync::Arc;

use agent_core::{Message, ModelRequest, ToolCall, ToolEffect, ToolSpec};
use agent_openai::{RequestEncoder, Sampling, to_chat_request};
use proptest::prelude::*;
use serde_json::json;

const MODEL: &str = "test-model";

fn sampling() -> Sampling {
    Sampling {
        temperature: Some(0.5),
        max_tokens: Some(64),
    }
}

/// What the adapter sent before the encoder: the request converted and serde-encoded whole.
fn reference(request: &ModelRequest, cache_key: Option<&str>) -> String {
    let mut body = to_chat_request(MODEL, sampling(), request);
    body.prompt_cache_key = cache_key.map(str::to_string);
    serde_json::to_string(&body).unwrap()
}

fn encoded(encoder: &RequestEncoder, request: &ModelRequest) -> String {
    String::from_utf8(encoder.encode(request).unwrap().to_vec()).unwrap()
}

fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec::new(
            "read_file",
            "Reads a file.\nUse \"path\".",
            ToolEffect::Read,
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        ),
        ToolSpec::new(
            "bash",
            "Runs a command.",
            ToolEffect::Execute,
            json!({"type": "object"}),
        ),
    ]
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

/// Every kind of message, with text that needs every kind of escape.
fn every_kind() -> Vec<Arc<Message>> {
    vec![
        Message::system("## identity\nYou are \"careful\" \\ brief.\t\u{1}\u{1f}\u{7f}").into(),
        Message::user("héllo 你好 👋 </script> \u{8}\u{c}\r\n").into(),
        Message::Assistant {
            content: None,
            tool_calls: vec![
                call("c1", "read_file", r#"{"path":"notes.txt"}"#),
                call("c2", "bash", "{not json"),
            ],
        }
        .into(),
        Message::tool_result("c1", "alpha\nbeta\n").into(),
        Message::tool_result("c2", "Error [invalid_json]: \u{0}").into(),
        Message::Assistant {
            content: Some("Both read.".into()),
            tool_calls: vec![call("c3", "bash", "{}")],
        }
        .into(),
        Message::tool_result("c3", "").into(),
        Message::assistant_text("").into(),
        Message::assistant_text("done").into(),
    ]
}

#[test]
fn a_first_request_is_the_serde_body_for_every_kind_of_message_and_setting() {
    let cases = [
        (tools(), None, None),
        (tools(), Some(4096), Some("session-1")),
        (Vec::new(), None, Some("k")),
        (Vec::new(), Some(1), None),
    ];
    for (tools, max_tokens, key) in cases {
        let request = ModelRequest {
            messages: every_kind(),
            tools,
            max_tokens,
        };
        let encoder = RequestEncoder::new(MODEL, sampling(), key.map(str::to_string));
        assert_eq!(encoded(&encoder, &request), reference(&request, key));
    }
}

#[test]
fn no_sampling_and_no_messages_are_the_serde_body_too() {
    let request = ModelRequest::default();
    let encoder = RequestEncoder::new(MODEL, Sampling::default(), None);
    let mut body = to_chat_request(MODEL, Sampling::default(), &request);
    body.prompt_cache_key = None;
    assert_eq!(
        encoded(&encoder, &request),
        serde_json::to_string(&body).unwrap()
    );
}

#[test]
fn every_request_of_a_changing_session_is_the_serde_body() {
    let encoder = RequestEncoder::new(MODEL, sampling(), Some("s".into()));
    let mut history: Vec<Arc<Message>> = vec![Message::user("read it").into()];
    let request = |system: &str, history: &[Arc<Message>], tools: Vec<ToolSpec>, max| {
        let mut messages = vec![Arc::new(Message::system(system))];
        messages.extend(history.iter().cloned());
        ModelRequest {
            messages,
            tools,
            max_tokens: max,
        }
    };
    let mut requests = vec![request("prompt A", &history, tools(), None)];
    for i in 0..5 {
        history.push(
            Message::Assistant {
                content: None,
                tool_calls: vec![call(&format!("c{i}"), "read_file", "{}")],
            }
            .into(),
        );
        history.push(Message::tool_result(format!("c{i}"), format!("result {i}")).into());
        requests.push(request("prompt A", &history, tools(), None));
    }
    // The system prompt changes; then a longer limit (chapter 11's retry); then fewer tools.
    requests.push(request("prompt B, longer", &history, tools(), None));
    requests.push(request("prompt B, longer", &history, tools(), Some(8192)));
    requests.push(request("prompt B", &history, tools()[..1].to_vec(), None));
    // A compaction: the same texts in new messages, then a shorter history.
    let copied: Vec<Arc<Message>> = history.iter().map(|m| Arc::new((**m).clone())).collect();
    requests.push(request("prompt B", &copied, tools(), None));
    let summary = [Arc::new(Message::user("<summary>")), history[9].clone()];
    requests.push(request("prompt B", &summary, tools(), None));
    // A message dropped from the middle (a processor), and one put in at the start.
    let mut dropped = history.clone();
    dropped.remove(3);
    dropped.remove(3);
    requests.push(request("prompt B", &dropped, tools(), None));
    let mut inserted = history.clone();
    inserted.insert(0, Message::system("<memory>").into());
    requests.push(request("prompt B", &inserted, Vec::new(), None));
    requests.push(request("prompt B", &history, tools(), None));
    for (i, request) in requests.iter().enumerate() {
        assert_eq!(
            encoded(&encoder, request),
            reference(request, Some("s")),
            "request {i}"
        );
    }
}

/// Any text, control characters and all of Unicode included.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[\\x00-\\x7f]{0,40}",
        proptest::collection::vec(
            prop_oneof![Just('"'), Just('\\'), Just('\u{1}'), Just('é'), Just('\n')],
            0..12
        )
        .prop_map(|c| c.into_iter().collect()),
    ]
}

fn message() -> impl Strategy<Value = Message> {
    let call = (text(), text(), text()).prop_map(|(id, name, arguments)| ToolCall {
        id,
        name,
        arguments,
    });
    prop_oneof![
        text().prop_map(Message::system),
        text().prop_map(Message::user),
        (
            proptest::option::of(text()),
            proptest::collection::vec(call, 0..3)
        )
            .prop_map(|(content, tool_calls)| Message::Assistant {
                content,
                tool_calls
            }),
        (text(), text()).prop_map(|(id, content)| Message::tool_result(id, content)),
    ]
}

proptest! {
    #[test]
    fn any_messages_encode_as_serde_encodes_them(
        messages in proptest::collection::vec(message(), 0..6),
        more in proptest::collection::vec(message(), 0..3),
    ) {
        let encoder = RequestEncoder::new(MODEL, sampling(), None);
        let first = ModelRequest {
            messages: messages.into_iter().map(Arc::new).collect(),
            ..ModelRequest::default()
        };
        prop_assert_eq!(encoded(&encoder, &first), reference(&first, None));
        // The same messages and some more: the first ones come from the previous body.
        let mut second = first.clone();
        second.messages.extend(more.into_iter().map(Arc::new));
        prop_assert_eq!(encoded(&encoder, &second), reference(&second, None));
    }
}
