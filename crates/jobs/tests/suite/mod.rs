mod attacks;
mod background;
mod manager;
mod notice;
mod tools;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use agent_jobs::{Clock, JobConfig, JobManager};
use agent_workspace::Workspace;
use tempfile::TempDir;
use tokio::time::Instant;

/// A clock that moves `step` every time it is read: a job's start and end are one step
/// apart, so `elapsed` is known exactly.
#[derive(Debug)]
pub struct StepClock {
    base: Instant,
    step: Duration,
    reads: AtomicU32,
}

impl StepClock {
    pub fn new(step: Duration) -> Arc<Self> {
        Arc::new(Self {
            base: Instant::now(),
            step,
            reads: AtomicU32::new(0),
        })
    }
}

impl Clock for StepClock {
    fn now(&self) -> Instant {
        self.base + self.step * self.reads.fetch_add(1, Ordering::SeqCst)
    }

    fn wall(&self) -> std::time::SystemTime {
        std::time::SystemTime::UNIX_EPOCH
    }

    fn sleep_until(&self, deadline: Instant) -> agent_jobs::Sleep {
        Box::pin(tokio::time::sleep_until(deadline))
    }
}

/// A workspace and a manager over it whose jobs take 4.2 s by the clock.
pub fn manager() -> (TempDir, Arc<JobManager>) {
    manager_with(|_| {})
}

pub fn manager_with(adjust: impl FnOnce(&mut JobConfig)) -> (TempDir, Arc<JobManager>) {
    let (dir, jobs, _told) = told_manager_with(adjust);
    (dir, jobs)
}

/// Where a manager tells that a job ended: the model's inbox and the person's events.
pub struct Told {
    pub inbox: Arc<agent_core::AgentInbox>,
    pub events: Arc<agent_core::CollectingSink>,
}

impl Told {
    /// The bodies of the notices the next request would carry (each handed out once).
    pub fn notices(&self) -> Vec<String> {
        agent_core::Inbox::take(self.inbox.as_ref())
            .into_iter()
            .map(|item| item.body)
            .collect()
    }

    /// Every `JobFinished` event so far, as `(id, status, elapsed_ms)`.
    pub fn finished(&self) -> Vec<(u64, String, u64)> {
        self.events
            .events()
            .into_iter()
            .filter_map(|event| match event {
                agent_core::AgentEvent::JobFinished {
                    id,
                    status,
                    elapsed_ms,
                    ..
                } => Some((id, status, elapsed_ms)),
                _ => None,
            })
            .collect()
    }
}

pub fn told_manager_with(adjust: impl FnOnce(&mut JobConfig)) -> (TempDir, Arc<JobManager>, Told) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = JobConfig {
        clock: StepClock::new(Duration::from_millis(4200)),
        ..JobConfig::default()
    };
    adjust(&mut config);
    let told = Told {
        inbox: Arc::new(agent_core::AgentInbox::new()),
        events: Arc::new(agent_core::CollectingSink::new()),
    };
    let jobs = JobManager::new(Workspace::new(dir.path()).unwrap(), config)
        .inbox(told.inbox.clone())
        .events(agent_core::Events::new(told.events.clone()));
    (dir, Arc::new(jobs), told)
}

/// Whether the process is gone (or a zombie about to be reaped).
pub fn gone(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| stat.contains(") Z "))
        .unwrap_or(true)
}

/// A bounded poll for something a real short process does (no timing is asserted).
pub fn eventually(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..500 {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    done()
}

/// The pid a job wrote into `file`, once it has.
pub fn pid_in(dir: &Path, file: &str) -> i32 {
    let path = dir.join(file);
    assert!(eventually(
        || std::fs::read_to_string(&path).is_ok_and(|s| s.ends_with('\n'))
    ));
    std::fs::read_to_string(&path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}
