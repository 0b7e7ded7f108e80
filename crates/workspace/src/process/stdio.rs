//! [`StdioChild`]: a long-lived command spoken to over its stdin and stdout (an MCP server),
//! its stderr kept bounded, its whole tree killed when it is closed or dropped.

use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use tokio::process::{ChildStdin, ChildStdout};
use tokio::task::JoinHandle;

use super::command::{Child, Command, Stdin};
use super::supervise::{Captures, PIPE_GRACE, Stream, drain};
use super::tree::Killer;
use crate::capture::Capture;

/// How long [`StdioChild::close`] waits for the processes it sent SIGKILL to be gone.
/// Generous: on a loaded machine the kernel can take a while to schedule a dying process.
pub const CLOSE_SETTLE: Duration = Duration::from_secs(5);

/// A running command whose stdin and stdout belong to the caller. Dropping it kills the whole
/// tree; [`StdioChild::close`] does the same and says how the leader ended.
#[derive(Debug)]
pub struct StdioChild {
    child: tokio::process::Child,
    killer: Killer,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    stderr: Arc<Captures>,
    reader: JoinHandle<()>,
}

impl Command {
    /// Starts the command with piped stdin and stdout for the caller, and its stderr read in
    /// the background into a capture of `stderr_cap` bytes (a chatty server cannot grow it).
    /// Must be called inside a tokio runtime.
    pub fn spawn_stdio(self, stderr_cap: usize) -> std::io::Result<StdioChild> {
        let Child {
            mut child, killer, ..
        } = self.spawn(Stdin::Piped)?;
        let stderr = Arc::new(Captures::new(stderr_cap));
        let reader = tokio::spawn(drain(child.stderr.take(), Stream::Stderr, stderr.clone()));
        Ok(StdioChild {
            stdin: child.stdin.take(),
            stdout: child.stdout.take(),
            child,
            killer,
            stderr,
            reader,
        })
    }
}

impl StdioChild {
    /// The command's stdin, once.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// The command's stdout, once.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.stdout.take()
    }

    /// What the command wrote on stderr so far (bounded; a marker says what was cut).
    pub fn stderr(&self) -> Capture {
        self.stderr.snapshot(Stream::Stderr)
    }

    /// Ends the whole tree and returns how the leader ended (a signal, unless it had already
    /// exited by itself). When it returns, no process of the tree is running (it waits up to
    /// [`CLOSE_SETTLE`] for signalled processes to die; a process that outlives that is
    /// reported as an error, never ignored).
    pub async fn close(mut self) -> std::io::Result<ExitStatus> {
        self.killer.kill();
        let status = self.child.wait().await;
        if !self.killer.ended(CLOSE_SETTLE).await {
            return Err(std::io::Error::other(
                "a process of the closed command was still running after SIGKILL",
            ));
        }
        // Every process is gone, so stderr closes at once; the reader gets a grace period.
        let reader = &mut self.reader;
        let _ = tokio::time::timeout(PIPE_GRACE, reader).await;
        status
    }
}

impl Drop for StdioChild {
    fn drop(&mut self) {
        self.killer.kill();
        self.reader.abort();
    }
}
