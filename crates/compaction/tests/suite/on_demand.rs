//! A summary asked for (chapter 20's `/compact`) under the byte budget: made at the next
//! request, kept while it covers the history, and only once per request for it.

use std::sync::Arc;

use agent_compaction::{CompactOnDemand, CompactionConfig, Compactor};
use agent_core::{HistoryProcessor, Message, ModelReply};
use agent_test_support::{Recording, ScriptedModel};
use agent_workspace::Workspace;

/// Nothing is ever over this budget, snipped or stubbed: only a request for a summary makes one.
fn config() -> CompactionConfig {
    CompactionConfig {
        keep_groups: 40,
        micro_keep_groups: 40,
        byte_budget: 1_000_000,
        summary_keep_groups: 1,
        summary_every_requests: 8,
    }
}

/// `first`, then tool rounds `rounds`.
fn history(first: &str, rounds: std::ops::Range<usize>) -> Vec<Message> {
    super::history(first, rounds, "result ")
}

const SUMMARY: &str = r#"{"current_goal": "g", "key_findings": ["k"], "files_read_or_changed": [], "remaining_work": [], "user_constraints": []}"#;

fn summary_message() -> Message {
    Message::system(
        "<conversation-summary>\n{\n  \"current_goal\": \"g\",\n  \"key_findings\": [\n    \"k\"\n  ],\n  \"files_read_or_changed\": [],\n  \"remaining_work\": [],\n  \"user_constraints\": []\n}\n</conversation-summary>",
    )
}

async fn sent(compactor: &Compactor, messages: &[Message]) -> Vec<Message> {
    let shared = messages.iter().cloned().map(Arc::new).collect();
    let out = compactor.process(shared).await.unwrap();
    out.iter().map(|m| (**m).clone()).collect()
}

#[tokio::test]
async fn a_requested_summary_is_made_at_the_next_request_and_kept_under_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let model = Arc::new(
        ScriptedModel::replies([ModelReply::text(SUMMARY)]).recording(Recording::Requests),
    );
    let handle = CompactOnDemand::default();
    let compactor = Compactor::new(model.clone(), Workspace::new(dir.path()).unwrap(), config())
        .on_demand(handle.clone());
    let four = history("task", 0..4);
    let five = history("task", 0..5);

    // Not asked: under the budget the history goes out whole.
    let whole = sent(&compactor, &four).await;
    handle.request();
    let compacted = sent(&compactor, &four).await;
    let still = sent(&compactor, &five).await;
    let other = history("another task", 0..4);
    let unrelated = sent(&compactor, &other).await;

    let mut expected_compacted = vec![Message::user("task"), summary_message()];
    expected_compacted.extend_from_slice(&four[7..]);
    let mut expected_still = vec![Message::user("task"), summary_message()];
    expected_still.extend_from_slice(&five[7..]);
    assert_eq!(
        (whole, compacted, still, unrelated),
        (four.clone(), expected_compacted, expected_still, other)
    );
    // One summary call, for the request that followed the request for it.
    assert_eq!(
        (compactor.summaries_made(), handle.is_requested()),
        (1, false)
    );
}

#[tokio::test]
async fn a_request_with_nothing_to_summarize_is_used_up_by_the_next_request() {
    let dir = tempfile::tempdir().unwrap();
    let model = Arc::new(ScriptedModel::replies([]));
    let handle = CompactOnDemand::default();
    let compactor = Compactor::new(model, Workspace::new(dir.path()).unwrap(), config())
        .on_demand(handle.clone());
    // The task and one round: the newest group is kept, so there is nothing older to cover.
    let short = history("task", 0..1);
    handle.request();
    assert_eq!(sent(&compactor, &short).await, short);
    assert_eq!(
        (compactor.summaries_made(), handle.is_requested()),
        (0, false)
    );
}
