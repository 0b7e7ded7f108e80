//! Chapter 4: lifecycle hooks.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::hooks::{FnHook, Hook, HookEvent, HookEventKind, HookResult};
use agent_core::permissions::StaticApproval;
use agent_core::{Message, ModelReply, RunError};
use serde_json::json;

use predicates::prelude::*;

use crate::support::{command, write_script};

use crate::support::{call, scripted_agent_with, tool_results, tool_round, workspace};

fn result(json: serde_json::Value) -> HookResult {
    serde_json::from_value(json).unwrap()
}

fn hook(
    name: &str,
    body: impl Fn(&HookEvent) -> Result<HookResult, String> + Send + Sync + 'static,
) -> Arc<dyn Hook> {
    Arc::new(FnHook::new(name, body))
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
                    Ok(HookResult::default())
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
        RunError::PromptBlocked("no secrets (hook `ctx`)".into())
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
    let (mut agent, _m) = scripted_agent_with(4, dir.path(), replies, |deps| {
        deps.approval = Some(Arc::new(StaticApproval(true)));
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
    assert_eq!(
        agent.hook_errors(),
        vec![
            "PostToolUse hook `confused_post` failed: `block` is not a PostToolUse result field (allowed: updated_output, stop)"
        ]
    );
}

#[test]
fn chapter_4_loads_shell_hooks_from_the_workspace() {
    let dir = workspace();
    std::fs::create_dir(dir.path().join(".agent_tutorial")).unwrap();
    std::fs::write(
        dir.path().join(".agent_tutorial/hooks.json"),
        json!([
            {"event": "PreToolUse", "matcher": "glob", "command": "cat > event.json; echo '{\"block\": \"no globbing\"}'"},
            {"event": "PreToolUse", "matcher": "read_file", "command": "sleep 5", "timeout_secs": 0.2},
            {"event": "PostToolUse", "command": "echo not-json"}
        ])
        .to_string(),
    )
    .unwrap();
    let script = write_script(
        dir.path(),
        json!([
            {"tool_calls": [
                {"id": "c1", "name": "glob", "arguments": {"pattern": "*"}},
                {"id": "c2", "name": "read_file", "arguments": {"path": "notes.txt"}},
                {"id": "c3", "name": "edit_file", "arguments": {"path": "notes.txt", "old_text": "alpha", "new_text": "a"}}
            ]},
            {"content": "blocked twice"}
        ]),
    );
    command("ch04", dir.path())
        .args(["--prompt", "look", "--script"])
        .arg(&script)
        .assert()
        .success()
        .stderr(predicate::str::contains("[result] Error [hook_blocked]: no globbing (hook `hooks.json#0`)"))
        .stderr(predicate::str::contains(
            "[result] Error [hook_error]: PreToolUse hook `hooks.json#1` failed: timed out after 0.2s",
        ))
        // A PostToolUse hook answering garbage is reported, and the run goes on.
        .stderr(predicate::str::contains(
            "PostToolUse hook `hooks.json#2` failed: answered invalid JSON (expected ident at line 1 column 2)",
        ));
    let event: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("event.json")).unwrap())
            .unwrap();
    assert_eq!(
        event,
        json!({"event": "PreToolUse", "call_id": "c1", "tool": "glob", "input": {"pattern": "*"}})
    );
}
