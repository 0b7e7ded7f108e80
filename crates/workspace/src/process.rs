//! Processes the harness starts for the model (`bash`) and for the user's shell hooks: how they
//! are started ([`shell`]), supervised under one deadline ([`supervise`]) and ended
//! ([`ProcessTree`]).
//!
//! Two promises: a command never sees the model server's credentials, and when its call ends,
//! every process it started is gone — also the ones that left its process group with `setsid`
//! or were double-forked away from it. The process group alone cannot keep the second promise,
//! so each command carries a marker in its environment (`AGENT_TUTORIAL_CALL=<id>`), which every
//! descendant inherits; ending the call kills the group, then every process whose environment
//! carries the marker, until none is left.
//!
//! Not covered: a descendant that both clears its environment (`env -i`) and leaves the process
//! group. A cgroup per call would catch that too; it needs privileges a tutorial cannot assume.
//! (A child subreaper would make such orphans ours, but then we would have to reap them, and a
//! blanket `waitpid(-1)` steals the exit status tokio waits for.)

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use crate::boundary::Workspace;
use crate::capture::Capture;

/// The environment variable that marks every process one call started.
pub const CALL_MARKER: &str = "AGENT_TUTORIAL_CALL";

/// How many times the kill sweep looks again for marked processes (a process forking while
/// the first sweep runs is caught by the next).
const SWEEPS: usize = 5;

static CALLS: AtomicU64 = AtomicU64::new(0);

/// Whether an environment variable is passed to commands the model or a hook runs: the model
/// server's credentials are not, so `echo $OPENAI_API_KEY` cannot put the key into the
/// conversation, a transcript or an artifact file.
pub fn inherits(name: &str) -> bool {
    !name.starts_with("OPENAI_")
}

/// A command ready to spawn, and the handle that ends everything it will start.
#[derive(Debug)]
pub struct Shell {
    pub command: Command,
    pub tree: ProcessTree,
}

/// `bash -c <command>` in the workspace: its own process group, killed if dropped, without the
/// variables [`inherits`] refuses, marked with a fresh call id.
pub fn shell(workspace: &Workspace, command: &str) -> Shell {
    let marker = format!(
        "{}-{}",
        std::process::id(),
        CALLS.fetch_add(1, Ordering::Relaxed)
    );
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(command)
        .current_dir(workspace.root())
        .process_group(0)
        .kill_on_drop(true)
        .env(CALL_MARKER, &marker);
    for (name, _) in std::env::vars_os() {
        if !inherits(&name.to_string_lossy()) {
            cmd.env_remove(name);
        }
    }
    Shell {
        command: cmd,
        tree: ProcessTree {
            marker,
            leader: None,
            state: TreeState::Running,
        },
    }
}

/// Everything one call started. Dropping it kills them all, so a call that is cancelled or
/// returns early cannot leave a process behind.
#[derive(Debug)]
pub struct ProcessTree {
    marker: String,
    leader: Option<libc::pid_t>,
    state: TreeState,
}

/// Whether the tree was already killed, so dropping it does not sweep `/proc` a second time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TreeState {
    Running,
    Killed,
}

impl ProcessTree {
    /// Records the spawned command's pid (its process group id too).
    pub fn set_leader(&mut self, pid: Option<u32>) {
        self.leader = pid.and_then(|p| libc::pid_t::try_from(p).ok());
    }

    /// The value of [`CALL_MARKER`] this call's processes carry.
    pub fn marker(&self) -> &str {
        &self.marker
    }

    /// Kills the process group and every process carrying this call's marker. Returns how
    /// many marked processes were found outside the group's single signal.
    pub fn kill(&mut self) -> usize {
        self.state = TreeState::Killed;
        if let Some(pid) = self.leader {
            // SAFETY: killpg only sends a signal; the group id is the leader's pid because it
            // was spawned with `process_group(0)`. SIGKILL cannot be caught or ignored.
            unsafe {
                libc::killpg(pid, libc::SIGKILL);
            }
        }
        let needle = format!("{CALL_MARKER}={}", self.marker);
        let mut killed = 0;
        for _ in 0..SWEEPS {
            let marked = marked_processes(needle.as_bytes());
            if marked.is_empty() {
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

impl Drop for ProcessTree {
    fn drop(&mut self) {
        if self.state == TreeState::Running {
            self.kill();
        }
    }
}

/// Reads a pipe to the end into a shared bounded capture, so the child never blocks on a full
/// pipe and whatever arrived is still there if the reader has to be abandoned.
async fn drain<R: AsyncRead + Unpin>(pipe: Option<R>, capture: Arc<Mutex<Capture>>) {
    let Some(mut pipe) = pipe else {
        return;
    };
    let mut buf = [0u8; 8192];
    while let Ok(n) = pipe.read(&mut buf).await {
        if n == 0 {
            break;
        }
        capture
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(&buf[..n]);
    }
}

/// How long the pipes may stay open after every process of the call was killed. Only a
/// process that escaped the sweep (see `agent_workspace::process`) could hold them longer.
const PIPE_GRACE: Duration = Duration::from_millis(500);

/// What a supervised command left: its exit status (`None`: the deadline passed and it was
/// killed) and its bounded stdout and stderr.
#[derive(Debug)]
pub struct Finished {
    pub status: Option<std::process::ExitStatus>,
    pub stdout: Capture,
    pub stderr: Capture,
}

/// Waits for a spawned command under one deadline that covers its output too, feeding it
/// `input` on stdin if given. When it returns, every process the command started is dead.
pub async fn supervise(
    mut child: tokio::process::Child,
    mut tree: ProcessTree,
    input: Option<Vec<u8>>,
    timeout: Duration,
    cap: usize,
) -> std::io::Result<Finished> {
    let out = Arc::new(Mutex::new(Capture::new(cap)));
    let err = Arc::new(Mutex::new(Capture::new(cap)));
    let mut readers = tokio::task::JoinSet::new();
    readers.spawn(drain(child.stdout.take(), out.clone()));
    readers.spawn(drain(child.stderr.take(), err.clone()));
    if let (Some(mut stdin), Some(input)) = (child.stdin.take(), input) {
        // A command that does not read its input is fine: a broken pipe is ignored, and a full
        // pipe cannot block the call because this runs beside the deadline, not before it.
        readers.spawn(async move {
            let _ = stdin.write_all(&input).await;
        });
    }
    let status = tokio::time::timeout(timeout, child.wait()).await;
    // The leader has exited or the deadline passed: everything it started goes with it (a
    // `setsid sleep 200 &` would otherwise hold the pipes, and the call, for 200 s).
    tree.kill();
    if status.is_err() {
        let _ = child.wait().await;
    }
    // With every process gone the pipes close at once; only a process that escaped the sweep
    // could hold them, and it gets no more than a grace period.
    let reading = async { while readers.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(PIPE_GRACE, reading).await;
    readers.abort_all();
    let take = |c: Arc<Mutex<Capture>>| {
        std::mem::replace(
            &mut *c.lock().unwrap_or_else(PoisonError::into_inner),
            Capture::new(0),
        )
    };
    Ok(Finished {
        status: match status {
            Ok(status) => Some(status?),
            Err(_) => None,
        },
        stdout: take(out),
        stderr: take(err),
    })
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
