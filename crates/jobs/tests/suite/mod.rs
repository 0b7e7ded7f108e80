mod attacks;
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
    let dir = tempfile::tempdir().unwrap();
    let mut config = JobConfig {
        clock: StepClock::new(Duration::from_millis(4200)),
        ..JobConfig::default()
    };
    adjust(&mut config);
    let jobs = JobManager::new(Workspace::new(dir.path()).unwrap(), config);
    (dir, Arc::new(jobs))
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
