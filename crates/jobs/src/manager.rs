//! [`JobManager`]: starts background jobs, supervises them, and tells when they end.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use agent_core::{AgentEvent, AgentInbox, Events, InboxItem, InboxKind, Sender, ToolFailure};
use agent_workspace::process::{Child, Command, Ended, Killer, Output, Stdin, Stream};
use agent_workspace::{Clock, Inside, PathError, SystemClock, Workspace};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

use crate::error::{JobError, KnownJobs};
use crate::log::{JobLog, last_lines};
use crate::record::{self, JobRecord, JobStatus, KillReason, RecordError, log_path};

/// How long a job may run before it is killed, unless configured otherwise.
pub const DEFAULT_LIMIT: Duration = Duration::from_secs(10 * 60);
/// Bytes of output a job's log keeps, unless configured otherwise.
pub const DEFAULT_LOG_CAP: u64 = 1024 * 1024;
/// Lines of output a completion notice quotes.
const NOTICE_LINES: usize = 10;
/// Bytes read from the end of a log for `job_output`: the tool quotes lines, never a whole
/// log (which may have been swapped for a huge file).
const OUTPUT_READ: usize = 64 * 1024;

/// Limits of the jobs one session starts.
#[derive(Debug, Clone)]
pub struct JobConfig {
    /// A job running longer is killed with its whole process tree.
    pub limit: Duration,
    /// Bytes of output its log keeps; then a marker line, and later output is dropped.
    pub log_cap: u64,
    /// Measures how long a job ran (the notice's `elapsed`): the workspace's clock.
    pub clock: Arc<dyn Clock>,
}

impl Default for JobConfig {
    fn default() -> Self {
        Self {
            limit: DEFAULT_LIMIT,
            log_cap: DEFAULT_LOG_CAP,
            clock: Arc::new(SystemClock),
        }
    }
}

/// Where a job's end is told: the model through the agent's inbox (a notice stored before the
/// next request), the person through an [`AgentEvent::JobFinished`] event.
#[derive(Debug, Clone, Default)]
struct Tell {
    inbox: Arc<AgentInbox>,
    events: Events,
}

/// One job, shared by the manager and the task supervising it.
#[derive(Debug)]
struct Job {
    command: String,
    started: Instant,
    killer: Killer,
    log: Mutex<JobLog>,
    status: watch::Sender<JobStatus>,
    kill: Notify,
    kill_reason: Mutex<Option<KillReason>>,
}

/// The most background jobs one session runs at once (a reply once started 301).
pub const MAX_RUNNING_JOBS: usize = 16;

/// The background jobs of one session. Dropping it (the session ended) kills every job still
/// running, with its whole process tree.
///
/// ```
/// use agent_jobs::{JobConfig, JobManager, JobStatus};
/// use agent_workspace::Workspace;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// let jobs = JobManager::new(Workspace::new(dir.path()).unwrap(), JobConfig::default());
/// let id = jobs.start("echo built").unwrap();
/// assert_eq!(jobs.wait(id).await.unwrap(), JobStatus::Exited { code: 0 });
/// assert_eq!(jobs.output(id, 10).unwrap(), "job 1 ended: exit 0\nbuilt");
/// # });
/// ```
#[derive(Debug)]
pub struct JobManager {
    workspace: Workspace,
    config: JobConfig,
    jobs: Mutex<BTreeMap<u64, Arc<Job>>>,
    tell: Tell,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `path` inside the workspace (every path of this crate is one of the fixed job paths).
fn inside(workspace: &Workspace, path: &str) -> Result<Inside, PathError> {
    workspace.inside(path)
}

impl JobManager {
    /// A manager with no jobs yet, whose notices go nowhere until [`JobManager::inbox`] and
    /// [`JobManager::events`] say where.
    pub fn new(workspace: Workspace, config: JobConfig) -> Self {
        Self {
            workspace,
            config,
            jobs: Mutex::new(BTreeMap::new()),
            tell: Tell::default(),
        }
    }

    /// How many of this session's jobs are still running.
    fn running(&self) -> usize {
        lock(&self.jobs)
            .values()
            .filter(|job| job.status.borrow().is_running())
            .count()
    }

    /// Posts each completion notice to `inbox` (by default, one of the manager's own that no
    /// one reads).
    pub fn inbox(mut self, inbox: Arc<AgentInbox>) -> Self {
        self.tell.inbox = inbox;
        self
    }

    /// Tells `events` when a job ends ([`AgentEvent::JobFinished`]).
    pub fn events(mut self, events: Events) -> Self {
        self.tell.events = events;
        self
    }

    /// The limits it was built with.
    pub fn config(&self) -> &JobConfig {
        &self.config
    }

    /// Starts `command` in the background and returns its id. The record and the log exist
    /// before the process does; a job that cannot be recorded is not started.
    pub fn start(&self, command: &str) -> Result<u64, JobError> {
        // Checked before anything is recorded. One agent's calls run one after another, so
        // the count cannot be raced past by its own replies.
        let running = self.running();
        if running >= MAX_RUNNING_JOBS {
            return Err(JobError::TooMany { running });
        }
        let (id, mut record) = self.claim_id(command)?;
        let log = inside(&self.workspace, &record.log)
            .and_then(|path| self.workspace.write_new(&path, b"").map(|()| path))
            .map_err(|source| JobError::Log { id, source });
        let log = match log {
            Ok(log) => log,
            Err(err) => {
                record.status = JobStatus::FailedToStart;
                self.write_record(&record);
                return Err(err);
            }
        };
        let spawned = Command::shell(&self.workspace, command).spawn(Stdin::Null);
        let child = match spawned {
            Ok(child) => child,
            Err(source) => {
                record.status = JobStatus::FailedToStart;
                self.write_record(&record);
                return Err(JobError::Spawn { id, source });
            }
        };
        let started = self.config.clock.now();
        let deadline = Instant::now() + self.config.limit;
        let job = Arc::new(Job {
            command: command.to_string(),
            started,
            killer: child.killer(),
            log: Mutex::new(JobLog::new(
                self.workspace.clone(),
                log,
                self.config.log_cap,
            )),
            status: watch::Sender::new(JobStatus::Running),
            kill: Notify::new(),
            kill_reason: Mutex::new(None),
        });
        lock(&self.jobs).insert(id, job.clone());
        let supervisor = Supervisor {
            id,
            job,
            record,
            workspace: self.workspace.clone(),
            clock: self.config.clock.clone(),
            tell: self.tell.clone(),
        };
        tokio::spawn(supervisor.run(child, deadline));
        Ok(id)
    }

    /// The next free id, claimed under the jobs folder's lock by writing the job's record
    /// there first (see `record::claim`).
    fn claim_id(&self, command: &str) -> Result<(u64, JobRecord), JobError> {
        match record::claim(&self.workspace, command) {
            Ok(record) => Ok((record.id, record)),
            Err(RecordError::NoFreeId) => Err(JobError::NoFreeId),
            Err(RecordError::Path(err)) => Err(JobError::Record(err)),
        }
    }

    fn write_record(&self, record: &JobRecord) {
        write_record(&self.workspace, record);
    }

    fn job(&self, id: u64) -> Result<Arc<Job>, JobError> {
        let jobs = lock(&self.jobs);
        jobs.get(&id).cloned().ok_or_else(|| JobError::Unknown {
            id,
            known: KnownJobs(jobs.keys().copied().collect()),
        })
    }

    /// The job's status now.
    pub fn status(&self, id: u64) -> Result<JobStatus, JobError> {
        Ok(*self.job(id)?.status.borrow())
    }

    /// Waits until the job has ended, and returns how.
    pub async fn wait(&self, id: u64) -> Result<JobStatus, JobError> {
        let mut status = self.job(id)?.status.subscribe();
        // The sender lives in the job, which this receiver's job keeps alive: it cannot close.
        let ended = status.wait_for(|s| !s.is_running()).await;
        Ok(ended.map(|s| *s).unwrap_or(JobStatus::Signalled))
    }

    /// Kills a running job with its process tree (`job_kill`) and waits for it to end; a job
    /// that already ended is left as it is. Returns how it ended.
    pub async fn kill(&self, id: u64) -> Result<JobStatus, JobError> {
        let job = self.job(id)?;
        if job.status.borrow().is_running() {
            lock(&job.kill_reason).get_or_insert(KillReason::Requested);
            job.kill.notify_one();
        }
        self.wait(id).await
    }

    /// Its status line, then the last `lines` lines of its log (read from the end, bounded).
    pub fn output(&self, id: u64, lines: usize) -> Result<String, JobError> {
        let job = self.job(id)?;
        let status = *job.status.borrow();
        let path = inside(&self.workspace, &log_path(id))
            .map_err(|source| JobError::ReadLog { id, source })?;
        let read = |path: &Inside| {
            let file = self.workspace.open_regular(path)?;
            let from = file.len().saturating_sub(OUTPUT_READ as u64);
            file.read_at(from, OUTPUT_READ)
                .map_err(|source| PathError::Io {
                    op: agent_workspace::Op::Read,
                    path: path.to_string(),
                    source,
                })
        };
        let bytes = read(&path).map_err(|source| JobError::ReadLog { id, source })?;
        let text = last_lines(&String::from_utf8_lossy(&bytes), lines);
        let head = match status {
            JobStatus::Running => format!(
                "job {id} is running ({})",
                seconds(self.config.clock.now() - job.started)
            ),
            ended => format!("job {id} ended: {ended}"),
        };
        let body = if text.is_empty() {
            "(no output yet)"
        } else {
            &text
        };
        Ok(format!("{head}\n{body}"))
    }

    /// Kills every job still running, with its whole process tree, and records why.
    pub fn kill_all(&self, reason: KillReason) {
        let jobs: Vec<(u64, Arc<Job>)> = lock(&self.jobs)
            .iter()
            .map(|(id, job)| (*id, job.clone()))
            .collect();
        for (id, job) in jobs {
            if !job.status.borrow().is_running() {
                continue;
            }
            lock(&job.kill_reason).get_or_insert(reason);
            // Here, not only in the supervisor: when the session ends the runtime may be going
            // away too, and the supervisor may never run again.
            job.killer.kill();
            job.kill.notify_one();
            let record = JobRecord {
                id,
                command: job.command.clone(),
                status: JobStatus::Killed { reason },
                log: log_path(id),
                elapsed_ms: Some(millis(self.config.clock.now() - job.started)),
            };
            self.write_record(&record);
        }
    }
}

impl Drop for JobManager {
    fn drop(&mut self) {
        self.kill_all(KillReason::SessionEnded);
    }
}

/// `bash{command, run_in_background: true}` starts its command here.
impl agent_tools::BackgroundJobs for JobManager {
    fn start(&self, command: &str) -> Result<u64, ToolFailure> {
        Ok(JobManager::start(self, command)?)
    }
}

/// A job's output goes to its log, stdout and stderr interleaved in arrival order.
impl Output for Job {
    fn push(&self, _stream: Stream, bytes: &[u8]) {
        lock(&self.log).push(bytes);
    }
}

/// Waits for one job and reports its end.
struct Supervisor {
    id: u64,
    job: Arc<Job>,
    record: JobRecord,
    workspace: Workspace,
    clock: Arc<dyn Clock>,
    tell: Tell,
}

impl Supervisor {
    async fn run(mut self, child: Child, deadline: Instant) {
        let job = self.job.clone();
        let ended = child
            .supervise(job.clone(), None, deadline, job.kill.notified())
            .await;
        let elapsed = self.clock.now() - self.job.started;
        // A kill from outside the supervision (the session ending) shows as a signal here.
        let asked = *lock(&self.job.kill_reason);
        // A kill asked for after the job had already exited on its own (`job_kill` racing
        // the end) does not rewrite that exit: only a job that died by a signal was killed.
        let status = match (ended, asked) {
            (Ok(Ended::TimedOut), _) => JobStatus::Killed {
                reason: KillReason::TimeLimit,
            },
            (Ok(Ended::Stopped(())), asked) => JobStatus::Killed {
                reason: asked.unwrap_or(KillReason::Requested),
            },
            (Ok(Ended::Exited(status)), asked) => match (status.code(), asked) {
                (Some(code), _) => JobStatus::Exited { code },
                (None, Some(reason)) => JobStatus::Killed { reason },
                (None, None) => JobStatus::Signalled,
            },
            (Err(_), Some(reason)) => JobStatus::Killed { reason },
            (Err(_), None) => JobStatus::Signalled,
        };
        self.record.status = status;
        self.record.elapsed_ms = Some(millis(elapsed));
        write_record(&self.workspace, &self.record);
        self.announce(status, elapsed);
        self.job.status.send_replace(status);
    }

    /// The notice first, then the event: whoever is told the job ended knows the model will
    /// read its notice with its next request (a session, or a test, can act on the event).
    fn announce(&self, status: JobStatus, elapsed: Duration) {
        // The model asked for the kill and read the answer; a session that ended has no one
        // to tell.
        let told_already = matches!(
            status,
            JobStatus::Killed {
                reason: KillReason::Requested | KillReason::SessionEnded
            }
        );
        if !told_already {
            let tail = lock(&self.job.log).last_lines(NOTICE_LINES);
            let notice = InboxItem {
                from: Sender::Job(self.id),
                kind: InboxKind::JobNotice,
                request_id: None,
                body: notice(self.id, status, elapsed, tail).into_text(),
            };
            if let Err(err) = self.tell.inbox.post(notice) {
                tracing::warn!("job {}: its notice was not delivered: {err}", self.id);
            }
        }
        self.tell.events.emit(AgentEvent::JobFinished {
            id: self.id,
            command: self.job.command.clone(),
            status: status.to_string(),
            elapsed_ms: millis(elapsed),
        });
    }
}

fn write_record(workspace: &Workspace, record: &JobRecord) {
    if let Err(err) = record::write(workspace, record) {
        // The job itself is unaffected; only its record on disk is stale.
        tracing::warn!("job {}: cannot update its record: {err}", record.id);
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `4.2s`: how the notice and the person's line say how long a job ran.
pub fn seconds(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

/// The completion notice, laid out in its own file.
const NOTICE: agent_core::Template = agent_core::Template::new(
    agent_core::FragmentKind::JobNotice,
    include_str!("notice.md"),
);

/// The notice the model reads when a job ends: its id, status, time and the tail of its
/// output. The output is the job's (anything a command prints), escaped so it cannot close
/// the notice or forge another message.
fn notice(id: u64, status: JobStatus, elapsed: Duration, tail: String) -> agent_core::Fragment {
    let output = if tail.is_empty() {
        "(no output)".to_string()
    } else {
        tail
    };
    NOTICE
        .fill()
        .attr("id", id)
        .attr("status", status)
        .attr("elapsed", seconds(elapsed))
        .text("output", output)
        .render()
}
