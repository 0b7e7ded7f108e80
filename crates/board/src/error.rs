//! Everything a board call can fail with, as one typed error, and the kind of failure each is
//! for the model (`BoardError::kind`).

use std::fmt;
use std::time::Duration;

use agent_protocol::AgentId;
use agent_workspace::{FileKind, PathError};

use crate::model::{MAX_BLOCKED_BY, MAX_TASKS, Status, TaskId};

/// Which text field a check is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Subject,
    Description,
    Result,
    Reason,
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Subject => "subject",
            Self::Description => "description",
            Self::Result => "result",
            Self::Reason => "reason",
        })
    }
}

/// A board call that failed.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    #[error("there is no task {0}; list_tasks shows the ids")]
    NotFound(TaskId),
    #[error("task {blocker} cannot be waited for: there is no such task")]
    UnknownDependency { blocker: TaskId },
    #[error("task {0} cannot wait for itself")]
    SelfDependency(TaskId),
    #[error("that dependency would make a cycle: {path}", path = ids(.0))]
    Cycle(Vec<TaskId>),
    #[error("a task may wait for at most {MAX_BLOCKED_BY} others")]
    TooManyDependencies,
    #[error("the {0} must not be blank")]
    Blank(Field),
    #[error("the {field} is too long (over {limit})")]
    TooLong { field: Field, limit: String },
    #[error("the {0} must be one line without control characters")]
    NotOneLine(Field),
    #[error("the board is full ({MAX_TASKS} tasks)")]
    Full,
    #[error("task {task} is not ready: it waits for {by}", by = ids(.by))]
    Blocked { task: TaskId, by: Vec<TaskId> },
    #[error("task {task} is {status}; only a pending task can be claimed")]
    NotPending { task: TaskId, status: Status },
    #[error("task {task} is held by {owner}")]
    AlreadyClaimed { task: TaskId, owner: AgentId },
    #[error("task {0} is being claimed by someone else right now; try another task")]
    Contended(TaskId),
    #[error("no task is ready to claim")]
    NothingReady,
    #[error(
        "the lease on task {0} ran out, so that claim is void; claim the task again (if it is still pending) before working on it"
    )]
    LeaseExpired(TaskId),
    #[error("that token is not the claim held on task {0} by you")]
    ClaimMismatch(TaskId),
    #[error(
        "the board is busy: another writer held it for over {waited:?}; nothing was changed, try again"
    )]
    Busy { waited: Duration },
    #[error("the board file `{path}` is {kind}, not a regular file")]
    NotAFile { path: String, kind: FileKind },
    #[error("the board file `{path}` is not a usable SQLite database: {source}")]
    Corrupt {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("the board's state folder is not usable: {0}")]
    Path(#[from] PathError),
    #[error("the board's database failed: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("the board's PostgreSQL server failed: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    #[error("`{0}` is not a usable PostgreSQL schema name (use a-z, 0-9 and _, at most 63)")]
    SchemaName(String),
    #[error("the board holds a row it cannot read: {0}")]
    BadRow(String),
    #[error("the board call was interrupted: {0}")]
    Interrupted(String),
}

/// What a failure means for whoever called: the wiring step maps these to `FailureCode`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The claim's lease ran out: proposed code `task_lease_expired`.
    LeaseExpired,
    /// The token is not the live claim of this caller on this task: proposed code
    /// `task_claim_mismatch`.
    ClaimMismatch,
    /// The caller asked for something the board refuses (unknown task, not ready, taken,
    /// bad text): `invalid_arguments`.
    Refused,
    /// The board itself failed (file, server, busy): `tool_execution_error`.
    Storage,
}

impl ErrorKind {
    /// The failure code proposed for this kind (the first two are new).
    pub const fn proposed_code(self) -> &'static str {
        match self {
            Self::LeaseExpired => "task_lease_expired",
            Self::ClaimMismatch => "task_claim_mismatch",
            Self::Refused => "invalid_arguments",
            Self::Storage => "tool_execution_error",
        }
    }
}

impl BoardError {
    /// Which kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::LeaseExpired(_) => ErrorKind::LeaseExpired,
            Self::ClaimMismatch(_) => ErrorKind::ClaimMismatch,
            Self::NotFound(_)
            | Self::UnknownDependency { .. }
            | Self::SelfDependency(_)
            | Self::Cycle(_)
            | Self::TooManyDependencies
            | Self::Blank(_)
            | Self::TooLong { .. }
            | Self::NotOneLine(_)
            | Self::Full
            | Self::Blocked { .. }
            | Self::NotPending { .. }
            | Self::AlreadyClaimed { .. }
            | Self::Contended(_)
            | Self::NothingReady => ErrorKind::Refused,
            Self::Busy { .. }
            | Self::NotAFile { .. }
            | Self::Corrupt { .. }
            | Self::Path(_)
            | Self::Sqlite(_)
            | Self::Postgres(_)
            | Self::SchemaName(_)
            | Self::BadRow(_)
            | Self::Interrupted(_) => ErrorKind::Storage,
        }
    }
}

pub(crate) fn ids(ids: &[TaskId]) -> String {
    ids.iter()
        .map(TaskId::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
