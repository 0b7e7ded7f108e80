//! What a task is: the record stored in `.tasks/<id>.json`, its closed set of statuses, and
//! the ids people and models type (`3` or `"3"`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Bounds checked on every write, so no task file grows past what a read accepts.
/// The longest subject (it is one line of the prompt's `## tasks`).
pub const MAX_SUBJECT_CHARS: usize = 200;
/// The longest description.
pub const MAX_DESCRIPTION_BYTES: usize = 8_192;
/// The most tasks one task may wait for.
pub const MAX_BLOCKED_BY: usize = 50;
/// The longest owner name.
pub const MAX_OWNER_CHARS: usize = 100;

/// A task's id: sequential from 1, never reused (the store hands out the next one under its
/// lock).
pub type TaskId = u64;

/// Where a task stands: a closed set, so a typo from the model is an error naming the four.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not started.
    Pending,
    /// Someone works on it; only once every blocker is completed.
    InProgress,
    /// Done: the tasks it blocked may become ready.
    Completed,
    /// Dropped. It still blocks the tasks waiting for it: only a completed blocker lets
    /// them start.
    Cancelled,
}

impl Status {
    /// Every status, in the order the tools list them.
    pub const ALL: [Status; 4] = [
        Self::Pending,
        Self::InProgress,
        Self::Completed,
        Self::Cancelled,
    ];

    /// The name the model writes and the file stores (`in_progress`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
            Self::Cancelled => "cancelled",
        }
    }

    /// Pending or in progress: still to be done, so it shows in the prompt's `## tasks`.
    pub fn is_open(self) -> bool {
        matches!(self, Self::Pending | Self::InProgress)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A status name that is not one of the four.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a status; use pending, in_progress, completed or cancelled")]
pub struct UnknownStatus(pub String);

impl FromStr for Status {
    type Err = UnknownStatus;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|s| s.as_str() == text)
            .ok_or_else(|| UnknownStatus(text.to_string()))
    }
}

/// One task, as stored. `blocked_by` names tasks that must be completed before this one can
/// start; the graph of these edges is kept acyclic by the store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// Its id, also its file name.
    pub id: TaskId,
    /// One line: what the prompt's `## tasks` shows.
    pub subject: String,
    /// The details, shown by `task_get`.
    pub description: String,
    /// Where it stands.
    pub status: Status,
    /// Who took it, if anyone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The tasks that must be completed before this one can start.
    #[serde(default)]
    pub blocked_by: Vec<TaskId>,
    /// Seconds since the Unix epoch, from the store's clock.
    pub created: u64,
    /// When it last changed, in the same seconds.
    pub updated: u64,
}

/// An id argument that is neither a positive integer nor a string holding one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value} is not a task id; give the task's number, e.g. 3 or \"3\"")]
pub struct BadId {
    /// The argument as given (JSON).
    pub value: String,
}

/// Reads an id as a model sends it: `3`, `"3"` or `"#3"`. Anything else (`"../3"`, `3.5`,
/// `-1`, `0`) is refused, so an id can never name a path.
pub fn parse_id(value: &Value) -> Result<TaskId, BadId> {
    let bad = || BadId {
        value: value.to_string(),
    };
    let id = match value {
        Value::Number(n) => n.as_u64().ok_or_else(bad)?,
        Value::String(s) => {
            let digits = s.trim();
            let digits = digits.strip_prefix('#').unwrap_or(digits);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            digits.parse().map_err(|_| bad())?
        }
        _ => return Err(bad()),
    };
    if id == 0 {
        return Err(bad());
    }
    Ok(id)
}
