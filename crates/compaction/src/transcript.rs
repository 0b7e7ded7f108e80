//! The session transcript: one append-only JSON-lines file per compactor, written through the
//! workspace boundary before a summary replaces part of a request, so the summarized messages
//! stay recoverable without copying the history again on every summary.

use std::sync::atomic::{AtomicU64, Ordering};

use std::sync::Arc;

use agent_core::Message;
use agent_workspace::{PathError, Workspace};

/// Where session transcripts are saved.
pub const TRANSCRIPT_DIR: &str = ".agent_tutorial/transcripts";

/// Tells apart two compactors built in the same millisecond by the same process.
static SESSIONS: AtomicU64 = AtomicU64::new(0);

/// Why a transcript could not be saved.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    /// The transcript file could not be written.
    #[error(transparent)]
    Path(#[from] PathError),
    /// A message could not be written as JSON.
    #[error("cannot serialize the history")]
    Json(#[from] serde_json::Error),
}

/// What has been written so far: the groups of the history already in the file.
#[derive(Debug)]
pub(crate) struct TranscriptLog {
    path: String,
    written: usize,
    /// The last group written, to recognise the same history next time (it only grows).
    last: Option<Vec<Arc<Message>>>,
}

impl TranscriptLog {
    pub(crate) fn new() -> Self {
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let n = SESSIONS.fetch_add(1, Ordering::SeqCst);
        let pid = std::process::id();
        Self {
            path: format!("{TRANSCRIPT_DIR}/session-{millis}-{pid}-{n}.jsonl"),
            written: 0,
            last: None,
        }
    }

    /// Appends the groups of `groups` not written yet. A history that is not the one written
    /// before (its group at the written count differs) is appended whole: the file never loses
    /// or rewrites a line.
    pub(crate) fn append(
        &mut self,
        workspace: &Workspace,
        groups: &[Vec<Arc<Message>>],
    ) -> Result<String, TranscriptError> {
        let same_history = self.written <= groups.len()
            && match &self.last {
                Some(last) => self.written.checked_sub(1).and_then(|i| groups.get(i)) == Some(last),
                None => true,
            };
        let from = if same_history { self.written } else { 0 };
        let path = workspace.inside(&self.path)?;
        if from < groups.len() {
            let mut text = String::new();
            for message in groups[from..].iter().flatten() {
                text.push_str(&serde_json::to_string(message)?);
                text.push('\n');
            }
            if let Some(parent) = path.parent() {
                workspace.create_dir_all(&parent)?;
            }
            workspace.append(&path, text.as_bytes())?;
            self.written = groups.len();
            self.last = groups.last().cloned();
        }
        Ok(path.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transcript_folder_linked_outside_is_refused_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".agent_tutorial")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join(TRANSCRIPT_DIR)).unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let err = TranscriptLog::new()
            .append(
                &workspace,
                &[vec![Arc::new(Message::user("secret history"))]],
            )
            .unwrap_err();
        // The name carries the time, so the variant is compared rather than the text.
        assert!(
            matches!(err, TranscriptError::Path(PathError::Escape { .. })),
            "{err:?}"
        );
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }
}
