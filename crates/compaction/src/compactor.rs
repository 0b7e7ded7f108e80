//! Shaping what is sent when the history grows: snip, micro, summary.
//!
//! All three work on the copy of the history a request is built from; the stored history stays
//! canonical (and complete). Groups ([`crate::groups`]) are kept or dropped whole, so every
//! request still pairs each tool call with its result.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::seams::ProcessError;
use agent_core::side_call::{self, JsonShape, SideCallError, TranscriptStyle};
use agent_core::{AgentEvent, CompactionKind, Events, HistoryProcessor, Message, ModelClient};
use agent_workspace::{Existing, PathError, Workspace};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use crate::groups::{groups, is_tool_round, total_bytes};

/// Where full transcripts are saved before a summary replaces part of a request.
pub const TRANSCRIPT_DIR: &str = ".agent_tutorial/transcripts";

const SUMMARY_PROMPT: &str = include_str!("summary_prompt.md");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionConfig {
    /// Snip: the newest groups kept (plus the first user message).
    pub keep_groups: usize,
    /// Micro: tool results older than the newest this-many groups become a stub.
    pub micro_keep_groups: usize,
    /// Summary: above this many bytes, the older part is replaced by a summary.
    pub byte_budget: usize,
    /// Summary: the newest groups kept verbatim next to the summary.
    pub summary_keep_groups: usize,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        Self {
            keep_groups: 40,
            micro_keep_groups: 3,
            byte_budget: 50_000,
            summary_keep_groups: 4,
        }
    }
}

/// The structured summary the model must return: exactly these fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    pub current_goal: String,
    pub key_findings: Vec<String>,
    pub files_read_or_changed: Vec<String>,
    pub remaining_work: Vec<String>,
    pub user_constraints: Vec<String>,
}

/// Keeps the first group and the newest `keep`, with a one-line marker for what is left out.
pub fn snip(groups: Vec<Vec<Message>>, keep: usize) -> Vec<Vec<Message>> {
    if groups.len() <= keep + 1 {
        return groups;
    }
    let omit = groups.len() - 1 - keep;
    let mut iter = groups.into_iter();
    let mut out: Vec<Vec<Message>> = iter.next().into_iter().collect();
    let dropped: Vec<Vec<Message>> = iter.by_ref().take(omit).collect();
    let messages: usize = dropped.iter().map(Vec::len).sum();
    let rounds = dropped.iter().filter(|g| is_tool_round(g)).count();
    out.push(vec![Message::system(format!(
        "[snipped: {messages} earlier messages ({rounds} tool rounds) are not shown]"
    ))]);
    out.extend(iter);
    out
}

/// Replaces tool results older than the newest `keep` groups with a short stub.
pub fn micro(mut groups: Vec<Vec<Message>>, keep: usize) -> Vec<Vec<Message>> {
    let old = groups.len().saturating_sub(keep);
    for group in groups.iter_mut().take(old) {
        for message in group.iter_mut() {
            if let Message::Tool { content, .. } = message {
                let stub = format!("[earlier tool result cleared: {} bytes]", content.len());
                if stub.len() < content.len() {
                    *content = stub;
                }
            }
        }
    }
    groups
}

struct Cached {
    prefix: Vec<Message>,
    summary: Summary,
}

/// The chapter-8 history processor.
pub struct Compactor {
    model: Arc<dyn ModelClient>,
    workspace: Workspace,
    config: CompactionConfig,
    cache: Mutex<Option<Cached>>,
    summaries: AtomicUsize,
    transcripts: AtomicUsize,
    events: Events,
}

impl std::fmt::Debug for Compactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compactor")
            .field("config", &self.config)
            .field("summaries", &self.summaries_made())
            .finish_non_exhaustive()
    }
}

impl Compactor {
    pub fn new(
        model: Arc<dyn ModelClient>,
        workspace: Workspace,
        config: CompactionConfig,
    ) -> Self {
        Self {
            model,
            workspace,
            config,
            cache: Mutex::new(None),
            summaries: AtomicUsize::new(0),
            transcripts: AtomicUsize::new(0),
            events: Events::default(),
        }
    }

    /// Where each shaping of a request is told, as [`AgentEvent::Compacted`].
    pub fn events(mut self, events: Events) -> Self {
        self.events = events;
        self
    }

    fn compacted(&self, kind: CompactionKind, before: usize, after: usize) {
        if after < before {
            self.events.emit(AgentEvent::Compacted {
                kind,
                before,
                after,
            });
        }
    }

    /// How many times the model was asked for a summary.
    pub fn summaries_made(&self) -> usize {
        self.summaries.load(Ordering::SeqCst)
    }

    /// Saves the full history before a summary replaces part of it, through the boundary (a
    /// transcript folder linked to outside is refused).
    fn save_transcript(&self, messages: &[Message]) -> Result<String, TranscriptError> {
        let n = self.transcripts.fetch_add(1, Ordering::SeqCst) + 1;
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let path = self
            .workspace
            .inside(&format!("{TRANSCRIPT_DIR}/transcript-{millis}-{n}.jsonl"))?;
        let mut text = String::new();
        for message in messages {
            text.push_str(&serde_json::to_string(message)?);
            text.push('\n');
        }
        self.workspace
            .write_atomic(&path, text.as_bytes(), Existing::Refuse)?;
        Ok(path.to_string())
    }

    /// The summary of `middle`, reusing the cached one when the prefix is unchanged and
    /// extending it when the prefix only grew.
    async fn summarize(
        &self,
        full: &[Message],
        middle: Vec<Message>,
    ) -> Result<Summary, SummaryError> {
        let mut cache = self.cache.lock().await;
        let (previous, new_part) = match cache.as_ref() {
            Some(c) if c.prefix == middle => return Ok(c.summary.clone()),
            Some(c) if middle.starts_with(&c.prefix) => {
                (Some(&c.summary), &middle[c.prefix.len()..])
            }
            _ => (None, &middle[..]),
        };
        let transcript = self.save_transcript(full)?;
        let mut input = String::new();
        if let Some(previous) = previous {
            input.push_str("Summary of the conversation so far:\n");
            input
                .push_str(&serde_json::to_string_pretty(previous).map_err(SummaryError::Previous)?);
            input.push_str("\n\nWhat happened after that:\n");
        }
        // Each message ends with a newline here (the memory transcript joins them instead).
        for message in new_part {
            input.push_str(&side_call::render_message(
                message,
                TranscriptStyle::Detailed,
            ));
            input.push('\n');
        }
        self.summaries.fetch_add(1, Ordering::SeqCst);
        tracing::info!(%transcript, messages = new_part.len(), "summarizing older messages");
        let summary: Summary = side_call::ask_json(
            self.model.as_ref(),
            SUMMARY_PROMPT,
            input,
            JsonShape::Object,
        )
        .await?;
        *cache = Some(Cached {
            prefix: middle,
            summary: summary.clone(),
        });
        Ok(summary)
    }
}

#[async_trait]
impl HistoryProcessor for Compactor {
    fn name(&self) -> &'static str {
        "compaction"
    }

    async fn process(
        &self,
        messages: Vec<Arc<Message>>,
    ) -> Result<Vec<Arc<Message>>, ProcessError> {
        // Snip, micro and summary work on owned messages; the copy is made here.
        let messages = owned(&messages);
        let full = messages.clone();
        let snipped = snip(groups(messages), self.config.keep_groups);
        let snipped_len = snipped.iter().map(Vec::len).sum();
        self.compacted(CompactionKind::Snip, full.len(), snipped_len);
        let shaped = micro(snipped.clone(), self.config.micro_keep_groups);
        let flat: Vec<Message> = shaped.iter().flatten().cloned().collect();
        let snipped_bytes = snipped.iter().map(|g| total_bytes(g)).sum();
        self.compacted(CompactionKind::Micro, snipped_bytes, total_bytes(&flat));
        let keep = self.config.summary_keep_groups;
        if total_bytes(&flat) <= self.config.byte_budget || shaped.len() <= keep + 1 {
            return Ok(shared(flat));
        }
        // Summarize the full text of the middle (not its stubs); keep first and newest groups.
        let middle: Vec<Message> = snipped[1..snipped.len() - keep]
            .iter()
            .flatten()
            .cloned()
            .collect();
        match self.summarize(&full, middle).await {
            Ok(summary) => {
                let json = serde_json::to_string_pretty(&summary)
                    .map_err(|e| ProcessError::new("cannot serialize the summary", e))?;
                let mut out: Vec<Message> = shaped[0].clone();
                out.push(Message::system(format!(
                    "<conversation-summary>\n{json}\n</conversation-summary>"
                )));
                out.extend(shaped[shaped.len() - keep..].iter().flatten().cloned());
                self.compacted(CompactionKind::Summary, full.len(), out.len());
                Ok(shared(out))
            }
            Err(err) => {
                // A failed summary must not break the answer: send the snipped request.
                tracing::warn!("compaction summary failed: {}", chain(&err));
                Ok(shared(flat))
            }
        }
    }
}

/// The emergency processor for "prompt too long": keep the first group and the newest few.
#[derive(Debug, Clone, Copy)]
pub struct OverflowSnip {
    pub keep_groups: usize,
}

#[async_trait]
impl HistoryProcessor for OverflowSnip {
    fn name(&self) -> &'static str {
        "overflow_snip"
    }

    async fn process(
        &self,
        messages: Vec<Arc<Message>>,
    ) -> Result<Vec<Arc<Message>>, ProcessError> {
        Ok(shared(
            snip(groups(owned(&messages)), self.keep_groups)
                .into_iter()
                .flatten()
                .collect(),
        ))
    }
}

fn owned(messages: &[Arc<Message>]) -> Vec<Message> {
    messages.iter().map(|m| Message::clone(m)).collect()
}

fn shared(messages: Vec<Message>) -> Vec<Arc<Message>> {
    messages.into_iter().map(Arc::new).collect()
}

/// Why no summary was made (the request is then sent snipped, without one).
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    #[error("cannot save the transcript")]
    Transcript(#[from] TranscriptError),
    #[error("cannot serialize the previous summary")]
    Previous(#[source] serde_json::Error),
    #[error("the summary call failed")]
    Call(#[from] SideCallError),
}

/// `err` and its causes, `: `-separated, for the log line (a log has no `{:#}` chain).
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Why a transcript could not be saved.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("cannot serialize the history")]
    Json(#[from] serde_json::Error),
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::ScriptedModel;

    #[test]
    fn a_transcript_folder_linked_outside_is_refused_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".agent_tutorial")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join(TRANSCRIPT_DIR)).unwrap();
        let compactor = Compactor::new(
            Arc::new(ScriptedModel::new([])),
            Workspace::new(dir.path()).unwrap(),
            CompactionConfig::default(),
        );
        let err = compactor
            .save_transcript(&[Message::user("secret history")])
            .unwrap_err();
        // The name carries the time, so the variant is compared rather than the text.
        assert!(
            matches!(err, TranscriptError::Path(PathError::Escape { .. })),
            "{err:?}"
        );
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }
}
