//! Chapter 5: `todo_write` and the stale-plan reminder.

use agent_core::{AgentEvent, Message, ModelReply, PlanStep, StepStatus};
use agent_tools::todo::REMINDER_TEXT;
use serde_json::json;

use predicates::prelude::*;

use crate::support::{command, write_script};

use crate::support::{
    call, scripted_agent, scripted_agent_with_events, tool_results, tool_round, workspace,
};

fn item(content: &str, status: StepStatus) -> PlanStep {
    PlanStep {
        content: content.into(),
        status,
    }
}

#[tokio::test]
async fn todo_write_replaces_the_whole_list_and_accepts_a_json_string() {
    let dir = workspace();
    let too_many: Vec<_> = (0..51)
        .map(|i| json!({"content": format!("step {i}"), "status": "pending"}))
        .collect();
    let replies = vec![
        tool_round(vec![call(
            "c1",
            "todo_write",
            json!({"todos": [
                {"content": "  read notes  ", "status": "in_progress"},
                {"content": "summarize", "status": "pending"}
            ]}),
        )]),
        tool_round(vec![call(
            "c2",
            "todo_write",
            json!({"todos": "[{\"content\": \"summarize\", \"status\": \"completed\"}]"}),
        )]),
        tool_round(vec![
            call("c3", "todo_write", json!({"todos": too_many})),
            call(
                "c4",
                "todo_write",
                json!({"todos": [{"content": "   ", "status": "pending"}]}),
            ),
            call(
                "c5",
                "todo_write",
                json!({"todos": [{"content": "x", "status": "done"}]}),
            ),
            call("c6", "todo_write", json!({"todos": "not json"})),
        ]),
        ModelReply::text("ok"),
    ];
    let (mut agent, _m, sink) = scripted_agent_with_events(5, dir.path(), replies);
    agent.run_turn("plan").await.unwrap();
    let results = tool_results(agent.history());
    assert_eq!(
        results,
        vec![
            r#"c1: [{"content":"read notes","status":"in_progress"},{"content":"summarize","status":"pending"}]"#.to_string(),
            r#"c2: [{"content":"summarize","status":"completed"}]"#.into(),
            "c3: Error [invalid_arguments]: $.todos: at most 50 items allowed, got 51".into(),
            "c4: Error [invalid_arguments]: $.todos[0].content: must not be blank".into(),
            "c5: Error [invalid_arguments]: $.todos[0].status: expected one of \"pending\", \"in_progress\", \"completed\"".into(),
            "c6: Error [invalid_arguments]: $.todos: the string is not a JSON list (expected ident at line 1 column 2)".into(),
        ]
    );
    let plans: Vec<AgentEvent> = sink
        .events()
        .into_iter()
        .filter(|e| matches!(e, AgentEvent::PlanUpdated(_)))
        .collect();
    // Failed writes are not plans: the last good list stays the last one told.
    assert_eq!(
        plans,
        vec![
            AgentEvent::PlanUpdated(vec![
                item("read notes", StepStatus::InProgress),
                item("summarize", StepStatus::Pending),
            ]),
            AgentEvent::PlanUpdated(vec![item("summarize", StepStatus::Completed)]),
        ]
    );
}

fn bash_round(i: usize) -> ModelReply {
    tool_round(vec![call(
        &format!("b{i}"),
        "glob",
        json!({"pattern": "*.txt"}),
    )])
}

fn reminders<M: AsRef<Message>>(messages: &[M]) -> usize {
    messages
        .iter()
        .filter(|m| m.as_ref().text() == REMINDER_TEXT)
        .count()
}

#[tokio::test]
async fn the_reminder_goes_into_one_request_only_and_never_into_history() {
    let dir = workspace();
    let mut replies = vec![tool_round(vec![call(
        "t0",
        "todo_write",
        json!({"todos": [{"content": "a", "status": "in_progress"}]}),
    )])];
    replies.extend((1..=7).map(bash_round));
    replies.push(ModelReply::text("done"));
    let (mut agent, model) = scripted_agent(5, dir.path(), replies);
    agent.run_turn("work").await.unwrap();
    model.finish().unwrap();

    let per_request: Vec<usize> = model
        .requests()
        .iter()
        .map(|r| reminders(&r.messages))
        .collect();
    // Request k follows k tool rounds. The todo_write was round 1; rounds 2-4 go without an
    // update, so request 4 is reminded; the count restarts and request 7 is reminded again.
    assert_eq!(per_request, vec![0, 0, 0, 0, 1, 0, 0, 1, 0]);
    let reminded = &model.requests()[4].messages;
    assert_eq!(
        reminded.last().map(|m| m.as_ref()),
        Some(&Message::system(REMINDER_TEXT))
    );
    assert_eq!(reminders(agent.history()), 0);
}

#[test]
fn chapter_5_shows_the_plan_when_it_changes() {
    let dir = workspace();
    let script = write_script(
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "todo_write", "arguments": {"todos": [
                {"content": "read", "status": "completed"},
                {"content": "write", "status": "in_progress"},
                {"content": "check", "status": "pending"}
            ]}}]},
            {"tool_calls": [{"id": "c2", "name": "todo_write", "arguments": {"todos": [
                {"content": "read", "status": "completed"},
                {"content": "write", "status": "in_progress"},
                {"content": "check", "status": "pending"}
            ]}}]},
            {"content": "planned"}
        ]),
    );
    command("ch05", dir.path())
        .args(["--prompt", "plan", "--script"])
        .arg(&script)
        .assert()
        .success()
        // The same plan written twice is shown once.
        .stderr(predicate::str::ends_with(
            "[plan]\n  [x] read\n  [>] write\n  [ ] check\n[tool] todo_write {\"todos\":[{\"content\":\"read\",\"status\":\"completed\"},{\"content\":\"write\",\"status\":\"in_progress\"},{\"content\":\"check\",\"status\":\"pending\"}]}\n[result] ok: 1 line, 123 bytes\n",
        ));
}

#[tokio::test]
async fn each_reminder_sent_is_told_as_an_event_before_its_request() {
    let dir = workspace();
    let mut replies: Vec<ModelReply> = (1..=4).map(bash_round).collect();
    replies.push(ModelReply::text("done"));
    let (mut agent, _m, sink) = scripted_agent_with_events(5, dir.path(), replies);
    agent.run_turn("work").await.unwrap();
    // Three rounds without a plan: the fourth request (index 3) carries the one reminder.
    let told: Vec<String> = sink
        .events()
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ReminderInjected { reminder } => Some(format!("reminder {reminder}")),
            AgentEvent::RequestSent { index, .. } => Some(format!("request {index}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        told,
        vec![
            "request 0",
            "request 1",
            "request 2",
            "reminder plan",
            "request 3",
            "request 4"
        ]
    );
}
