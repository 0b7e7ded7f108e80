use std::sync::Arc;

use agent_compaction::{CompactionConfig, Compactor};
use agent_core::{HistoryProcessor, Message, ModelReply, ToolCall};
use agent_test_support::{Recording, ScriptedModel};
use agent_workspace::Workspace;

/// Summarizes everything between the first group and the newest one, whatever its size.
fn config() -> CompactionConfig {
    CompactionConfig {
        keep_groups: 40,
        micro_keep_groups: 3,
        byte_budget: 10,
        summary_keep_groups: 1,
        summary_every_requests: 8,
    }
}

fn call(id: &str, name: &str, arguments: String) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
    }
}

/// Every kind of line the summary transcript has: text over the 2,000-character cut,
/// multi-byte text, arguments over the cut, an assistant without text, a system message.
fn history() -> Vec<Message> {
    vec![
        Message::user("task"),
        Message::Assistant {
            content: Some(format!("Je regarde ✓ {}", "a".repeat(2_100))),
            tool_calls: vec![call(
                "c1",
                "write_file",
                format!("{{\"content\":\"{}\"}}", "b".repeat(2_100)),
            )],
        },
        Message::tool_result("c1", format!("é{}", "x".repeat(2_500))),
        Message::Assistant {
            content: None,
            tool_calls: vec![call("c2", "glob", r#"{"pattern":"*"}"#.into())],
        },
        Message::tool_result("c2", "a.txt"),
        Message::system("a note"),
        Message::user("go on"),
        Message::assistant_text("done"),
    ]
}

/// As the runner hands messages to a processor.
fn shared(messages: Vec<Message>) -> Vec<Arc<Message>> {
    messages.into_iter().map(Arc::new).collect()
}

const SUMMARY: &str = r#"{"current_goal": "g", "key_findings": [], "files_read_or_changed": [], "remaining_work": [], "user_constraints": []}"#;

/// Pins every byte of the summary request, so moving the side call into `agent_core`
/// provably changed nothing the model receives.
#[tokio::test]
async fn the_summary_request_is_pinned_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let model = Arc::new(
        ScriptedModel::replies([ModelReply::text(SUMMARY)]).recording(Recording::Requests),
    );
    let compactor = Compactor::new(model.clone(), Workspace::new(dir.path()).unwrap(), config());
    compactor.process(shared(history())).await.unwrap();
    model.finish().unwrap();
    let requests = model.requests();
    assert!(requests[0].tools.is_empty());
    let expected = format!(
        "assistant: Je regarde ✓ {a} […]\nassistant called write_file {{\"content\":\"{b} […]\ntool result [c1]: é{x} […]\nassistant called glob {{\"pattern\":\"*\"}}\ntool result [c2]: a.txt\nsystem: a note\nuser: go on\n",
        a = "a".repeat(2_000 - "Je regarde ✓ ".chars().count()),
        b = "b".repeat(2_000 - "{\"content\":\"".len()),
        x = "x".repeat(1_999),
    );
    assert_eq!(
        requests[0].messages,
        vec![
            Message::system(include_str!("../../src/summary_prompt.md").trim()),
            Message::user(expected),
        ]
    );
}

/// A reply whose closing bracket comes before its opening one used to slice the reply
/// backwards and panic; now the summary fails and the snipped request is sent.
#[tokio::test]
async fn a_reply_with_brackets_in_the_wrong_order_fails_the_summary_without_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let model = Arc::new(ScriptedModel::replies([ModelReply::text("} no summary {")]));
    let compactor = Compactor::new(model.clone(), Workspace::new(dir.path()).unwrap(), config());
    let sent = compactor.process(shared(history())).await.unwrap();
    model.finish().unwrap();
    assert_eq!(compactor.summaries_made(), 1);
    let roles: Vec<&str> = sent.iter().map(|m| m.role()).collect();
    assert_eq!(
        roles,
        vec![
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "system",
            "user",
            "assistant"
        ]
    );
}
