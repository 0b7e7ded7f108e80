//! A compactor handed drafts of one lineage keeps the history's groups from one request to the
//! next (it groups only what is new). What it sends, and what it asks the model, must be what a
//! compactor that groups every request whole sends and asks.

use std::sync::Arc;

use agent_compaction::{CompactionConfig, Compactor};
use agent_core::{HistoryProcessor, HistoryTracker, Message, ModelReply, ToolCall};
use agent_test_support::{Recording, ScriptedModel};
use agent_workspace::Workspace;

fn round(i: usize) -> [Arc<Message>; 2] {
    [
        Arc::new(Message::Assistant {
            content: None,
            tool_calls: vec![ToolCall {
                id: format!("c{i}"),
                name: "read_file".into(),
                arguments: "{}".into(),
            }],
        }),
        Arc::new(Message::tool_result(
            format!("c{i}"),
            format!("the result of call number {i}"),
        )),
    ]
}

fn model() -> Arc<ScriptedModel> {
    let summary = r#"{"current_goal": "g", "key_findings": ["k"], "files_read_or_changed": [], "remaining_work": [], "user_constraints": []}"#;
    Arc::new(
        ScriptedModel::replies((0..40).map(|_| ModelReply::text(summary)))
            .recording(Recording::Requests),
    )
}

fn owned(messages: &[Arc<Message>]) -> Vec<Message> {
    messages.iter().map(|m| Message::clone(m)).collect()
}

/// The session grows a round per request, a reminder is added to every third request, a user
/// message joins it once, and it is rewritten (four rounds dropped) once: a new lineage, whose
/// groups are made again.
#[tokio::test]
async fn resumed_groups_send_what_grouping_every_request_whole_sends() {
    let snip_only = CompactionConfig {
        keep_groups: 5,
        micro_keep_groups: 2,
        ..CompactionConfig::default()
    };
    let with_summaries = CompactionConfig {
        keep_groups: 4,
        micro_keep_groups: 1,
        byte_budget: 120,
        summary_keep_groups: 2,
        summary_every_requests: 3,
    };
    for config in [snip_only, with_summaries] {
        let dir = tempfile::tempdir().unwrap();
        for side in ["resumed", "whole"] {
            std::fs::create_dir(dir.path().join(side)).unwrap();
        }
        let workspace = |side: &str| Workspace::new(dir.path().join(side)).unwrap();
        let (resumed_model, whole_model) = (model(), model());
        let resumed = Compactor::new(resumed_model.clone(), workspace("resumed"), config);
        let whole = Compactor::new(whole_model.clone(), workspace("whole"), config);
        let mut tracker = HistoryTracker::default();
        let mut history = vec![Arc::new(Message::user("task"))];
        let mut lineages = Vec::new();
        for i in 0..30 {
            history.extend(round(i));
            if i == 12 {
                history.push(Arc::new(Message::user("and the tests too")));
            }
            if i == 20 {
                history.drain(1..9);
            }
            let reminder = Arc::new(Message::user("a reminder"));
            let mut draft = tracker.draft(&history);
            lineages.push(draft.lineage());
            let mut plain = history.clone();
            if i % 3 == 0 {
                draft.push(reminder.clone());
                plain.push(reminder);
            }
            let sent = resumed.shape(draft).await.unwrap().into_vec();
            let expected = whole.process(plain).await.unwrap();
            assert_eq!(owned(&sent), owned(&expected), "request {i}");
        }
        // One lineage up to the rewrite, another after it.
        lineages.dedup();
        assert_eq!(lineages.len(), 2);
        assert_eq!(resumed.summaries_made(), whole.summaries_made());
        assert_eq!(resumed_model.requests(), whole_model.requests());
    }
}

/// The summaries really are exercised by the second configuration above.
#[tokio::test]
async fn the_summary_configuration_asks_for_summaries() {
    let dir = tempfile::tempdir().unwrap();
    let config = CompactionConfig {
        keep_groups: 4,
        micro_keep_groups: 1,
        byte_budget: 120,
        summary_keep_groups: 2,
        summary_every_requests: 3,
    };
    let compactor = Compactor::new(model(), Workspace::new(dir.path()).unwrap(), config);
    let mut tracker = HistoryTracker::default();
    let mut history = vec![Arc::new(Message::user("task"))];
    for i in 0..12 {
        history.extend(round(i));
        compactor.shape(tracker.draft(&history)).await.unwrap();
    }
    assert_eq!(compactor.summaries_made(), 4);
}
