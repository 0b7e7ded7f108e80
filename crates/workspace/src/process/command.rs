//! [`Command`]: what to run, with the environment scrubbed and the tree's handle recorded by
//! the spawn itself.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};

use agent_sandbox::{Level, Plan, Sandbox};

use super::tree::{Killer, Reach};
use super::{CALL_MARKER, inherits};
use crate::boundary::{Inside, Workspace};

static CALLS: AtomicU64 = AtomicU64::new(0);

/// When this process started its first command, in microseconds since the Unix epoch, in
/// base 36: with the pid, unique to this process among every process that had that pid.
fn started() -> &'static str {
    static STARTED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    STARTED.get_or_init(|| {
        let micros = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros());
        let mut n = micros;
        let mut digits = Vec::new();
        loop {
            digits.push(char::from_digit(u32::try_from(n % 36).unwrap_or(0), 36).unwrap_or('0'));
            n /= 36;
            if n == 0 {
                break;
            }
        }
        digits.iter().rev().collect()
    })
}

/// A command to run in the workspace: a program with its arguments (`git status`), or a shell
/// line ([`Command::shell`]). Its fields are private: every way of starting it goes through
/// [`Command::spawn`] or [`Command::spawn_stdio`], which scrub the environment, put it in its
/// own process group and keep what ends its whole tree.
#[derive(Debug, Clone)]
pub struct Command {
    program: OsString,
    args: Vec<OsString>,
    /// The workspace root: the sandbox's writable root, and the folder it starts in unless
    /// `dir` says otherwise.
    cwd: PathBuf,
    /// A folder inside the workspace to start in ([`Command::current_dir`]).
    dir: Option<PathBuf>,
    /// `Some`: only these of our variables are passed on ([`Command::env_only`]).
    allowed: Option<&'static [&'static str]>,
    envs: Vec<(OsString, OsString)>,
    /// Variables of this process the command must not see at all.
    removed: Vec<OsString>,
    /// `None`: the process's default ([`agent_sandbox::default_sandbox`]).
    sandbox: Option<Sandbox>,
}

/// What the command reads on stdin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdin {
    /// `/dev/null`.
    Null,
    /// A pipe: [`Child::supervise`] writes its input there, a [`super::StdioChild`] hands it out.
    Piped,
}

impl Command {
    /// `program` with `args`, run in the workspace root. No shell parses anything.
    pub fn argv<I, S>(workspace: &Workspace, program: impl AsRef<OsStr>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Self {
            program: program.as_ref().to_os_string(),
            args: args
                .into_iter()
                .map(|a| a.as_ref().to_os_string())
                .collect(),
            cwd: workspace.root().to_path_buf(),
            dir: None,
            allowed: None,
            envs: Vec::new(),
            removed: Vec::new(),
            sandbox: None,
        }
    }

    /// `bash -c <line>` in the workspace root.
    pub fn shell(workspace: &Workspace, line: &str) -> Self {
        Self::argv(workspace, "bash", ["-c", line])
    }

    /// Sets one more environment variable, unless [`inherits`] refuses its name (a caller
    /// cannot hand the model server's credentials to a command by accident either).
    pub fn env(mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        if inherits(&name.as_ref().to_string_lossy()) {
            self.envs
                .push((name.as_ref().to_os_string(), value.as_ref().to_os_string()));
        }
        self
    }

    /// Keeps the variable `name` of this process from the command (`GIT_DIR` inherited from a
    /// hook that started the agent would point `git` at another repository).
    pub fn env_remove(mut self, name: impl AsRef<OsStr>) -> Self {
        self.removed.push(name.as_ref().to_os_string());
        self
    }

    /// Starts the command in `folder` (a place inside `workspace`, the one it was made for)
    /// instead of the root; the sandbox still confines it to the whole workspace.
    pub fn current_dir(mut self, workspace: &Workspace, folder: &Inside) -> Self {
        self.dir = Some(workspace.root().join(folder.path()));
        self
    }

    /// Passes on only the variables named in `allowed` (those set here) of this process's
    /// environment, plus the ones given with [`Command::env`]: a program that is not ours to
    /// read (an MCP server) sees no token the user happens to have exported.
    pub fn env_only(mut self, allowed: &'static [&'static str]) -> Self {
        self.allowed = Some(allowed);
        self
    }

    /// Runs the command in `sandbox` instead of the process's default.
    pub fn sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// Starts the command with `stdin`, stdout and stderr piped, in its sandbox (through the
    /// helper, see `agent_sandbox`). It runs in its own process group, without the variables
    /// [`inherits`] refuses, marked with a fresh call id; the returned [`Child`] ends its whole
    /// tree when supervised to the end or dropped.
    pub fn spawn(self, stdin: Stdin) -> std::io::Result<Child> {
        let plan = self
            .sandbox
            .clone()
            .unwrap_or_else(agent_sandbox::default_sandbox)
            .plan();
        // The pid and this process's start time: a pid is reused once its process is gone,
        // and a killed helper's private folder (named after the marker) may still be there.
        let marker = format!(
            "{}-{}-{}",
            std::process::id(),
            started(),
            CALLS.fetch_add(1, Ordering::Relaxed)
        );
        let tmp = plan.private_tmp(&marker);
        let (program, args) = plan.argv(&self.cwd, tmp.as_deref(), &self.program, &self.args);
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args)
            .current_dir(self.dir.as_ref().unwrap_or(&self.cwd))
            .process_group(0)
            .kill_on_drop(true)
            .stdin(match stdin {
                Stdin::Null => Stdio::null(),
                Stdin::Piped => Stdio::piped(),
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, _) in std::env::vars_os() {
            let name_text = name.to_string_lossy();
            let allowed = self
                .allowed
                .is_none_or(|allowed| allowed.contains(&name_text.as_ref()));
            if !allowed || !inherits(&name_text) || self.removed.contains(&name) {
                cmd.env_remove(name);
            }
        }
        cmd.envs(self.envs.iter().map(|(k, v)| (k, v)))
            .env(CALL_MARKER, &marker);
        let child = cmd.spawn()?;
        // Recorded here, by the spawn itself: a leader nobody recorded would silently skip the
        // group kill.
        // In the namespaces the helper's init takes every process with it; elsewhere the
        // marker sweep has to find them.
        let reach = match plan.level {
            Level::Namespaces => Reach::Namespace,
            Level::Landlock | Level::Unconfined => Reach::Marker,
        };
        let killer = Killer::new(marker, child.id(), reach, tmp);
        Ok(Child {
            child,
            killer,
            plan,
        })
    }
}

/// A started [`Command`]: the process and the handle that ends everything it starts.
/// Dropping it kills the whole tree.
#[derive(Debug)]
pub struct Child {
    pub(super) child: tokio::process::Child,
    pub(super) killer: Killer,
    pub(super) plan: Plan,
}

impl Child {
    /// The leader's pid, while it has not been waited for.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// How it runs: the sandbox level enforced, its mode and network.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// A handle that ends the whole tree from anywhere (another thread, a `Drop`), without
    /// waiting for anything.
    pub fn killer(&self) -> Killer {
        self.killer.clone()
    }
}
