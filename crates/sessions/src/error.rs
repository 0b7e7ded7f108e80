//! Why a session could not be written, listed or continued.

use std::path::PathBuf;

use agent_workspace::{PathError, StoreError};

/// Why a session could not be written, listed or continued. Every variant about one file
/// names it (workspace-relative).
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The boundary or the file system refused (a link to outside, not a file, too large, I/O).
    #[error(transparent)]
    Path(#[from] PathError),
    /// The folder could not be listed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// `--resume ID` with something that is not a session id.
    #[error("`{id}` is not a session id (they look like 20261201-190400-a1b2c3)")]
    BadId {
        /// What was given.
        id: String,
    },
    /// A new session's file name is taken already.
    #[error("{path} exists already")]
    Exists {
        /// The file.
        path: String,
    },
    /// Another run is writing this session now.
    #[error("{path} is being written by another run: continue it when that run has ended")]
    Busy {
        /// The file.
        path: String,
    },
    /// No session file with this id.
    #[error("no session {id} in this workspace (`agent-tutorial sessions list` shows them)")]
    NotFound {
        /// The id asked for.
        id: String,
    },
    /// `--continue` in a workspace without a session.
    #[error("no session to continue in this workspace")]
    NoSessions,
    /// The file holds more lines than a session file may.
    #[error("{path} holds more than {limit} lines: not a session file this harness wrote")]
    TooManyLines {
        /// The file.
        path: String,
        /// The bound.
        limit: usize,
    },
    /// The first line is not a header of this format and this id.
    #[error("{path} does not start with a session header: {reason}")]
    BadHeader {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A tool result answers no call, or a call is left unanswered before the next message:
    /// the history could not be sent as it is.
    #[error("{path} line {line}: {reason}; the file is refused")]
    Pairing {
        /// The file.
        path: String,
        /// The line (from 1).
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The writer reached a bound and stopped keeping the session.
    #[error("{path} stopped being recorded at a size bound: it cannot be continued exactly")]
    Truncated {
        /// The file.
        path: String,
    },
    /// No seal: this machine's harness never wrote the file.
    #[error(
        "{path} was not written by this harness on this machine (no seal for it): it is not used as the model's history; look at it yourself, or start a new session without --continue/--resume"
    )]
    Unsealed {
        /// The file.
        path: String,
    },
    /// The file's content is not what the harness last wrote.
    #[error(
        "{path} changed since this harness wrote it (its seal does not match): it is not used as the model's history; look at it yourself, or start a new session without --continue/--resume"
    )]
    Changed {
        /// The file.
        path: String,
    },
    /// The seal folder outside the workspace could not be read or written.
    #[error("session seal {path}: {source}")]
    Seal {
        /// The seal file or folder.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// A line could not be turned into JSON.
    #[error("cannot encode a session line: {0}")]
    Encode(#[source] serde_json::Error),
}
