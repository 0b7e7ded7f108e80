use std::sync::Arc;

use agent_core::{Message, ModelClient, ModelError, ModelReply, ModelRequest};
use agent_test_support::{Recording, ScriptError, ScriptExhausted, ScriptedModel};

/// A call with its arguments as raw text.
fn call(id: &str, name: &str, arguments: &str) -> agent_core::ToolCall {
    agent_core::ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

/// The scripted model's own failure inside a [`ModelError`], when that is what it is.
fn exhausted(error: &ModelError) -> Option<ScriptExhausted> {
    match error {
        ModelError::Client(client) => client.downcast_ref::<ScriptExhausted>().copied(),
        _ => None,
    }
}

fn request(text: &str) -> ModelRequest {
    ModelRequest {
        messages: vec![Arc::new(Message::user(text))],
        ..ModelRequest::default()
    }
}

#[tokio::test]
async fn replays_a_json_script_and_reports_what_is_left() {
    let script = r#"[
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "ls"}}]},
        {"tool_calls": [{"id": "c2", "name": "bash", "arguments": "{broken"}]},
        {"content": "done"}
    ]"#;
    let model = ScriptedModel::from_json(script, "inline")
        .unwrap()
        .recording(Recording::Requests);
    let first = model.complete(&request("a")).await.unwrap();
    assert_eq!(
        first,
        ModelReply::tool_calls(vec![call("c1", "bash", r#"{"command":"ls"}"#)])
    );
    let second = model.complete(&request("b")).await.unwrap();
    assert_eq!(second.tool_calls[0].arguments, "{broken");
    assert_eq!(model.remaining(), 1);
    assert_eq!(
        model.finish().unwrap_err().to_string(),
        "the script has 1 unused reply left after the run"
    );
    assert_eq!(
        model.complete(&request("c")).await.unwrap(),
        ModelReply::text("done")
    );
    let error = model.complete(&request("d")).await.unwrap_err();
    assert_eq!(exhausted(&error), Some(ScriptExhausted { request: 4 }));
    assert_eq!(
        error.to_string(),
        "the scripted model has no reply left for request #4"
    );
    assert_eq!(
        model
            .requests()
            .iter()
            .map(|r| r.messages[0].text().to_string())
            .collect::<Vec<_>>(),
        vec!["a", "b", "c", "d"]
    );
    model.finish().unwrap();
}

#[test]
fn a_script_with_unknown_fields_is_rejected() {
    let err = ScriptedModel::from_json(r#"[{"text": "hi"}]"#, "s.json").unwrap_err();
    assert!(matches!(err, ScriptError::Parse { .. }));
    assert_eq!(
        err.to_string(),
        "script s.json is not valid: unknown field `text`, expected one of `content`, `tool_calls`, `error`, `finish_reason` at line 1 column 8"
    );
}

#[tokio::test]
async fn a_script_step_can_carry_a_finish_reason() {
    let model = ScriptedModel::from_json(
        r#"[{"content": "cut o", "finish_reason": "length"}]"#,
        "inline",
    )
    .unwrap();
    assert_eq!(
        model.complete(&request("a")).await.unwrap(),
        ModelReply {
            finish_reason: Some("length".into()),
            ..ModelReply::text("cut o")
        }
    );
}

/// A long `--script` session must not keep every request: 229 MiB at 1000 rounds, measured
/// before it was fixed.
/// Recording is asked for; without it the model keeps nothing and still counts requests.
#[tokio::test]
async fn requests_are_kept_only_when_recording_is_asked_for() {
    let silent = ScriptedModel::replies([ModelReply::text("a")]);
    silent.complete(&request("one")).await.unwrap();
    assert_eq!(silent.requests(), Vec::<ModelRequest>::new());
    assert_eq!(
        exhausted(&silent.complete(&request("two")).await.unwrap_err()),
        Some(ScriptExhausted { request: 2 })
    );

    let recording = ScriptedModel::replies([ModelReply::text("a")]).recording(Recording::Requests);
    recording.complete(&request("one")).await.unwrap();
    assert_eq!(recording.requests(), vec![request("one")]);
}

#[tokio::test]
async fn a_call_without_an_id_gets_one_from_its_place_in_the_script() {
    let model = ScriptedModel::from_json(
        r#"[{"content": "x"},
            {"tool_calls": [{"id": "mine", "name": "a"}, {"name": "b", "arguments": "raw"}]},
            {"tool_calls": [{"name": "c", "arguments": {"k": 1}}]}]"#,
        "inline",
    )
    .unwrap();
    model.complete(&request("a")).await.unwrap();
    let ids = |reply: ModelReply| -> Vec<(String, String, String)> {
        reply
            .tool_calls
            .into_iter()
            .map(|c| (c.id, c.name, c.arguments))
            .collect()
    };
    assert_eq!(
        ids(model.complete(&request("b")).await.unwrap()),
        vec![
            ("mine".into(), "a".into(), "{}".into()),
            ("call_2_2".into(), "b".into(), "raw".into())
        ]
    );
    assert_eq!(
        ids(model.complete(&request("c")).await.unwrap()),
        vec![("call_3_1".into(), "c".into(), r#"{"k":1}"#.into())]
    );
}

#[tokio::test]
async fn a_scripted_error_can_carry_retry_after_seconds() {
    let script = r#"[
        {"error": {"status": 429, "message": "slow down", "retry_after": 2}},
        {"error": {"status": 503, "message": "busy", "retry_after": 5}},
        {"error": {"status": 500, "message": "boom"}}
    ]"#;
    let model = ScriptedModel::from_json(script, "inline").unwrap();
    let mut errors = Vec::new();
    for _ in 0..3 {
        errors.push(model.complete(&request("a")).await.unwrap_err());
    }
    let secs = |s| {
        Some(agent_core::RetryAfter::Seconds(
            std::time::Duration::from_secs(s),
        ))
    };
    assert_eq!(
        errors,
        [
            ModelError::RateLimited {
                message: "slow down".into(),
                retry_after: secs(2),
            },
            ModelError::Server {
                status: 503,
                message: "busy".into(),
                retry_after: secs(5),
            },
            ModelError::Server {
                status: 500,
                message: "boom".into(),
                retry_after: None,
            },
        ]
    );
}

#[test]
fn a_script_file_larger_than_the_bound_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.json");
    let file = std::fs::File::create(&path).unwrap();
    // Sparse: one byte past the bound without writing 16 MiB.
    file.set_len(agent_test_support::MAX_SCRIPT_BYTES + 1)
        .unwrap();
    let err = ScriptedModel::from_file(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("script {} is larger than 16777216 bytes", path.display())
    );
}

#[test]
fn a_client_error_equals_only_its_own_clones() {
    let one = ModelError::client(ScriptExhausted { request: 1 });
    let again = ModelError::client(ScriptExhausted { request: 1 });
    assert_eq!(one.clone(), one);
    assert_ne!(one, again);
}
