//! A reply whose tool calls carry empty, repeated or reused ids: fresh ids are assigned before
//! anything runs, so each call runs once, is answered once, and later requests stay paired.

use std::sync::{Arc, Mutex};

use agent_core::{
    AgentRunner, Message, ModelReply, PreparedCall, ToolFailure, ToolHandler, ToolRegistry,
    validate_pairing,
};
use agent_test_support::{Recording, ScriptedModel};
use async_trait::async_trait;

use super::{call, echo_spec, prompt};

/// Records every `text` it runs with: the side effect whose count the tests check.
#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

#[async_trait]
impl ToolHandler for Recorder {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let text = call.arguments["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        self.0.lock().unwrap().push(text.clone());
        Ok(format!("ran {text}"))
    }
}

/// Runs two turns ("first", then "second") over `replies` and returns, for each recorded
/// request, its tool-call ids and its `(id, result)` pairs, plus the side effects.
async fn two_turns(replies: Vec<ModelReply>) -> (Vec<(Vec<String>, Vec<String>)>, Vec<String>) {
    let recorder = Arc::new(Recorder::default());
    let tools = Arc::new(
        ToolRegistry::builder()
            .tool(echo_spec("echo"), recorder.clone())
            .build()
            .unwrap(),
    );
    let model = Arc::new(ScriptedModel::replies(replies).recording(Recording::Requests));
    let runner = AgentRunner::builder(model.clone(), tools, prompt()).build();
    let mut history = Vec::new();
    runner.run_turn(&mut history, "first").await.unwrap();
    let second = runner.run_turn(&mut history, "second").await.unwrap();
    assert_eq!(second.final_text, "second done");
    model.finish().unwrap();
    assert_eq!(validate_pairing(&history), Ok(()));
    let requests = model
        .requests()
        .iter()
        .map(|request| {
            assert_eq!(validate_pairing(&request.messages), Ok(()));
            let mut ids = Vec::new();
            let mut results = Vec::new();
            for message in &request.messages {
                match message.as_ref() {
                    Message::Assistant { tool_calls, .. } => {
                        ids.extend(tool_calls.iter().map(|c| c.id.clone()));
                    }
                    Message::Tool {
                        tool_call_id,
                        content,
                    } => results.push(format!("{tool_call_id}: {content}")),
                    _ => {}
                }
            }
            (ids, results)
        })
        .collect();
    let effects = recorder.0.lock().unwrap().clone();
    (requests, effects)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn two_calls_with_the_same_id_each_run_once_and_the_second_gets_a_fresh_id() {
    let (requests, effects) = two_turns(vec![
        ModelReply::tool_calls(vec![
            call("dup", "echo", r#"{"text":"a"}"#),
            call("dup", "echo", r#"{"text":"b"}"#),
        ]),
        ModelReply::text("first done"),
        ModelReply::text("second done"),
    ])
    .await;
    let ids = strings(&["dup", "call_1"]);
    let results = strings(&["dup: ran a", "call_1: ran b"]);
    assert_eq!(
        requests,
        vec![
            (vec![], vec![]),
            (ids.clone(), results.clone()),
            (ids, results),
        ]
    );
    assert_eq!(effects, strings(&["a", "b"]));
}

#[tokio::test]
async fn empty_ids_get_fresh_ids_that_avoid_the_ids_of_the_same_reply() {
    let (requests, effects) = two_turns(vec![
        ModelReply::tool_calls(vec![
            call("", "echo", r#"{"text":"a"}"#),
            call("", "echo", r#"{"text":"b"}"#),
            call("call_1", "echo", r#"{"text":"c"}"#),
        ]),
        ModelReply::text("first done"),
        ModelReply::text("second done"),
    ])
    .await;
    let ids = strings(&["call_2", "call_3", "call_1"]);
    let results = strings(&["call_2: ran a", "call_3: ran b", "call_1: ran c"]);
    assert_eq!(
        requests,
        vec![
            (vec![], vec![]),
            (ids.clone(), results.clone()),
            (ids, results),
        ]
    );
    assert_eq!(effects, strings(&["a", "b", "c"]));
}

#[tokio::test]
async fn an_id_used_in_an_earlier_turn_is_renamed_and_the_session_goes_on() {
    let (requests, effects) = two_turns(vec![
        ModelReply::tool_calls(vec![call("c1", "echo", r#"{"text":"a"}"#)]),
        ModelReply::text("first done"),
        ModelReply::tool_calls(vec![call("c1", "echo", r#"{"text":"b"}"#)]),
        ModelReply::text("second done"),
    ])
    .await;
    assert_eq!(
        requests,
        vec![
            (vec![], vec![]),
            (strings(&["c1"]), strings(&["c1: ran a"])),
            (strings(&["c1"]), strings(&["c1: ran a"])),
            (
                strings(&["c1", "call_1"]),
                strings(&["c1: ran a", "call_1: ran b"])
            ),
        ]
    );
    assert_eq!(effects, strings(&["a", "b"]));
}
