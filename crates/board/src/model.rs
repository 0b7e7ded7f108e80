//! What the board holds: tasks, their statuses, claims and the tokens that fence them.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use agent_protocol::AgentId;
use serde::{Deserialize, Serialize};

/// Bounds checked on every write and on import, so nothing stored grows past what a reader
/// (a model's context, a terminal line) accepts.
pub const MAX_SUBJECT_CHARS: usize = 200;
/// The most bytes of a description.
pub const MAX_DESCRIPTION_BYTES: usize = 8_192;
/// The most bytes of a completion result or a release reason.
pub const MAX_RESULT_BYTES: usize = 16_384;
/// The most tasks one task may wait for.
pub const MAX_BLOCKED_BY: usize = 50;
/// The most tasks one board holds: `list` returns them all.
pub const MAX_TASKS: usize = 10_000;
/// The most claim records `history` returns for one task (the newest ones).
pub const MAX_HISTORY: usize = 1_000;
/// The default lease: long enough for a model turn with a few tool calls, and renewed while
/// the holder works.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(120);

/// A task's id: positive, assigned by the database, never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TaskId(pub i64);

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Milliseconds since the Unix epoch, on the board's clock (the injected one on SQLite, the
/// database server's on PostgreSQL).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
pub struct Millis(pub i64);

impl Millis {
    /// This instant plus `by` (saturating; a lease never wraps around).
    pub fn plus(self, by: Duration) -> Self {
        let by = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        Self(self.0.saturating_add(by))
    }
}

/// Where a task is in its life: chapter 12's four statuses and their stored names (the import
/// turns an imported `in_progress` back into `pending`: no claim came with it). On the board `in_progress` always has a claim and
/// the others never do; `cancelled` only comes from the import (the board's tools never cancel)
/// and never counts as done for the tasks waiting on it. A stored name that is none of the four
/// is an [`UnknownStatus`] (the schema's CHECK makes it a sign of a database someone else wrote).
pub use agent_tasks::{Status, UnknownStatus};

/// The secret a claim is fenced with: whoever completes, releases, renews or writes for a
/// claimed task shows it. 128 random bits after the claim's sequence number, so it is unique
/// by construction and cannot be guessed by another teammate.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ClaimToken(pub String);

impl ClaimToken {
    /// The token as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ClaimToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ClaimToken({})", self.0)
    }
}

impl fmt::Display for ClaimToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Who holds a task and until when, as everyone may see it (the token is not shown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// Who holds it.
    pub owner: AgentId,
    /// When the claim was made.
    pub claimed_at: Millis,
    /// The lease ends here: at `now >= expires_at` the task is pending again.
    pub expires_at: Millis,
}

/// One task as the board shows it. A lease that has run out shows as `pending` with no
/// holder, even before the next claim writes that down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// The task's id.
    pub id: TaskId,
    /// One line, at most [`MAX_SUBJECT_CHARS`] characters.
    pub subject: String,
    /// What done means (may be empty).
    pub description: String,
    /// Where it is in its life, as of the board's clock.
    pub status: Status,
    /// Tasks that must be completed before this one can be claimed, in id order.
    pub blocked_by: Vec<TaskId>,
    /// Who holds it, while it is claimed and the lease runs.
    pub holder: Option<Holder>,
    /// What the completing teammate reported.
    pub result: Option<String>,
    /// When it was created (imported tasks keep chapter 12's time).
    pub created_at: Millis,
    /// When it last changed.
    pub updated_at: Millis,
}

/// What a successful claim or renewal hands the holder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The task held.
    pub task: TaskId,
    /// Who holds it.
    pub owner: AgentId,
    /// The fencing token: shown to complete, release, renew and write.
    pub token: ClaimToken,
    /// When the claim was made.
    pub claimed_at: Millis,
    /// When the lease ends unless renewed.
    pub expires_at: Millis,
}

/// How a claim ended, in the token history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimEnd {
    /// The holder completed the task.
    Completed,
    /// The holder gave it back.
    Released,
    /// The lease ran out.
    Expired,
}

impl ClaimEnd {
    /// Every ending, in the order above.
    pub const ALL: [ClaimEnd; 3] = [Self::Completed, Self::Released, Self::Expired];

    /// The stored and shown name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Released => "released",
            Self::Expired => "expired",
        }
    }
}

impl fmt::Display for ClaimEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ClaimEnd {
    type Err = UnknownStatus;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|s| s.as_str() == text)
            .ok_or_else(|| UnknownStatus(text.to_string()))
    }
}

/// One entry of a task's claim history (every token ever issued for it, oldest first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRecord {
    /// The claim's place in the board-wide sequence of claims.
    pub seq: i64,
    /// The task claimed.
    pub task: TaskId,
    /// Who claimed it.
    pub owner: AgentId,
    /// The token issued.
    pub token: ClaimToken,
    /// When.
    pub claimed_at: Millis,
    /// The lease's last end (a renewal moves it).
    pub expires_at: Millis,
    /// `None` while the claim is held.
    pub ended: Option<(ClaimEnd, Millis)>,
    /// The release reason, when the holder gave a reason.
    pub reason: Option<String>,
}

/// A new task's fields.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NewTask {
    /// One line, at most [`MAX_SUBJECT_CHARS`] characters.
    pub subject: String,
    /// What done means (may be empty).
    pub description: String,
    /// Tasks that must be completed first; each must exist.
    pub blocked_by: Vec<TaskId>,
}

/// Which task a claim is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimTarget {
    /// This task (it must be ready).
    Task(TaskId),
    /// The oldest ready task, by creation order.
    OldestReady,
}

/// A chapter 12 task, checked, on its way into the board (see `import`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedTask {
    /// Chapter 12's id, kept.
    pub id: TaskId,
    /// The checked subject.
    pub subject: String,
    /// The checked description.
    pub description: String,
    /// Only `pending`, `completed` or `cancelled`: an imported task has no claim, so one that
    /// was in progress comes in pending.
    pub status: Status,
    /// Chapter 12's `blocked_by`.
    pub blocked_by: Vec<TaskId>,
    /// Chapter 12's creation time.
    pub created_at: Millis,
}

/// Lease and waiting settings of one board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoardConfig {
    /// How long a claim or a renewal holds the task.
    pub lease: Duration,
    /// How long SQLite waits for another writer before a call fails with `Busy`; on
    /// PostgreSQL, the `lock_timeout`.
    pub busy_timeout: Duration,
}

impl Default for BoardConfig {
    fn default() -> Self {
        Self {
            lease: DEFAULT_LEASE,
            busy_timeout: Duration::from_secs(5),
        }
    }
}
