//! [`JobError`]: why a job could not be started, found or read, and the tool failure the
//! model reads for it.

use agent_core::{FailureCode, ToolFailure};
use agent_workspace::PathError;

use crate::record::JOBS_DIR;

/// Why a job could not be started, found or read. Its text is the tool result the model
/// reads (`bash` in the background, `job_output`, `job_kill`).
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    // The sources' texts are in the messages: a tool result is one line, not a chain.
    /// The job's record file could not be written, so the job was not started.
    #[error("cannot record the job: {0}")]
    Record(#[source] PathError),
    /// The job's log could not be created, so the job was not started.
    #[error("cannot create the log of job {id}: {source}")]
    Log {
        /// The job.
        id: u64,
        /// What the boundary or the file system said.
        #[source]
        source: PathError,
    },
    /// The process could not be started (the record says so).
    #[error("cannot start job {id}: {source}")]
    Spawn {
        /// The job.
        id: u64,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The job's log could not be read for `job_output`.
    #[error("cannot read the log of job {id}: {source}")]
    ReadLog {
        /// The job.
        id: u64,
        /// What the boundary or the file system said.
        #[source]
        source: PathError,
    },
    /// Every id up to the store's bound is taken by a record on disk.
    #[error("no free job id in {JOBS_DIR}")]
    NoFreeId,
    /// The session already runs [`crate::MAX_RUNNING_JOBS`] jobs: one reply cannot start hundreds.
    #[error(
        "{running} background jobs are running, the most one session may run; wait for one to end or stop one with job_kill"
    )]
    TooMany {
        /// How many are running.
        running: usize,
    },
    /// The model named a job this session did not start (a record on disk from another
    /// session is not one of its jobs).
    #[error("there is no job {id} in this session{known}")]
    Unknown {
        /// The id the model gave.
        id: u64,
        /// The ids it could have given.
        known: KnownJobs,
    },
}

/// The ids of this session's jobs, for an error message (`; its jobs are 1, 2`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownJobs(pub Vec<u64>);

impl std::fmt::Display for KnownJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return f.write_str("; it has started none");
        }
        let ids: Vec<String> = self.0.iter().map(u64::to_string).collect();
        write!(f, "; its jobs are {}", ids.join(", "))
    }
}

impl From<JobError> for ToolFailure {
    /// A wrong id is the model's to fix; a path that leads out is `path_escape`; the rest
    /// failed while running.
    fn from(err: JobError) -> Self {
        let escape = matches!(
            &err,
            JobError::Record(PathError::Escape { .. })
                | JobError::Log {
                    source: PathError::Escape { .. },
                    ..
                }
        );
        let code = match &err {
            JobError::Unknown { .. } => FailureCode::InvalidArguments,
            _ if escape => FailureCode::PathEscape,
            _ => FailureCode::ToolExecutionError,
        };
        ToolFailure::new(code, err.to_string())
    }
}
