//! One supervision for every command: a deadline that covers its output too, its output
//! copied somewhere bounded, and its whole tree killed when it ends, whatever ended it.

use std::future::Future;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

use super::command::Child;
use crate::capture::Capture;

/// How long the pipes may stay open after every process of the call was killed. Only a
/// process that escaped the kill could hold them longer.
pub const PIPE_GRACE: Duration = Duration::from_millis(500);

/// Which of the command's output pipes a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// Where a supervised command's output goes, chunk by chunk as it arrives (both pipes are read
/// at once, so the command never blocks on a full pipe). It must stay bounded itself.
pub trait Output: Send + Sync + 'static {
    /// Takes one chunk read from `stream`.
    fn push(&self, stream: Stream, bytes: &[u8]);
}

/// Stdout and stderr each kept in a bounded [`Capture`].
#[derive(Debug)]
pub struct Captures {
    stdout: Mutex<Capture>,
    stderr: Mutex<Capture>,
}

impl Captures {
    /// Keeps up to `cap` bytes of each stream (head and tail).
    pub fn new(cap: usize) -> Self {
        Self {
            stdout: Mutex::new(Capture::new(cap)),
            stderr: Mutex::new(Capture::new(cap)),
        }
    }

    fn slot(&self, stream: Stream) -> std::sync::MutexGuard<'_, Capture> {
        match stream {
            Stream::Stdout => &self.stdout,
            Stream::Stderr => &self.stderr,
        }
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
    }

    /// What `stream` captured so far, leaving an empty capture behind.
    pub fn take(&self, stream: Stream) -> Capture {
        std::mem::replace(&mut *self.slot(stream), Capture::new(0))
    }

    /// A copy of what `stream` captured so far.
    pub fn snapshot(&self, stream: Stream) -> Capture {
        self.slot(stream).clone()
    }
}

impl Output for Captures {
    fn push(&self, stream: Stream, bytes: &[u8]) {
        self.slot(stream).push(bytes);
    }
}

/// How a supervised command ended. By the time it is returned, every process it started is
/// dead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended<S> {
    /// The leader exited (by itself or by a signal from inside).
    Exited(ExitStatus),
    /// The deadline passed and the tree was killed.
    TimedOut,
    /// The `stop` future completed first (with this value) and the tree was killed.
    Stopped(S),
}

/// What [`Child::run`] left: the exit status (`None`: the deadline passed and it was killed)
/// and its bounded stdout and stderr.
#[derive(Debug)]
pub struct Finished {
    /// How the leader exited; `None` when the deadline passed and the tree was killed.
    pub status: Option<ExitStatus>,
    /// Its standard output, bounded.
    pub stdout: Capture,
    /// Its standard error, bounded.
    pub stderr: Capture,
}

impl Child {
    /// Waits for the command until it exits, `deadline` passes or `stop` completes, copying
    /// its output into `output` and feeding it `input` on stdin if given. Whatever ended it,
    /// the whole tree is killed before this returns; the pipes then get [`PIPE_GRACE`] to
    /// close and the killed processes the same to be gone.
    pub async fn supervise<O, F>(
        mut self,
        output: Arc<O>,
        input: Option<Vec<u8>>,
        deadline: Instant,
        stop: F,
    ) -> std::io::Result<Ended<F::Output>>
    where
        O: Output,
        F: Future,
    {
        let mut readers = tokio::task::JoinSet::new();
        readers.spawn(drain(
            self.child.stdout.take(),
            Stream::Stdout,
            output.clone(),
        ));
        readers.spawn(drain(self.child.stderr.take(), Stream::Stderr, output));
        if let (Some(mut stdin), Some(input)) = (self.child.stdin.take(), input) {
            // A command that does not read its input is fine: a broken pipe is ignored, and a
            // full pipe cannot block the call because this runs beside the deadline.
            readers.spawn(async move {
                let _ = stdin.write_all(&input).await;
            });
        }
        let ended = tokio::select! {
            status = self.child.wait() => status.map(Ended::Exited),
            () = tokio::time::sleep_until(deadline) => Ok(Ended::TimedOut),
            value = stop => Ok(Ended::Stopped(value)),
        };
        // The leader has exited or must go: everything it started goes with it (a
        // `setsid sleep 200 &` would otherwise hold the pipes, and the call, for 200 s).
        self.killer.kill();
        if !matches!(ended, Ok(Ended::Exited(_))) {
            let _ = self.child.wait().await;
        }
        // With every process gone the pipes close at once; only a process that escaped the
        // kill could hold them, and it gets no more than a grace period. The same period lets
        // a signalled process that holds no pipe (`nohup … >/dev/null &`) finish dying, so
        // when this returns the tree has ended, not merely been signalled.
        let reading = async { while readers.join_next().await.is_some() {} };
        let settled = self.killer.ended(PIPE_GRACE);
        let _ = tokio::time::timeout(PIPE_GRACE, async { tokio::join!(reading, settled) }).await;
        readers.abort_all();
        ended
    }

    /// [`Child::supervise`] with a `timeout` and each stream captured up to `cap` bytes: what
    /// `bash` and the shell hooks need.
    pub async fn run(
        self,
        input: Option<Vec<u8>>,
        timeout: Duration,
        cap: usize,
    ) -> std::io::Result<Finished> {
        let captures = Arc::new(Captures::new(cap));
        let ended = self
            .supervise(
                captures.clone(),
                input,
                Instant::now() + timeout,
                std::future::pending::<()>(),
            )
            .await?;
        Ok(Finished {
            status: match ended {
                Ended::Exited(status) => Some(status),
                Ended::TimedOut | Ended::Stopped(()) => None,
            },
            stdout: captures.take(Stream::Stdout),
            stderr: captures.take(Stream::Stderr),
        })
    }
}

/// Reads a pipe to the end into `output`, so the child never blocks on a full pipe and
/// whatever arrived is kept if the reader has to be abandoned.
pub(super) async fn drain<R, O>(pipe: Option<R>, stream: Stream, output: Arc<O>)
where
    R: AsyncRead + Unpin,
    O: Output + ?Sized,
{
    let Some(mut pipe) = pipe else {
        return;
    };
    let mut buf = [0u8; 8192];
    while let Ok(n) = pipe.read(&mut buf).await {
        if n == 0 {
            break;
        }
        output.push(stream, &buf[..n]);
    }
}
