//! `agent-jobs`: chapter 13's background jobs.
//!
//! `bash{command, run_in_background: true}` asks a [`JobManager`] to start the command and
//! returns at once. The manager
//!
//! 1. records the job first (`.agent_tutorial/jobs/<id>.json`, an atomic write through the
//!    workspace boundary) and creates its log (`<id>.log`), and only then spawns the process,
//!    through `agent_workspace::process::Command` and supervises it with the same
//!    `Child::supervise` as `bash` and the hooks (no credentials, its whole tree killed);
//! 2. copies the output into the log up to a cap ([`JobConfig::log_cap`]); past it the log ends
//!    with a marker line and later output is dropped (the last lines are still kept in memory
//!    for the notice);
//! 3. when the job ends, posts a completion notice to the agent's [`agent_core::AgentInbox`]
//!    (the runner stores it once before the next request) and tells the person through an
//!    [`agent_core::AgentEvent::JobFinished`] event;
//! 4. kills a job that outlives [`JobConfig::limit`], and every job still running when the
//!    manager is dropped (the session ended).

#![warn(missing_docs)]

mod error;
mod log;
mod manager;
mod record;
pub mod tools;

/// The workspace's clock, re-exported: [`JobConfig::clock`] is one.
pub use agent_workspace::{Clock, Sleep, SystemClock};
pub use error::{JobError, KnownJobs};
pub use manager::{
    DEFAULT_LIMIT, DEFAULT_LOG_CAP, JobConfig, JobManager, MAX_RUNNING_JOBS, seconds,
};
pub use record::{JOBS_DIR, JobRecord, JobStatus, KillReason};
