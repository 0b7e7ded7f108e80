//! `agent-sessions`: every session's history kept, so a session can be continued exactly
//! (`--continue`, `--resume ID`, chapter 11 on).
//!
//! One file per session, `.agent_tutorial/sessions/<id>.jsonl` in the workspace: a header
//! line (id, start, chapter, first prompt), then one line per message of the lead's history
//! as the loop stored it, with a `turn` line where a person's turn began. Lines are appended
//! as the session goes (0600, flushed), so a crash loses at most the line being written.
//!
//! The repository is written by an attacker, so a session file is untrusted input:
//!
//! - every path goes through the workspace boundary (a linked file or folder is refused);
//! - reads are bounded ([`Limits`]: bytes per file and per line, lines per file, sessions
//!   kept), on load as on write;
//! - each line is checked (its shape, the tool call/result pairing); a bad line is skipped
//!   with a warning, a broken pairing refuses the file with an error naming it;
//! - a file this machine's harness did not write must not become the model's history: after
//!   every line the writer records the file's length and SHA-256 in a seal kept outside the
//!   workspace ([`SealStore`], next to the trust store), and loading refuses a file whose
//!   content no seal matches ([`SessionError::Unsealed`], [`SessionError::Changed`]).

#![warn(missing_docs)]

mod error;
mod list;
mod load;
mod record;
mod seal;
mod writer;

pub use error::SessionError;
pub use list::{Listed, Status, latest, list};
pub use load::{Loaded, Skipped, load, parse};
pub use record::{FORMAT_VERSION, Header, Line, SessionId};
pub use seal::{Seal, SealStore, Sealed};
pub use writer::{Appended, SessionWriter};

/// The workspace-relative folder the session files are in.
pub const FOLDER: &str = ".agent_tutorial/sessions";

/// The file name's ending after the id.
pub const EXTENSION: &str = ".jsonl";

/// How much a session file may hold, on write and on load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes per file.
    pub file_bytes: u64,
    /// Bytes per line (one message).
    pub line_bytes: usize,
    /// Lines per file, the header included.
    pub lines: usize,
    /// Session files kept per workspace: a new session removes the oldest beyond it, and a
    /// listing reads no more than this many (the newest).
    pub sessions: usize,
}

/// The limits the harness uses: far over a long day's session (a tool result is capped at
/// a few tens of kilobytes before it reaches the history).
pub const LIMITS: Limits = Limits {
    file_bytes: 32 << 20,
    line_bytes: 4 << 20,
    lines: 50_000,
    sessions: 50,
};
