//! Chapter 2: the schema-checked registry and the workspace-confined file tools.

use serde_json::json;

use crate::support::{assert_all_paired, call, scripted_agent, tool_round, transcript, workspace};
use agent_core::{Message, ModelReply};

#[tokio::test]
async fn a_session_finds_reads_and_edits_a_file_and_cannot_leave_the_workspace() {
    let dir = workspace();
    let (mut agent, model) = scripted_agent(
        2,
        dir.path(),
        vec![
            tool_round(vec![call("call_1", "glob", json!({"pattern": "**/*.rs"}))]),
            tool_round(vec![
                call("call_2", "read_file", json!({"path": "src/main.rs"})),
                call("call_3", "read_file", json!({"path": "../../etc/passwd"})),
            ]),
            tool_round(vec![call(
                "call_4",
                "edit_file",
                json!({"path": "src/main.rs", "old_text": "\"hi\"", "new_text": "\"hello\""}),
            )]),
            tool_round(vec![call(
                "call_5",
                "write_file",
                json!({"path": "src/lib.rs", "body": "x"}),
            )]),
            ModelReply::text("Changed the greeting to hello."),
        ],
    );
    let outcome = agent.run_turn("Make main say hello").await.unwrap();
    assert_eq!(outcome.final_text, "Changed the greeting to hello.");
    assert_eq!((outcome.requests, outcome.tool_calls), (5, 5));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/main.rs")).unwrap(),
        "fn main() {\n    println!(\"hello\");\n}\n"
    );
    assert!(!dir.path().join("src/lib.rs").exists());
    model.finish().unwrap();

    let results: Vec<String> = agent
        .history()
        .iter()
        .filter_map(|m| match m.as_ref() {
            Message::Tool {
                tool_call_id,
                content,
            } => Some(format!("{tool_call_id}: {content}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        vec![
            "call_1: src/main.rs",
            "call_2: fn main() {\n    println!(\"hi\");\n}\n",
            "call_3: Error [path_escape]: `../../etc/passwd` resolves outside the workspace",
            "call_4: Edited src/main.rs: replaced 1 occurrence",
            "call_5: Error [invalid_arguments]: $: missing required field `content`",
        ]
    );
    let requests = model.requests();
    assert_all_paired(&requests);
    insta::assert_snapshot!(transcript(&requests, dir.path()));
}

#[tokio::test]
async fn chapter_2_registers_tools_in_a_fixed_order() {
    let dir = workspace();
    let (agent, _model) = scripted_agent(2, dir.path(), vec![]);
    assert_eq!(
        agent.tools().names(),
        vec!["bash", "read_file", "write_file", "edit_file", "glob"]
    );
}

#[tokio::test]
async fn the_history_persists_across_turns() {
    let dir = workspace();
    let (mut agent, model) = scripted_agent(
        2,
        dir.path(),
        vec![ModelReply::text("first"), ModelReply::text("second")],
    );
    agent.run_turn("one").await.unwrap();
    agent.run_turn("two").await.unwrap();
    let last = &model.requests()[1];
    assert_eq!(
        last.messages[1..].to_vec(),
        vec![
            Message::user("one"),
            Message::assistant_text("first"),
            Message::user("two")
        ]
    );
}
