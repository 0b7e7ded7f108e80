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
    /// A task's subject.
    Subject,
    /// A task's description.
    Description,
    /// A completion's result.
    Result,
    /// A release's reason.
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

/// A board call that failed. The messages are what the model and the person read: each says
/// what failed and what to do.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    /// No task has that id.
    #[error("there is no task {0}; list_tasks shows the ids")]
    NotFound(TaskId),
    /// A new task names a dependency that does not exist.
    #[error("task {blocker} cannot be waited for: there is no such task")]
    UnknownDependency {
        /// The missing task.
        blocker: TaskId,
    },
    /// A task names itself as a dependency.
    #[error("task {0} cannot wait for itself")]
    SelfDependency(TaskId),
    /// A dependency would close a cycle (the path, first task repeated at the end).
    #[error("that dependency would make a cycle: {path}", path = ids(.0))]
    Cycle(Vec<TaskId>),
    /// Over [`MAX_BLOCKED_BY`] dependencies.
    #[error("a task may wait for at most {MAX_BLOCKED_BY} others")]
    TooManyDependencies,
    /// An empty subject or result.
    #[error("the {0} must not be blank")]
    Blank(Field),
    /// A text over its bound.
    #[error("the {field} is too long (over {limit})")]
    TooLong {
        /// Which text.
        field: Field,
        /// The bound, with its unit.
        limit: String,
    },
    /// A line break or control character in a one-line text.
    #[error("the {0} must be one line without control characters")]
    NotOneLine(Field),
    /// The board holds [`MAX_TASKS`] tasks.
    #[error("the board is full ({MAX_TASKS} tasks)")]
    Full,
    /// The task waits for tasks not completed yet.
    #[error("task {task} is not ready: it waits for {by}", by = ids(.by))]
    Blocked {
        /// The task asked for.
        task: TaskId,
        /// What it still waits for, in id order.
        by: Vec<TaskId>,
    },
    /// The task is completed or cancelled.
    #[error("task {task} is {status}; only a pending task can be claimed")]
    NotPending {
        /// The task asked for.
        task: TaskId,
        /// Its status.
        status: Status,
    },
    /// Someone holds the task under a live lease.
    #[error("task {task} is held by {owner}")]
    AlreadyClaimed {
        /// The task asked for.
        task: TaskId,
        /// Its holder.
        owner: AgentId,
    },
    /// Another claimer is taking this task in this very instant (PostgreSQL's SKIP LOCKED).
    #[error("task {0} is being claimed by someone else right now; try another task")]
    Contended(TaskId),
    /// No task is pending with its dependencies completed.
    #[error("no task is ready to claim")]
    NothingReady,
    /// The claim's lease ran out (proposed code `task_lease_expired`).
    #[error(
        "the lease on task {0} ran out, so that claim is void; claim the task again (if it is still pending) before working on it"
    )]
    LeaseExpired(TaskId),
    /// The token is not the live claim of this caller on this task (proposed code
    /// `task_claim_mismatch`).
    #[error("that token is not the claim held on task {0} by you")]
    ClaimMismatch(TaskId),
    /// Another writer held the database past the busy timeout; nothing changed.
    #[error(
        "the board is busy: another writer held it for over {waited:?}; nothing was changed, try again"
    )]
    Busy {
        /// How long the call waited.
        waited: Duration,
    },
    /// Something other than a regular file is where the board file goes.
    #[error("the board file `{path}` is {kind}, not a regular file")]
    NotAFile {
        /// Workspace-relative.
        path: String,
        /// What is there.
        kind: FileKind,
    },
    /// The board file is not a database, or fails the integrity check; it is left as it is.
    #[error("the board file `{path}` is not a usable SQLite database: {source}")]
    Corrupt {
        /// Workspace-relative.
        path: String,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// The boundary refused the state folder, or a file operation in it failed.
    #[error("the board's state folder is not usable: {0}")]
    Path(#[from] PathError),
    /// SQLite failed.
    #[error("the board's database failed: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The PostgreSQL server or the connection to it failed.
    #[error("the board's PostgreSQL server failed: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    /// A PostgreSQL schema name we will not put in SQL.
    #[error("`{0}` is not a usable PostgreSQL schema name (use a-z, 0-9 and _, at most 63)")]
    SchemaName(String),
    /// A stored value no board of ours wrote (another program edited the database).
    #[error("the board holds a row it cannot read: {0}")]
    BadRow(String),
    /// The call's worker went away (a panic or a shutdown) or the OS had no randomness.
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
