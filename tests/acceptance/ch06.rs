//! Chapter 6: subagents.

use agent_core::{Message, ModelReply};
use agent_tools::subagent::SUBAGENT_MAX_TURNS;
use serde_json::json;

use crate::support::{
    assert_all_paired, call, scripted_agent, tool_results, tool_round, workspace,
};

#[tokio::test]
async fn a_subagent_has_fresh_history_no_task_tool_and_returns_only_its_final_text() {
    let dir = workspace();
    let replies = vec![
        // parent
        tool_round(vec![call(
            "p1",
            "task",
            json!({"description": "Count the lines of notes.txt"}),
        )]),
        // child
        tool_round(vec![call("k1", "task", json!({"description": "recurse"}))]),
        tool_round(vec![call("k2", "read_file", json!({"path": "notes.txt"}))]),
        ModelReply::text("notes.txt has 2 lines."),
        // parent again
        ModelReply::text("The subagent says 2 lines."),
    ];
    let (mut agent, model) = scripted_agent(6, dir.path(), replies);
    let outcome = agent.run_turn("How long is notes.txt?").await.unwrap();
    assert_eq!(outcome.final_text, "The subagent says 2 lines.");
    model.finish().unwrap();

    let requests = model.requests();
    assert_all_paired(&requests);
    let tool_names =
        |i: usize| -> Vec<String> { requests[i].tools.iter().map(|t| t.name.clone()).collect() };
    assert_eq!(
        tool_names(0),
        vec![
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "todo_write",
            "task"
        ]
    );
    assert_eq!(
        tool_names(1),
        vec![
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "todo_write"
        ]
    );
    // The child's first request: its own system prompt and the task, nothing of the parent.
    assert_eq!(requests[1].messages.len(), 2);
    assert!(
        requests[1].messages[0]
            .text()
            .starts_with("You are a subagent")
    );
    assert_eq!(
        requests[1].messages[1],
        Message::user("Count the lines of notes.txt")
    );
    assert_eq!(
        requests[2].messages.last().unwrap().text(),
        "Error [unknown_tool]: no tool named `task`; available: bash, read_file, write_file, edit_file, glob, todo_write"
    );
    // The parent sees one tool result: the child's final text.
    assert_eq!(
        tool_results(agent.history()),
        vec!["p1: notes.txt has 2 lines."]
    );
    assert_eq!(agent.history().len(), 4);
}

#[tokio::test]
async fn a_subagent_that_never_finishes_hits_its_turn_limit() {
    let dir = workspace();
    let mut replies = vec![tool_round(vec![call(
        "p1",
        "task",
        json!({"description": "loop"}),
    )])];
    replies.extend((0..SUBAGENT_MAX_TURNS).map(|i| {
        tool_round(vec![call(
            &format!("k{i}"),
            "glob",
            json!({"pattern": "*"}),
        )])
    }));
    replies.push(ModelReply::text("It did not finish."));
    let (mut agent, model) = scripted_agent(6, dir.path(), replies);
    agent.run_turn("go").await.unwrap();
    model.finish().unwrap();
    assert_eq!(
        tool_results(agent.history()),
        vec!["p1: Error [subagent_turn_limit]: the subagent did not finish within 30 requests"]
    );
}

#[tokio::test]
async fn a_failing_subagent_is_a_tool_error_for_the_parent() {
    let dir = workspace();
    let replies = vec![
        tool_round(vec![call("p1", "task", json!({"description": "x"}))]),
        // The child's model call fails (the script's error step), the parent carries on.
    ];
    let (mut agent, model) = scripted_agent(6, dir.path(), replies);
    let err = agent.run_turn("go").await.unwrap_err();
    // The script ran out for the parent's second request; the child's failure came first.
    assert_eq!(
        err.to_string(),
        "the scripted model has no reply left for request #3"
    );
    assert_eq!(
        tool_results(agent.history()),
        vec![
            "p1: Error [subagent_execution_error]: the scripted model has no reply left for request #2"
        ]
    );
    assert_eq!(model.requests().len(), 3);
}
