//! [`Git`]: `git` run the one way the harness runs it — an argument list, never a shell line;
//! the repository's hooks, fsmonitor and pager off; no prompt for credentials; the C locale, so
//! messages and porcelain output parse the same everywhere; a deadline and bounded output,
//! through the workspace's process layer (the whole group ends on timeout).

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use agent_sandbox::{Mode, Network, Sandbox};
use agent_workspace::Workspace;
use agent_workspace::process::{Command, Stdin};

/// How long one `git` command may take: a worktree checkout of a large repository is the
/// slowest thing the crate runs.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(120);

/// The most output kept from one `git` command's stdout or stderr. A listing or a status that
/// does not fit is refused ([`GitError::OutputTooLarge`]) rather than parsed in part.
pub const GIT_OUTPUT_CAP: usize = 1 << 20;

/// Settings in front of every command: the repository's hooks (`post-checkout` would run code
/// nobody trusted), `core.fsmonitor` (a command the repository's config names) and any
/// transport (a submodule URL) are off.
const HARDENING: &[&str] = &[
    "--no-pager",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "protocol.allow=never",
    "-c",
    "submodule.recurse=false",
];

/// Variables that would point `git` somewhere else than the repository it is run in (set by a
/// hook or a script that started the agent).
const REDIRECTING: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "GIT_EDITOR",
    "GIT_PAGER",
];

/// Why a `git` command gave no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// `git` could not be started (not installed, or the sandbox helper failed).
    #[error("cannot run git {args}: {source}")]
    Spawn {
        /// The arguments after the hardening settings.
        args: String,
        /// What the spawn said.
        #[source]
        source: std::io::Error,
    },
    /// It ran past [`GIT_TIMEOUT`] and was killed with everything it started.
    #[error("git {args} did not finish in {}s and was stopped", .after.as_secs())]
    TimedOut {
        /// The arguments after the hardening settings.
        args: String,
        /// The deadline it missed.
        after: Duration,
    },
    /// It exited with a failure; `stderr` is git's own message.
    #[error("git {args} failed (exit code {code}): {stderr}")]
    Failed {
        /// The arguments after the hardening settings.
        args: String,
        /// The exit code (-1: ended by a signal).
        code: i32,
        /// What it wrote on stderr, trimmed.
        stderr: String,
    },
    /// Its output is over [`GIT_OUTPUT_CAP`].
    #[error("git {args} wrote more than {GIT_OUTPUT_CAP} bytes")]
    OutputTooLarge {
        /// The arguments after the hardening settings.
        args: String,
    },
}

/// What a `git` command that exited said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitOutput {
    /// Its exit code (-1: ended by a signal).
    pub code: i32,
    /// Its stdout (lossy UTF-8).
    pub stdout: String,
    /// Its stderr, trimmed.
    pub stderr: String,
}

/// Runs `git` in one repository's working tree.
#[derive(Debug, Clone)]
pub struct Git {
    workspace: Workspace,
    sandbox: Sandbox,
    timeout: Duration,
}

impl Git {
    /// `git` for the repository at the root of `workspace`, in the sandbox the harness's own
    /// git commands get ([`git_sandbox`] of the process's default).
    pub fn new(workspace: &Workspace) -> Self {
        Self::with_sandbox(workspace, git_sandbox(&agent_sandbox::default_sandbox()))
    }

    /// `git` in `sandbox`.
    pub fn with_sandbox(workspace: &Workspace, sandbox: Sandbox) -> Self {
        Self {
            workspace: workspace.clone(),
            sandbox,
            timeout: GIT_TIMEOUT,
        }
    }

    /// The same runner with another deadline per command.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The workspace the commands run in.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// Runs `git args…` (in `dir` when given, through `-C`) and returns its output whatever
    /// its exit code; only a command that could not run or finish is an error.
    pub async fn output(&self, dir: Option<&Path>, args: &[&str]) -> Result<GitOutput, GitError> {
        let shown = args.join(" ");
        let mut argv: Vec<OsString> = HARDENING.iter().map(OsString::from).collect();
        if let Some(dir) = dir {
            argv.push("-C".into());
            argv.push(dir.as_os_str().to_os_string());
        }
        argv.extend(args.iter().map(OsString::from));
        let mut command = Command::argv(&self.workspace, "git", argv)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("LC_ALL", "C")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .sandbox(self.sandbox.clone());
        for name in REDIRECTING {
            command = command.env_remove(name);
        }
        let spawn = |source| GitError::Spawn {
            args: shown.clone(),
            source,
        };
        let finished = command
            .spawn(Stdin::Null)
            .map_err(spawn)?
            .run(None, self.timeout, GIT_OUTPUT_CAP + 1)
            .await
            .map_err(spawn)?;
        let Some(status) = finished.status else {
            return Err(GitError::TimedOut {
                args: shown,
                after: self.timeout,
            });
        };
        if finished.stdout.total() > GIT_OUTPUT_CAP || finished.stderr.total() > GIT_OUTPUT_CAP {
            return Err(GitError::OutputTooLarge { args: shown });
        }
        Ok(GitOutput {
            code: status.code().unwrap_or(-1),
            stdout: finished.stdout.render(),
            stderr: finished.stderr.render().trim().to_string(),
        })
    }

    /// Runs `git args…` and returns its stdout; a failure is [`GitError::Failed`] with git's
    /// message.
    pub async fn run(&self, dir: Option<&Path>, args: &[&str]) -> Result<String, GitError> {
        let out = self.output(dir, args).await?;
        if out.code == 0 {
            Ok(out.stdout)
        } else {
            Err(GitError::Failed {
                args: args.join(" "),
                code: out.code,
                stderr: out.stderr,
            })
        }
    }
}

/// The sandbox the harness's own `git` commands run in, given the one the user chose: the
/// workspace with `.git/` writable and no network ([`Mode::RepositoryWrite`]), or no sandbox
/// when the user turned it off.
pub fn git_sandbox(chosen: &Sandbox) -> Sandbox {
    if chosen.mode == Mode::Off {
        return chosen.clone();
    }
    Sandbox {
        mode: Mode::RepositoryWrite,
        network: Network::Off,
        helper: chosen.helper.clone(),
    }
}
