//! What compaction costs the harness over a session: `rounds` tool rounds of 18 KB results
//! (under the artifact threshold, so each stays in the history), one request built after each,
//! with the default configuration. The model answers every summary call at once, so what is
//! measured is the harness: shaping, summary inputs, transcript writes. The history is handed
//! over as a copy per request, as the runner does today.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use agent_compaction::{CompactionConfig, Compactor};
use agent_core::{
    HistoryProcessor, Message, ModelClient, ModelError, ModelReply, ModelRequest, ToolCall,
};
use agent_workspace::Workspace;
use async_trait::async_trait;

fn main() {
    divan::main();
}

/// Answers every summary call with the same summary, instantly.
#[derive(Debug)]
struct Summarizer;

#[async_trait]
impl ModelClient for Summarizer {
    async fn complete(&self, _request: &ModelRequest) -> Result<ModelReply, ModelError> {
        Ok(ModelReply::text(
            r#"{"current_goal": "read", "key_findings": ["big.txt is large"], "files_read_or_changed": ["big.txt"], "remaining_work": [], "user_constraints": []}"#,
        ))
    }
}

fn round(i: usize, result: &str) -> [Message; 2] {
    [
        Message::Assistant {
            content: None,
            tool_calls: vec![ToolCall {
                id: format!("c{i}"),
                name: "read_file".into(),
                arguments: r#"{"path":"big.txt"}"#.into(),
            }],
        },
        Message::tool_result(format!("c{i}"), result),
    ]
}

/// A whole session of `rounds` rounds through one compactor; returns the summaries made.
#[divan::bench(args = [10, 100, 1000], sample_count = 5, sample_size = 1)]
fn session(bencher: divan::Bencher, rounds: usize) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let result = format!("{}\n", "y".repeat(99)).repeat(180);
    bencher
        .with_inputs(|| tempfile::tempdir().unwrap())
        .bench_local_refs(|dir| {
            let compactor = Compactor::new(
                Arc::new(Summarizer),
                Workspace::new(dir.path()).unwrap(),
                CompactionConfig::default(),
            );
            let mut history = vec![Message::user("read big.txt many times")];
            runtime.block_on(async {
                for i in 0..rounds {
                    history.extend(round(i, &result));
                    let sent = compactor.process(arcs(history.clone())).await.unwrap();
                    divan::black_box(sent);
                }
            });
            compactor.summaries_made()
        });
}

/// One request at round `rounds`, after a session of that length warmed the compactor; the
/// copy of the history the processor is handed is made outside the timing.
#[divan::bench(args = [10, 100, 1000], sample_count = 20)]
fn request_at(bencher: divan::Bencher, rounds: usize) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let result = format!("{}\n", "y".repeat(99)).repeat(180);
    let dir = tempfile::tempdir().unwrap();
    let compactor = Compactor::new(
        Arc::new(Summarizer),
        Workspace::new(dir.path()).unwrap(),
        CompactionConfig::default(),
    );
    let mut history = vec![Message::user("read big.txt many times")];
    runtime.block_on(async {
        for i in 0..rounds {
            history.extend(round(i, &result));
            compactor.process(arcs(history.clone())).await.unwrap();
        }
    });
    bencher
        .with_inputs(|| history.clone())
        .bench_local_values(|history| runtime.block_on(compactor.process(arcs(history))).unwrap());
}

/// The history as the loop hands it to processors: shared messages.
fn arcs(messages: Vec<agent_core::Message>) -> Vec<std::sync::Arc<agent_core::Message>> {
    messages.into_iter().map(std::sync::Arc::new).collect()
}
