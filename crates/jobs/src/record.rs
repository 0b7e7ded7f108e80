//! What is known about a job, as stored in `.agent_tutorial/jobs/<id>.json`, and how a new
//! job claims its id: under the folder's lock ([`StateDir`]), one past the largest id with a
//! record or a log, bounded ([`agent_workspace::store::MAX_ID`]), and written create-only — two
//! sessions starting jobs in one workspace at once never share an id (32 of 120 starts failed
//! when each looked, then renamed).

use std::collections::BTreeSet;
use std::fmt;

use agent_workspace::store;
use agent_workspace::{Op, PathError, StateDir, StoreError, Workspace};
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
    Exited {
        /// The exit code.
        code: i32,
    },
    /// A signal from outside ended it.
    Signalled,
    /// The harness killed its whole process tree.
    Killed {
        /// Why the harness killed it: its time limit, `job_kill`, or the end of the session.
        reason: KillReason,
    },
    /// Recorded, but the process could not be started.
    FailedToStart,
}

impl JobStatus {
    /// Not ended yet: it counts towards [`crate::MAX_RUNNING_JOBS`] and can be killed.
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
    /// The job's number in this workspace, also its file name.
    pub id: u64,
    /// The command line, as the model gave it.
    pub command: String,
    /// Where it is in its life (rewritten when it ends).
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

/// Why a record could not be claimed or written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RecordError {
    #[error(transparent)]
    Path(PathError),
    #[error("no free job id in {JOBS_DIR}")]
    NoFreeId,
}

impl From<StoreError> for RecordError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Path(err) => Self::Path(err),
            // A JSON or naming failure is still a failure to write the record: one path
            // error that names the folder, so the tool result stays one line.
            other => Self::Path(PathError::Io {
                op: Op::Write,
                path: JOBS_DIR.to_string(),
                source: std::io::Error::other(other.to_string()),
            }),
        }
    }
}

impl From<PathError> for RecordError {
    fn from(err: PathError) -> Self {
        Self::Path(err)
    }
}

fn jobs_dir(workspace: &Workspace) -> StateDir {
    StateDir::new(workspace, JOBS_DIR)
}

/// `7.json` or `7.log` -> 7: every id with a file is taken. A name with an id past the bound
/// (a planted `18446744073709551615.json`) is not one of ours and takes nothing.
fn file_id(name: &str) -> Option<u64> {
    let stem = name
        .strip_suffix(".json")
        .or_else(|| name.strip_suffix(".log"))?;
    store::parse_id(stem)
}

/// Claims the next id under the folder's lock and writes the job's record (running) there,
/// create-only; the log is created empty beside it by the caller.
pub(crate) fn claim(workspace: &Workspace, command: &str) -> Result<JobRecord, RecordError> {
    let dir = jobs_dir(workspace);
    let lock = dir.lock()?;
    let taken: BTreeSet<u64> = lock
        .list()?
        .iter()
        .filter_map(|e| file_id(&e.name))
        .collect();
    let id = store::next_id(&taken).ok_or(RecordError::NoFreeId)?;
    let record = JobRecord {
        id,
        command: command.to_string(),
        status: JobStatus::Running,
        log: log_path(id),
        elapsed_ms: None,
    };
    lock.create_json(&format!("{id}.json"), &record)?;
    Ok(record)
}

/// Replaces the job's record with `record` (atomically; no lock needed: the id is this
/// session's, claimed above).
pub(crate) fn write(workspace: &Workspace, record: &JobRecord) -> Result<(), RecordError> {
    let path = workspace.inside(&record_path(record.id))?;
    let mut bytes = serde_json::to_vec_pretty(record).map_err(|err| {
        RecordError::from(StoreError::Encode {
            path: path.to_string(),
            source: err,
        })
    })?;
    bytes.push(b'\n');
    workspace.write_atomic(&path, &bytes, agent_workspace::Existing::Replace)?;
    Ok(())
}
