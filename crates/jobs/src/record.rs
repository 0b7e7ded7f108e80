//! What is known about a job, as stored in `.agent_tutorial/jobs/<id>.json`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The folder, relative to the workspace root, holding every job's record and log.
pub const JOBS_DIR: &str = ".agent_tutorial/jobs";

/// Why a job was killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KillReason {
    /// It ran longer than [`crate::JobConfig::limit`].
    TimeLimit,
    /// The model asked (`job_kill`).
    Requested,
    /// The session ended while it ran.
    SessionEnded,
}

impl fmt::Display for KillReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::TimeLimit => "time limit",
            Self::Requested => "job_kill",
            Self::SessionEnded => "session ended",
        })
    }
}

/// Where a job is in its life. Its `Display` is the `status` of the completion notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum JobStatus {
    /// Recorded; the process was started (or is about to be: the record comes first).
    Running,
    /// The command exited with this code.
    Exited { code: i32 },
    /// A signal from outside ended it.
    Signalled,
    /// The harness killed its whole process tree.
    Killed { reason: KillReason },
    /// Recorded, but the process could not be started.
    FailedToStart,
}

impl JobStatus {
    pub fn is_running(self) -> bool {
        self == Self::Running
    }
}

impl fmt::Display for JobStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Running => f.write_str("running"),
            Self::Exited { code } => write!(f, "exit {code}"),
            Self::Signalled => f.write_str("killed by a signal"),
            Self::Killed { reason } => write!(f, "killed ({reason})"),
            Self::FailedToStart => f.write_str("failed to start"),
        }
    }
}

/// One job's record file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobRecord {
    pub id: u64,
    pub command: String,
    pub status: JobStatus,
    /// The log, relative to the workspace root.
    pub log: String,
    /// How long it ran, in milliseconds; set when it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
}

/// `.agent_tutorial/jobs/<id>.json`.
pub(crate) fn record_path(id: u64) -> String {
    format!("{JOBS_DIR}/{id}.json")
}

/// `.agent_tutorial/jobs/<id>.log`.
pub(crate) fn log_path(id: u64) -> String {
    format!("{JOBS_DIR}/{id}.log")
}
