//! Large tool results go to a file; the history keeps a preview with the path.
//!
//! A 2 MB build log in the history would be resent with every request until compaction
//! dropped it. Persisting it keeps the request small while nothing is lost: the model can read
//! the file back with `read_file` (or `grep` it with `bash`) when it needs more.

use agent_core::seams::ResultShaper;
use agent_core::{AgentEvent, Events, ToolCall};
use agent_workspace::{Existing, PathError, Workspace};
use async_trait::async_trait;

/// Where artifacts go, relative to the workspace.
pub const ARTIFACT_DIR: &str = ".agent_tutorial/artifacts";

/// When a tool result is persisted, and how much of it the history keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArtifactConfig {
    /// A single result larger than this is persisted.
    pub max_result_bytes: usize,
    /// When a batch is still larger than this, its largest results are persisted next.
    pub max_batch_bytes: usize,
    /// Bytes from the start of a persisted result kept in its preview.
    pub preview_head_bytes: usize,
    /// Bytes from its end kept in the preview (where a build's errors usually are).
    pub preview_tail_bytes: usize,
}

impl Default for ArtifactConfig {
    fn default() -> Self {
        Self {
            max_result_bytes: 30_000,
            max_batch_bytes: 200_000,
            preview_head_bytes: 2_000,
            preview_tail_bytes: 1_000,
        }
    }
}

/// The chapter-8 [`ResultShaper`].
#[derive(Debug, Clone)]
pub struct ArtifactStore {
    workspace: Workspace,
    config: ArtifactConfig,
    events: Events,
}

/// The largest index `<= at` that is a char boundary of `text`.
fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A call id made safe as a file name: ids come from the model and could hold `../`.
fn file_stem(call_id: &str) -> String {
    let stem: String = call_id
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() { "call".into() } else { stem }
}

impl ArtifactStore {
    /// Persists under `workspace`'s [`ARTIFACT_DIR`]; tells no one until
    /// [`ArtifactStore::events`].
    pub fn new(workspace: Workspace, config: ArtifactConfig) -> Self {
        Self {
            workspace,
            config,
            events: Events::default(),
        }
    }

    /// Where each persisted result is told, as [`AgentEvent::ResultPersisted`].
    pub fn events(mut self, events: Events) -> Self {
        self.events = events;
        self
    }

    /// The preview the history keeps for a persisted result.
    pub fn preview(&self, relative_path: &str, content: &str) -> String {
        let head_end = floor_boundary(content, self.config.preview_head_bytes);
        let tail_start = floor_boundary(
            content,
            content.len().saturating_sub(self.config.preview_tail_bytes),
        )
        .max(head_end);
        let omitted = tail_start - head_end;
        format!(
            "<persisted-tool-result path=\"{relative_path}\" bytes=\"{}\">\n{}\n[... {omitted} bytes not shown; the whole result is in {relative_path}: read it with read_file, or search it with bash ...]\n{}\n</persisted-tool-result>",
            content.len(),
            &content[..head_end],
            &content[tail_start..],
        )
    }

    /// Writes `content` to a fresh artifact file and returns its workspace-relative path.
    /// Through the boundary: an artifact folder that is a symlink to outside, or a planted
    /// link at the file's name, is refused, never written through.
    fn persist(&self, call_id: &str, content: &str) -> Result<String, PathError> {
        let stem = file_stem(call_id);
        let mut n = 1;
        loop {
            let name = match n {
                1 => format!("{ARTIFACT_DIR}/{stem}.txt"),
                n => format!("{ARTIFACT_DIR}/{stem}-{n}.txt"),
            };
            let path = self.workspace.inside(&name)?;
            if self.workspace.kind(&path)?.is_none() {
                // `Refuse`: a file that appeared since the look is never overwritten.
                self.workspace
                    .write_atomic(&path, content.as_bytes(), Existing::Refuse)?;
                return Ok(path.to_string());
            }
            n += 1;
        }
    }

    fn persist_into(&self, entry: &mut (ToolCall, String)) {
        match self.persist(&entry.0.id, &entry.1) {
            Ok(relative) => {
                let preview = self.preview(&relative, &entry.1);
                self.events.emit(AgentEvent::ResultPersisted {
                    call_id: entry.0.id.clone(),
                    path: relative,
                    bytes: entry.1.len(),
                });
                entry.1 = preview;
            }
            // Keep the full text rather than lose it: an oversized request is recoverable
            // (compaction, prompt-too-long), a lost result is not.
            Err(err) => {
                tracing::warn!(call = %entry.0.id, "cannot persist a large tool result: {err}")
            }
        }
    }
}

#[async_trait]
impl ResultShaper for ArtifactStore {
    async fn shape(&self, batch: &mut [(ToolCall, String)]) {
        for entry in batch.iter_mut() {
            if entry.1.len() > self.config.max_result_bytes {
                self.persist_into(entry);
            }
        }
        loop {
            let total: usize = batch.iter().map(|(_, c)| c.len()).sum();
            if total <= self.config.max_batch_bytes {
                break;
            }
            let largest = batch
                .iter_mut()
                .filter(|(_, c)| !c.starts_with("<persisted-tool-result"))
                .max_by_key(|(_, c)| c.len());
            match largest {
                Some(entry) => {
                    let before = entry.1.len();
                    self.persist_into(entry);
                    if entry.1.len() >= before {
                        break; // could not shrink it (write failed); do not loop forever
                    }
                }
                None => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_stems_cannot_escape() {
        assert_eq!(file_stem("call_1"), "call_1");
        assert_eq!(file_stem("../../etc/passwd"), "______etc_passwd");
        assert_eq!(file_stem(""), "call");
    }

    #[test]
    fn previews_cut_on_char_boundaries() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::new(
            Workspace::new(dir.path()).unwrap(),
            ArtifactConfig {
                preview_head_bytes: 3,
                preview_tail_bytes: 3,
                ..ArtifactConfig::default()
            },
        );
        // "é" is two bytes: a 3-byte head ends after "aé".
        assert_eq!(
            store.preview("p.txt", "aéxyz123é"),
            "<persisted-tool-result path=\"p.txt\" bytes=\"11\">\naé\n[... 5 bytes not shown; the whole result is in p.txt: read it with read_file, or search it with bash ...]\n3é\n</persisted-tool-result>"
        );
    }
}
