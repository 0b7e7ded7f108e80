//! Chapter 20's tool lists: the lead's first request in full, its tool list pinned whole (with
//! and without a server running), and what a teammate and a subagent are offered — every
//! tool of theirs by name, none of MCP, none that manages the team.

use agent_core::{AgentId, Message, ModelReply, ModelRequest};
use agent_harness::session::{Mode, Op};
use serde_json::json;

use super::{Recorder, empty_hub, hub, repository};
use crate::support::{call, tool_round, workspace};
use crate::team_support::builder;

fn tool_names(request: &ModelRequest) -> Vec<&str> {
    request.tools.iter().map(|t| t.name.as_str()).collect()
}

/// Every tool of chapter 19's lead, in the order chapter 20 keeps: the registry's slots, not
/// the order the features were installed or the servers answered.
pub(crate) const LEAD_TOOLS: [&str; 33] = [
    "bash",
    "job_output",
    "job_kill",
    "read_file",
    "write_file",
    "edit_file",
    "glob",
    "todo_write",
    "load_skill",
    "task",
    "task_create",
    "task_update",
    "task_list",
    "task_get",
    "create_task",
    "get_task",
    "list_tasks",
    "claim_task",
    "complete_task",
    "release_task",
    "create_worktree",
    "keep_worktree",
    "remove_worktree",
    "schedule_cron",
    "list_crons",
    "cancel_cron",
    "spawn_teammate",
    "send_message",
    "list_teammates",
    "request_shutdown",
    "review_plan",
    "connect_mcp",
    "disconnect_mcp",
];

/// No `.mcp.json`: the lead's first request, every byte of it. Chapter 20 installs nothing
/// the model sees, so this is chapter 19's with the chapter named 20.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p20_first_request_in_full() {
    let dir = workspace();
    let (trees, board) = repository(dir.path());
    let mut t = builder(
        20,
        dir.path(),
        vec![
            ModelReply::text("Everything is on."),
            ModelReply::text("[]"),
        ],
        vec![],
    )
    .board(board)
    .worktrees(trees)
    .mcp(empty_hub(dir.path()))
    .build();
    t.run("What can you do?").await;
    let requests = t.requests("lead");
    assert_eq!(tool_names(&requests[0]), LEAD_TOOLS);
    let root = dir.path().canonicalize().unwrap().display().to_string();
    let text = agent_tutorial::render::full(&requests[0]).replace(&root, "<workspace>");
    insta::assert_snapshot!(text);
}

/// The lead's answers in the next test: delegate a count to a subagent, then start `writer`.
fn lead(request: &ModelRequest) -> ModelReply {
    match request.messages.last().unwrap().as_ref() {
        Message::User { content } if content == "Go." => tool_round(vec![call(
            "k1",
            "task",
            json!({"description": "Count the lines of notes.txt"}),
        )]),
        // The subagent's one request: its task is its prompt.
        Message::User { content } if content == "Count the lines of notes.txt" => {
            ModelReply::text("Two lines.")
        }
        Message::Tool { tool_call_id, .. } if tool_call_id == "k1" => tool_round(vec![call(
            "s1",
            "spawn_teammate",
            json!({"name": "writer", "role": "writes notes", "prompt": "Stand by."}),
        )]),
        Message::User { content } if content.starts_with("Existing memories:") => {
            ModelReply::text("[]")
        }
        _ => ModelReply::text("Noted."),
    }
}

fn mate(request: &ModelRequest) -> ModelReply {
    match request.messages.last().unwrap().as_ref() {
        Message::User { content } if content.starts_with("Existing memories:") => {
            ModelReply::text("[]")
        }
        _ => ModelReply::text("Ready."),
    }
}

/// A server running from the start: the lead is offered its own tools in their fixed order,
/// then the server's. The subagent it starts (sharing its model) and the teammate it spawns
/// get neither the server's tools nor `connect_mcp`, and nothing that starts, lists, stops or
/// reviews teammates or creates board tasks: their whole lists, by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lead_has_every_tool_in_a_fixed_order_and_its_helpers_no_mcp_or_team_tool() {
    let dir = workspace();
    let (trees, board) = repository(dir.path());
    let hub = hub(dir.path());
    assert_eq!(hub.start().await.len(), 0);
    let (lead_model, mate_model) = (Recorder::new(lead), Recorder::new(mate));
    let mut t = builder(20, dir.path(), vec![], vec![])
        .board(board)
        .worktrees(trees)
        .mcp(hub)
        .lead_model(lead_model.clone())
        .mate_model(mate_model.clone())
        .build();
    super::rest_soon(&t);
    t.session.handle().submit(Op::Prompt {
        agent: AgentId::lead(),
        text: "Go.".into(),
    });
    t.session.run(Mode::OneShot).await;

    let requests = lead_model.requests();
    let expected: Vec<&str> = LEAD_TOOLS
        .iter()
        .chain(&crate::ch19::SERVER_TOOLS)
        .copied()
        .collect();
    assert_eq!(tool_names(&requests[0]), expected);
    let subagent = requests
        .iter()
        .find(|r| r.messages.last().unwrap().text() == "Count the lines of notes.txt")
        .unwrap();
    assert_eq!(
        tool_names(subagent),
        [
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "todo_write",
            "load_skill"
        ]
    );
    let writer = mate_model.requests();
    assert_eq!(
        tool_names(&writer[0]),
        [
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "get_task",
            "list_tasks",
            "claim_task",
            "complete_task",
            "release_task",
            "send_message",
            "submit_plan",
        ]
    );
}
