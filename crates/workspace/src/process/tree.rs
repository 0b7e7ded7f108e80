//! [`Killer`]: ends every process one call started, by its process group and its marker.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::CALL_MARKER;

/// How many times the kill sweep looks again for marked processes (a process forking while
/// the first sweep runs is caught by the next).
const SWEEPS: usize = 5;

/// How often [`Killer::ended`] looks again for processes still dying.
const SETTLE_POLL: Duration = Duration::from_millis(5);
/// How often, and how far apart, a killed call's private folder is tried again (see
/// [`remove_private_tmp`]): at most a tenth of a second, and only when a try failed.
const TMP_TRIES: usize = 50;
const TMP_RETRY: Duration = Duration::from_millis(2);

/// Ends everything one call started. Cheap to clone; when the last clone is dropped the tree
/// is killed, so a call that is cancelled or returns early cannot leave a process behind.
#[derive(Debug, Clone)]
pub struct Killer(Arc<Tree>);

/// How the tree's processes are found when it is killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reach {
    /// The leader is the sandbox helper: killing it kills the namespace's init, and the
    /// kernel kills everything inside. No search, whatever the machine runs.
    Namespace,
    /// The process group, then a sweep of `/proc` for the call's marker.
    Marker,
}

#[derive(Debug)]
struct Tree {
    marker: String,
    reach: Reach,
    /// The call's private temporary folder: the helper removes it when the command ends, but
    /// not when it is killed.
    tmp: Option<PathBuf>,
    /// The leader's pid, which is its process group id too (spawned with `process_group(0)`).
    leader: Option<libc::pid_t>,
    state: Mutex<TreeState>,
    /// Set when a kill sweep found no marked process alive: the tree has ended and
    /// [`Killer::ended`] need not look at `/proc` again (the sweep costs a read of every
    /// process on the machine).
    settled: AtomicBool,
}

/// Whether the tree was already killed, so a second kill (or the drop) does not sweep again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TreeState {
    Running,
    Killed,
}

impl Killer {
    pub(super) fn new(
        marker: String,
        leader: Option<u32>,
        reach: Reach,
        tmp: Option<PathBuf>,
    ) -> Self {
        Self(Arc::new(Tree {
            marker,
            reach,
            tmp,
            leader: leader.and_then(|p| libc::pid_t::try_from(p).ok()),
            state: Mutex::new(TreeState::Running),
            settled: AtomicBool::new(false),
        }))
    }

    /// Kills the process group and every process carrying this call's marker; a second call
    /// does nothing. Returns how many marked processes were found outside the group's signal.
    pub fn kill(&self) -> usize {
        self.0.kill()
    }

    /// Waits, at most `within`, until no process carrying this call's marker is alive, and
    /// says whether that point was reached. SIGKILL is delivered when the kernel next runs
    /// the target, so a process signalled by [`Killer::kill`] can still be running for a
    /// moment after it returns; a caller that promises "the tree has ended" (a closed MCP
    /// server about to be restarted on the same files) waits here. A namespace tree needs
    /// no wait: its init ends only after the kernel has reaped everything inside.
    pub async fn ended(&self, within: Duration) -> bool {
        if self.0.reach == Reach::Namespace || self.0.settled.load(Ordering::Acquire) {
            return true;
        }
        let needle = self.0.needle();
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if marked_processes(needle.as_bytes()).is_empty() {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(SETTLE_POLL).await;
        }
    }
}

impl Tree {
    /// The environment entry every process of this call carries.
    fn needle(&self) -> String {
        format!("{CALL_MARKER}={}", self.marker)
    }

    fn kill(&self) -> usize {
        {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            if *state == TreeState::Killed {
                return 0;
            }
            *state = TreeState::Killed;
        }
        if let Some(pid) = self.leader {
            // SAFETY: killpg only sends a signal; the group id is the leader's pid because it
            // was spawned with `process_group(0)`. SIGKILL cannot be caught or ignored.
            unsafe {
                libc::killpg(pid, libc::SIGKILL);
            }
        }
        if let Some(tmp) = &self.tmp {
            remove_private_tmp(tmp);
        }
        if self.reach == Reach::Namespace {
            return 0;
        }
        let needle = self.needle();
        let mut killed = 0;
        for _ in 0..SWEEPS {
            let marked = marked_processes(needle.as_bytes());
            if marked.is_empty() {
                self.settled.store(true, Ordering::Release);
                break;
            }
            for pid in marked {
                // SAFETY: kill only sends a signal to a process that carries our marker.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
                killed += 1;
            }
        }
        killed
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Pids of live (not zombie) processes whose environment holds `needle` as one entry.
fn marked_processes(needle: &[u8]) -> Vec<libc::pid_t> {
    let me = std::process::id();
    let Ok(proc_dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in proc_dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        // Only our own processes' environments are readable; others fail and are skipped.
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if !environ.split(|b| *b == 0).any(|var| var == needle) {
            continue;
        }
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|stat| {
                stat.rsplit_once(')')
                    .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
            })
            .unwrap_or(true);
        if let (false, Ok(pid)) = (zombie, libc::pid_t::try_from(pid)) {
            found.push(pid);
        }
    }
    found
}

/// Removes a killed call's private folder. Every process that could write there was just sent
/// SIGKILL, but a signal is delivered when the kernel next runs its target: one still writing
/// (a new entry), or the helper removing the same folder as it ends, makes a removal fail, and
/// the folder would outlive the call. So a failed removal is tried again, briefly; a folder
/// already gone (the command ended by itself and the helper removed it) is done.
fn remove_private_tmp(tmp: &Path) {
    for _ in 0..TMP_TRIES {
        match std::fs::remove_dir_all(tmp) {
            Ok(()) => return,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return,
            Err(_) => std::thread::sleep(TMP_RETRY),
        }
    }
}
