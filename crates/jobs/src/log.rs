//! A job's output: copied into its log file up to a cap, and its last bytes kept in memory for
//! the completion notice.

use std::collections::VecDeque;

use agent_workspace::{Inside, Workspace};

/// Bytes of the newest output kept in memory for the notice, whatever the log kept.
const TAIL_BYTES: usize = 4096;

/// Where one job's output goes. Shared by the stdout and stderr readers, which interleave
/// their chunks in arrival order.
#[derive(Debug)]
pub(crate) struct JobLog {
    workspace: Workspace,
    path: Inside,
    cap: u64,
    written: u64,
    state: LogState,
    tail: VecDeque<u8>,
}

/// Whether the log still takes output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LogState {
    Open,
    /// The cap was reached and the marker written: later output is dropped.
    Capped,
    /// Appending failed (the file was replaced by something else): nothing more is written.
    Broken,
}

impl JobLog {
    pub(crate) fn new(workspace: Workspace, path: Inside, cap: u64) -> Self {
        Self {
            workspace,
            path,
            cap,
            written: 0,
            state: LogState::Open,
            tail: VecDeque::with_capacity(TAIL_BYTES),
        }
    }

    /// The line that ends a log that reached its cap.
    pub(crate) fn marker(cap: u64) -> String {
        format!("\n[log capped at {cap} bytes: later output was not kept]\n")
    }

    pub(crate) fn push(&mut self, bytes: &[u8]) {
        let drop = (self.tail.len() + bytes.len()).saturating_sub(TAIL_BYTES);
        self.tail.drain(..drop.min(self.tail.len()));
        let skip = bytes.len().saturating_sub(TAIL_BYTES);
        self.tail.extend(&bytes[skip..]);
        if self.state != LogState::Open {
            return;
        }
        let room = usize::try_from(self.cap - self.written).unwrap_or(usize::MAX);
        let fits = &bytes[..room.min(bytes.len())];
        let mut chunk = fits.to_vec();
        if fits.len() < bytes.len() {
            chunk.extend_from_slice(Self::marker(self.cap).as_bytes());
            self.state = LogState::Capped;
        }
        self.written += fits.len() as u64;
        if chunk.is_empty() {
            return;
        }
        // Opened again for every chunk, no-follow and regular files only: a log swapped for a
        // symlink or a FIFO while the job runs is refused, not followed or blocked on.
        if let Err(err) = self.workspace.append(&self.path, &chunk) {
            tracing::warn!("job log: {err}; no more output is written to it");
            self.state = LogState::Broken;
        }
    }

    /// The last `lines` lines of everything the job printed (lossy UTF-8), without a final
    /// empty line.
    pub(crate) fn last_lines(&self, lines: usize) -> String {
        let bytes: Vec<u8> = self.tail.iter().copied().collect();
        last_lines(&String::from_utf8_lossy(&bytes), lines)
    }
}

/// The last `lines` lines of `text`, without a final empty line.
pub(crate) fn last_lines(text: &str, lines: usize) -> String {
    let text = text.strip_suffix('\n').unwrap_or(text);
    let all: Vec<&str> = text.split('\n').collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
