//! Chapter 4: lifecycle hooks.
//!
//! This file: the hook events through the runner, in process (`FnHook`s answering with the
//! JSON a shell hook prints), one test per event and what its answer may do. The hooks the
//! binary loads from the workspace's `.agent_tutorial/hooks.json`, the trust step before they
//! run and the configuration errors are in `ch04/shell_hooks.rs`.

mod shell_hooks;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::{AgentEvent, CollectingSink, Message, ModelReply, PromptBlocked, RunError};
use agent_hooks::{FnHook, Hook, HookError, HookEvent, HookEventKind, HookOutput};
use agent_policy::StaticApproval;
use serde_json::json;

use crate::support::{call, scripted_agent_with, tool_results, tool_round, workspace};

/// A hook's answer as JSON: [`hook`] parses it as the output of the event the hook runs for,
/// the way a shell hook's stdout is, so these tests pin the JSON field names hooks write.
fn result(json: serde_json::Value) -> serde_json::Value {
    json
}

fn hook(
    name: &str,
    body: impl Fn(&HookEvent) -> Result<serde_json::Value, String> + Send + Sync + 'static,
) -> Arc<dyn Hook> {
    Arc::new(FnHook::new(name, move |event: &HookEvent| {
        let answer = body(event).map_err(HookError::failed)?;
        HookOutput::from_json(event.kind(), answer)
    }))
}

#[tokio::test]
async fn pre_tool_use_blocks_and_short_circuits_later_hooks() {
    let dir = workspace();
    let later = Arc::new(AtomicUsize::new(0));
    let counter = later.clone();
    let replies = vec![
        tool_round(vec![
            call("c1", "read_file", json!({"path": "notes.txt"})),
            call("c2", "glob", json!({"pattern": "*"})),
        ]),
        ModelReply::text("ok"),
    ];
    let (mut agent, _m) = scripted_agent_with(4, dir.path(), replies, |deps| {
        deps.hooks
            .register(
                HookEventKind::PreToolUse,
                Some("read_file".into()),
                hook("guard", |_| {
                    Ok(result(json!({"block": "reading is off today"})))
                }),
            )
            .register(
                HookEventKind::PreToolUse,
                None,
                hook("count", move |_| {
                    counter.fetch_add(1, Ordering::SeqCst);
                    Ok(json!({}))
                }),
            );
    });
    agent.run_turn("go").await.unwrap();
    assert_eq!(
        tool_results(agent.history()),
        vec![
            "c1: Error [hook_blocked]: reading is off today (hook `guard`)".to_string(),
            "c2: notes.txt".into(),
        ]
    );
    // The counting hook ran for glob only: the block short-circuited it for read_file.
    assert_eq!(later.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_permission_recommendation_merges_into_the_pipeline() {
    let dir = workspace();
    let replies = vec![
        tool_round(vec![
            call("c1", "read_file", json!({"path": "notes.txt"})),
            call("c2", "bash", json!({"command": "true"})),
        ]),
        ModelReply::text("ok"),
    ];
    let (mut agent, _m) = scripted_agent_with(4, dir.path(), replies, |deps| {
        deps.hooks.register(
            HookEventKind::PreToolUse,
            Some("read_file".into()),
            hook("deny_reads", |_| Ok(result(json!({"permission": "deny"})))),
        );
        // "allow" cannot beat the built-in "bash asks": deny > ask > allow.
        deps.hooks.register(
            HookEventKind::PreToolUse,
            Some("bash".into()),
            hook("allow_bash", |_| Ok(result(json!({"permission": "allow"})))),
        );
    });
    agent.run_turn("go").await.unwrap();
    assert_eq!(
        tool_results(agent.history()),
        vec![
            "c1: Error [permission_denied]: recommended by a PreToolUse hook (by hook:deny_reads)".to_string(),
            "c2: Error [permission_denied]: running a command needs approval; no approval provider, so denied (by execute_asks)".into(),
        ]
    );
}

#[tokio::test]
async fn a_rewritten_input_is_validated_again() {
    let dir = workspace();
    let replies = vec![
        tool_round(vec![
            call("c1", "read_file", json!({"path": "notes.txt"})),
            call("c2", "glob", json!({"pattern": "*.txt"})),
        ]),
        ModelReply::text("ok"),
    ];
    let (mut agent, _m) = scripted_agent_with(4, dir.path(), replies, |deps| {
        deps.hooks.register(
            HookEventKind::PreToolUse,
            Some("read_file".into()),
            hook("limit", |e| {
                let HookEvent::PreToolUse { input, .. } = e else {
                    return Err("wrong event".into());
                };
                let mut input = input.clone();
                input["limit"] = json!(1);
                Ok(result(json!({"updated_input": input})))
            }),
        );
        deps.hooks.register(
            HookEventKind::PreToolUse,
            Some("glob".into()),
            hook("broken", |_| {
                Ok(result(json!({"updated_input": {"pattern": 7}})))
            }),
        );
    });
    agent.run_turn("go").await.unwrap();
    assert_eq!(
        tool_results(agent.history()),
        vec![
            "c1: alpha\n[... 1 more lines not shown ...]".to_string(),
            "c2: Error [invalid_arguments]: $.pattern: expected string, got number".into(),
        ]
    );
}

#[tokio::test]
async fn post_tool_use_rewrites_output_or_stops_the_run_with_every_call_answered() {
    let dir = workspace();
    let replies = vec![tool_round(vec![
        call("c1", "read_file", json!({"path": "notes.txt"})),
        call("c2", "glob", json!({"pattern": "*"})),
        call("c3", "glob", json!({"pattern": "*"})),
    ])];
    let (mut agent, model) = scripted_agent_with(4, dir.path(), replies, |deps| {
        deps.hooks.register(
            HookEventKind::PostToolUse,
            Some("read_file".into()),
            hook("redact", |_| {
                Ok(result(json!({"updated_output": "[redacted]"})))
            }),
        );
        deps.hooks.register(
            HookEventKind::PostToolUse,
            Some("glob".into()),
            hook("enough", |_| Ok(result(json!({"stop": "seen enough"})))),
        );
    });
    let outcome = agent.run_turn("go").await.unwrap();
    assert_eq!(outcome.final_text, "Run stopped by a hook after `glob`.");
    assert_eq!(
        tool_results(agent.history()),
        vec![
            "c1: [redacted]".to_string(),
            "c2: notes.txt".into(),
            "c3: Error [hook_stopped_continuation]: a hook stopped the run before this call ran"
                .into(),
        ]
    );
    assert_eq!(model.requests().len(), 1);
    model.finish().unwrap();
}

#[tokio::test]
async fn stop_forces_one_more_turn_at_most_once() {
    let dir = workspace();
    let replies = vec![
        ModelReply::text("first answer"),
        ModelReply::text("second answer"),
    ];
    let (mut agent, model) = scripted_agent_with(4, dir.path(), replies, |deps| {
        deps.hooks.register(
            HookEventKind::Stop,
            None,
            hook("insist", |_| {
                Ok(result(json!({"continue_with": "Run the tests first."})))
            }),
        );
    });
    let outcome = agent.run_turn("go").await.unwrap();
    assert_eq!(outcome.final_text, "second answer");
    assert_eq!(
        agent.history()[1..3].to_vec(),
        vec![
            Message::assistant_text("first answer"),
            Message::user("Run the tests first.")
        ]
    );
    model.finish().unwrap();
}

#[tokio::test]
async fn user_prompt_submit_adds_context_or_blocks() {
    let dir = workspace();
    let (mut agent, model) =
        scripted_agent_with(4, dir.path(), vec![ModelReply::text("ok")], |deps| {
            deps.hooks.register(
                HookEventKind::UserPromptSubmit,
                None,
                hook("ctx", |e| match e {
                    HookEvent::UserPromptSubmit { prompt } if prompt.contains("secret") => {
                        Ok(result(json!({"block": "no secrets"})))
                    }
                    _ => Ok(result(
                        json!({"additional_context": "The user prefers short answers."}),
                    )),
                }),
            );
        });
    agent.run_turn("hello").await.unwrap();
    assert_eq!(
        model.requests()[0].messages[1..].to_vec(),
        vec![
            Message::user("hello"),
            Message::user(
                "<hook-context source=\"ctx\">\nThe user prefers short answers.\n</hook-context>"
            ),
        ]
    );
    let err = agent.run_turn("tell me the secret").await.unwrap_err();
    assert_eq!(
        err,
        RunError::PromptBlocked(PromptBlocked {
            hook: "ctx".into(),
            reason: "no secrets".into()
        })
    );
    assert_eq!(
        err.to_string(),
        "the prompt was blocked by a hook: no secrets (hook `ctx`)"
    );
    assert_eq!(agent.history().len(), 3, "a blocked prompt is not stored");
}

#[tokio::test]
async fn a_field_for_the_wrong_event_is_an_error_not_ignored() {
    let dir = workspace();
    let replies = vec![
        tool_round(vec![
            call("c1", "read_file", json!({"path": "notes.txt"})),
            call("c2", "glob", json!({"pattern": "*.txt"})),
        ]),
        ModelReply::text("ok"),
    ];
    let sink = Arc::new(CollectingSink::new());
    let (mut agent, _m) = scripted_agent_with(4, dir.path(), replies, |deps| {
        deps.events = sink.clone();
        deps.approval = Some(Arc::new(StaticApproval::ApproveAll));
        deps.hooks.register(
            HookEventKind::PreToolUse,
            Some("read_file".into()),
            hook("confused", |_| Ok(result(json!({"updated_output": "x"})))),
        );
        deps.hooks.register(
            HookEventKind::PostToolUse,
            Some("glob".into()),
            hook("confused_post", |_| Ok(result(json!({"block": "x"})))),
        );
    });
    agent.run_turn("go").await.unwrap();
    assert_eq!(
        tool_results(agent.history()),
        vec![
            "c1: Error [hook_error]: PreToolUse hook `confused` failed: `updated_output` is not a PreToolUse result field (allowed: block, permission, updated_input)".to_string(),
            "c2: notes.txt".into(),
        ]
    );
    let hook_failures: Vec<AgentEvent> = sink
        .events()
        .into_iter()
        .filter(|e| matches!(e, AgentEvent::HookFailed { .. }))
        .collect();
    assert_eq!(
        hook_failures,
        vec![AgentEvent::HookFailed {
            hook: "confused_post".into(),
            event: "PostToolUse".into(),
            message: "`block` is not a PostToolUse result field (allowed: updated_output, stop)"
                .into(),
        }]
    );
}
