//! How often the model is asked for a summary, what it is asked, and the session transcript.

use std::sync::Arc;

use agent_compaction::{CompactionConfig, Compactor, TRANSCRIPT_DIR};
use agent_core::{HistoryProcessor, Message, ModelReply, validate_pairing};
use agent_test_support::ScriptedModel;
use agent_workspace::Workspace;

fn config(every: usize) -> CompactionConfig {
    CompactionConfig {
        keep_groups: 4,
        micro_keep_groups: 1,
        byte_budget: 10,
        summary_keep_groups: 1,
        summary_every_requests: every,
    }
}

/// The task, then `rounds` tool rounds whose results are `result` with their number.
fn history(rounds: usize, result: &str) -> Vec<Message> {
    super::history("task", 0..rounds, result)
}

fn summary_json(n: usize) -> String {
    format!(
        r#"{{"current_goal": "g", "key_findings": ["summary {n}"], "files_read_or_changed": [], "remaining_work": [], "user_constraints": []}}"#
    )
}

/// The system message a request carries for `summary_json(n)`.
fn summary_message(n: usize) -> Message {
    let pretty = format!(
        "{{\n  \"current_goal\": \"g\",\n  \"key_findings\": [\n    \"summary {n}\"\n  ],\n  \"files_read_or_changed\": [],\n  \"remaining_work\": [],\n  \"user_constraints\": []\n}}"
    );
    Message::system(format!(
        "<conversation-summary>\n{pretty}\n</conversation-summary>"
    ))
}

fn replies(n: usize) -> Arc<ScriptedModel> {
    Arc::new(
        ScriptedModel::replies((1..=n).map(|i| ModelReply::text(summary_json(i))))
            .recording(agent_test_support::Recording::Requests),
    )
}

fn rendered(rounds: std::ops::Range<usize>) -> String {
    rounds
        .map(|i| format!("assistant called read_file {{}}\ntool result [c{i}]: result {i}\n"))
        .collect()
}

/// The snip marker in front of the middle changes its count on every request; the summary is
/// recognised by the messages it covers, so the second call sends only what came after it.
#[tokio::test]
async fn a_grown_history_behind_the_snip_marker_extends_the_previous_summary() {
    let dir = tempfile::tempdir().unwrap();
    let model = replies(2);
    let compactor = Compactor::new(
        model.clone(),
        Workspace::new(dir.path()).unwrap(),
        config(1),
    );
    compactor
        .process(arcs(history(8, "result ")))
        .await
        .unwrap();
    let sent = compactor
        .process(arcs(history(10, "result ")))
        .await
        .unwrap();
    model.finish().unwrap();
    let asked: Vec<String> = model
        .requests()
        .iter()
        .map(|r| r.messages[1].text().to_string())
        .collect();
    let previous = "{\n  \"current_goal\": \"g\",\n  \"key_findings\": [\n    \"summary 1\"\n  ],\n  \"files_read_or_changed\": [],\n  \"remaining_work\": [],\n  \"user_constraints\": []\n}";
    assert_eq!(
        asked,
        vec![
            // The snip window of 8 rounds starts at round 4; round 7 stays verbatim.
            rendered(4..7),
            format!(
                "Summary of the conversation so far:\n{previous}\n\nWhat happened after that:\n{}",
                rendered(7..9)
            ),
        ]
    );
    let full = history(10, "result ");
    assert_eq!(
        sent,
        vec![
            full[0].clone(),
            summary_message(2),
            full[19].clone(),
            full[20].clone()
        ]
    );
}

#[tokio::test]
async fn the_model_is_asked_at_most_once_per_k_over_budget_requests() {
    let dir = tempfile::tempdir().unwrap();
    let model = replies(3);
    let compactor = Compactor::new(
        model.clone(),
        Workspace::new(dir.path()).unwrap(),
        config(3),
    );
    let mut made = Vec::new();
    for rounds in 2..9 {
        let sent = compactor
            .process(arcs(history(rounds, "result ")))
            .await
            .unwrap();
        assert_eq!(validate_pairing(&sent), Ok(()), "{rounds} rounds");
        made.push(compactor.summaries_made());
    }
    model.finish().unwrap();
    // Requests 1, 4 and 7 ask; the others reuse the summary before them.
    assert_eq!(made, vec![1, 1, 1, 2, 2, 2, 3]);
}

/// Results too large for the budget by themselves: a new summary could not help, so until k
/// requests have passed the previous one is sent with the newer groups, over the budget.
#[tokio::test]
async fn over_budget_before_k_requests_the_previous_summary_is_sent_without_a_call() {
    let dir = tempfile::tempdir().unwrap();
    let model = replies(1);
    let config = CompactionConfig {
        byte_budget: 500,
        ..config(8)
    };
    let compactor = Compactor::new(model.clone(), Workspace::new(dir.path()).unwrap(), config);
    let large = "r".repeat(1_000);
    compactor.process(arcs(history(2, &large))).await.unwrap();
    let sent = compactor.process(arcs(history(3, &large))).await.unwrap();
    model.finish().unwrap();
    assert_eq!(compactor.summaries_made(), 1);
    let full = history(3, &large);
    assert_eq!(
        sent,
        vec![
            full[0].clone(),
            summary_message(1),
            full[3].clone(),
            Message::tool_result("c1", "[earlier tool result cleared: 1001 bytes]"),
            full[5].clone(),
            full[6].clone(),
        ]
    );
}

#[tokio::test]
async fn one_transcript_per_session_gets_only_the_messages_it_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let model = replies(2);
    let compactor = Compactor::new(
        model.clone(),
        Workspace::new(dir.path()).unwrap(),
        config(1),
    );
    compactor
        .process(arcs(history(2, "result ")))
        .await
        .unwrap();
    compactor
        .process(arcs(history(4, "result ")))
        .await
        .unwrap();
    model.finish().unwrap();
    let files: Vec<_> = std::fs::read_dir(dir.path().join(TRANSCRIPT_DIR))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    // The second summary covers the first 3 rounds (7 messages); each is written once.
    let expected: String = history(4, "result ")[..7]
        .iter()
        .map(|m| format!("{}\n", serde_json::to_string(m).unwrap()))
        .collect();
    assert_eq!(std::fs::read_to_string(&files[0]).unwrap(), expected);
}

/// The history as the loop hands it to processors: shared messages.
fn arcs(messages: Vec<agent_core::Message>) -> Vec<std::sync::Arc<agent_core::Message>> {
    messages.into_iter().map(std::sync::Arc::new).collect()
}
