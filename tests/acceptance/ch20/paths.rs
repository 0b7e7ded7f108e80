//! Every tool path of chapter 20 goes through the hooks and the permission pipeline (the plan
//! gate one of its rules): the lead's call, an MCP tool's, a subagent's and a teammate's — one
//! test each, the hooks that ran and the decisions taken compared whole.

use std::sync::{Arc, Mutex};

use agent_core::{AgentEvent, ModelReply};
use agent_harness::session::SessionEvent;
use agent_harness::test_util::TeamBuilder;
use agent_hooks::{FnHook, HookEvent, HookEventKind, HookOutput, HookRegistry};
use serde_json::json;

use super::{empty_hub, hub, repository, rest_soon};
use crate::support::{call, tool_round, workspace};
use crate::team_support::builder;

/// What the hooks saw and what the pipeline decided, in order.
#[derive(Debug, Default, PartialEq)]
struct Seen {
    /// `<agent> <event> <tool>`, one line per hook run.
    hooks: Vec<String>,
    /// `<agent> <tool> allowed|denied by <rule>`, one line per decision.
    decisions: Vec<String>,
}

/// Runs `prompt` one-shot on the session `builder` makes, every agent's pre- and post-tool
/// hooks logging, and says what was seen.
async fn run(builder: TeamBuilder, prompt: &str) -> Seen {
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let hooks_log = log.clone();
    let mut t = builder
        .hooks(move |agent| {
            let mut hooks = HookRegistry::default();
            for kind in [HookEventKind::PreToolUse, HookEventKind::PostToolUse] {
                let (log, agent) = (hooks_log.clone(), agent.to_string());
                hooks.register(
                    kind,
                    None,
                    Arc::new(FnHook::new("log", move |event: &HookEvent| {
                        let tool = match event {
                            HookEvent::PreToolUse { tool, .. }
                            | HookEvent::PostToolUse { tool, .. } => tool.as_str(),
                            _ => "",
                        };
                        log.lock().unwrap().push(format!("{agent} {kind:?} {tool}"));
                        HookOutput::from_json(event.kind(), json!({}))
                    })),
                );
            }
            hooks
        })
        .build();
    rest_soon(&t);
    let mut events = t.session.take_events().unwrap();
    t.run(prompt).await;
    let mut decisions = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let SessionEvent::Agent(e) = event
            && let AgentEvent::PermissionDecided(d) = e.event
        {
            let verdict = if d.allowed { "allowed" } else { "denied" };
            decisions.push(format!("{} {} {verdict} by {}", e.agent, d.tool, d.source));
        }
    }
    let hooks = log.lock().unwrap().clone();
    Seen { hooks, decisions }
}

fn lines(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|line| line.to_string()).collect()
}

/// The lead's own call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leads_call_runs_through_hooks_and_permission() {
    let dir = workspace();
    let (trees, board) = repository(dir.path());
    let b = builder(
        20,
        dir.path(),
        vec![
            tool_round(vec![call("c1", "bash", json!({"command": "echo hi"}))]),
            ModelReply::text("Done."),
            ModelReply::text("[]"),
        ],
        vec![],
    )
    .board(board)
    .worktrees(trees)
    .mcp(empty_hub(dir.path()));
    let seen = run(b, "Say hi.").await;
    assert_eq!(
        seen,
        Seen {
            hooks: lines(&["lead PreToolUse bash", "lead PostToolUse bash"]),
            decisions: lines(&["lead bash allowed by execute_asks"]),
        }
    );
}

/// A call of an MCP server's tool: registered in the lead's registry, run by the same loop
/// (the test server's `echo` reads, so the pipeline's default allows it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_tools_call_runs_through_hooks_and_permission() {
    let dir = workspace();
    let (trees, board) = repository(dir.path());
    let hub = hub(dir.path());
    assert_eq!(hub.start().await.len(), 0);
    let b = builder(
        20,
        dir.path(),
        vec![
            tool_round(vec![call("c1", "mcp__srv__echo", json!({"text": "hi"}))]),
            ModelReply::text("Done."),
            ModelReply::text("[]"),
        ],
        vec![],
    )
    .board(board)
    .worktrees(trees)
    .mcp(hub);
    let seen = run(b, "Echo hi.").await;
    assert_eq!(
        seen,
        Seen {
            hooks: lines(&[
                "lead PreToolUse mcp__srv__echo",
                "lead PostToolUse mcp__srv__echo"
            ]),
            decisions: lines(&["lead mcp__srv__echo allowed by default"]),
        }
    );
}

/// A subagent's call: the subagent shares its parent's hooks and gate (and its events are
/// told as the parent's), so its `bash` is hooked and decided like the lead's, inside the
/// `task` call's own pre- and post-tool hooks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagents_call_runs_through_hooks_and_permission() {
    let dir = workspace();
    let (trees, board) = repository(dir.path());
    let b = builder(
        20,
        dir.path(),
        vec![
            tool_round(vec![call(
                "k1",
                "task",
                json!({"description": "Say hi with bash"}),
            )]),
            // The subagent, on the lead's model.
            tool_round(vec![call("s1", "bash", json!({"command": "echo hi"}))]),
            ModelReply::text("It said hi."),
            ModelReply::text("Done."),
            ModelReply::text("[]"),
        ],
        vec![],
    )
    .board(board)
    .worktrees(trees)
    .mcp(empty_hub(dir.path()));
    let seen = run(b, "Delegate a hi.").await;
    assert_eq!(
        seen,
        Seen {
            hooks: lines(&[
                "lead PreToolUse task",
                "lead PreToolUse bash",
                "lead PostToolUse bash",
                "lead PostToolUse task",
            ]),
            decisions: lines(&[
                "lead task allowed by default",
                "lead bash allowed by execute_asks",
            ]),
        }
    );
}

/// A teammate's call, its plan not approved: its own hooks run, and the pipeline's plan gate
/// denies it before its handler could run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_teammates_call_runs_through_hooks_permission_and_the_plan_gate() {
    let dir = workspace();
    let (trees, board) = repository(dir.path());
    let b = builder(
        20,
        dir.path(),
        vec![
            tool_round(vec![call(
                "c1",
                "spawn_teammate",
                json!({"name": "writer", "role": "writes", "prompt": "Write a note.", "require_plan": true}),
            )]),
            ModelReply::text("Started."),
            ModelReply::text("[]"),
            ModelReply::text("Noted."),
            ModelReply::text("[]"),
        ],
        vec![(
            "writer",
            vec![
                tool_round(vec![call(
                    "w1",
                    "write_file",
                    json!({"path": "note.txt", "content": "hi\n"}),
                )]),
                ModelReply::text("I need an approved plan first."),
            ],
        )],
    )
    .board(board)
    .worktrees(trees)
    .mcp(empty_hub(dir.path()));
    let seen = run(b, "Have a teammate write a note.").await;
    assert!(!dir.path().join("note.txt").exists());
    assert_eq!(
        seen,
        Seen {
            hooks: lines(&[
                "lead PreToolUse spawn_teammate",
                "lead PostToolUse spawn_teammate",
                "writer PreToolUse write_file",
                "writer PostToolUse write_file",
            ]),
            decisions: lines(&[
                "lead spawn_teammate allowed by default",
                "writer write_file denied by plan_gate",
            ]),
        }
    );
}
