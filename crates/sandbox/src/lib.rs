//! `agent-sandbox`: the OS sandbox every process started for the model runs in
//! (`docs/sandbox.md`; its place among the crates: `docs/architecture.md`).
//!
//! A command is not started directly: a small helper starts first — our own program re-run in
//! a sandbox mode ([`HELPER_ARG`]), as codex does with `codex-linux-sandbox` — sets up the
//! sandbox and then runs the command inside it:
//!
//! - **Namespaces** ([`Level::Namespaces`]): new user, PID and mount namespaces, and a network
//!   namespace unless the network is allowed. A fresh `/proc` shows only the command's own
//!   processes (not the agent, not its launcher); the helper's child is the namespace's init,
//!   reaps orphans, and when it dies the kernel kills everything inside — `setsid` and double
//!   forks included. The helper watches the agent through a pidfd, the init dies with the
//!   helper (`PR_SET_PDEATHSIG`): whatever kills the agent, SIGKILL included, ends every
//!   command. `.git/` is
//!   bind-mounted read-only in [`Mode::WorkspaceWrite`].
//! - **Landlock** on top: writes only to the workspace ([`Mode::WorkspaceWrite`]) and a
//!   private temporary folder, reads of the whole system, no signals to processes outside the
//!   sandbox, no TCP when the network is off.
//! - **Fallback that says what it lost** ([`Level::Landlock`], [`Level::Unconfined`]): one
//!   stderr line names what is not enforced ([`Level::warning`]).
//!
//! The agent itself is hardened by [`harden_agent`]: not dumpable (no `/proc/<agent>/mem`, no
//! ptrace by same-user processes) and no core file.

#![warn(missing_docs)]

mod check;
mod helper;
mod mounts;
mod rules;

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

pub use check::{NamespacesError, Support, support};
pub use helper::run_helper;

/// The first argument that makes one of our programs act as the sandbox helper.
pub const HELPER_ARG: &str = "__agent-sandbox";

/// The environment variable that forces a fallback level, for tests: `landlock` (no
/// namespaces) or `none` (no sandbox at all). Each fallback still prints its warning.
pub const FORCE_FALLBACK_ENV: &str = "AGENT_TUTORIAL_SANDBOX_FALLBACK";

/// What a sandboxed command may write.
///
/// ```
/// use agent_sandbox::Mode;
/// assert_eq!("read-only".parse::<Mode>(), Ok(Mode::ReadOnly));
/// assert_eq!(Mode::default().to_string(), "workspace-write");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Nothing but its private temporary folder (and `/dev/null`).
    ReadOnly,
    /// The workspace (except `.git/`) and its private temporary folder.
    #[default]
    WorkspaceWrite,
    /// The workspace with `.git/`, and its private temporary folder: for the harness's own
    /// `git` commands (a fixed argv, the repository's hooks off), which must write refs and
    /// worktree records. Never the mode of a command the model wrote.
    RepositoryWrite,
    /// No sandbox: the command runs as an ordinary process of the user.
    Off,
}

/// Whether a sandboxed command may use the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Network {
    /// No network: its own network namespace (only a loopback that is down), and Landlock
    /// refuses TCP.
    #[default]
    Off,
    /// The machine's network.
    On,
}

/// How much of the sandbox this machine enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Namespaces and Landlock: everything described in the crate documentation.
    Namespaces,
    /// Landlock, process groups and `PR_SET_PDEATHSIG`, without namespaces.
    Landlock,
    /// No sandbox: the process group and the marker sweep only.
    Unconfined,
}

/// Where the helper program is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum HelperPath {
    /// This program, when its `main` called [`enter_if_helper`] (every `agent-tutorial`
    /// binary does); otherwise there is none.
    #[default]
    ThisProgram,
    /// A program that handles [`HELPER_ARG`] (the `agent-sandbox` binary of this crate).
    At(PathBuf),
}

/// The sandbox commands run in: a mode, the network, and where the helper is.
///
/// ```
/// use agent_sandbox::{HelperPath, Mode, Network, Sandbox, default_sandbox, set_default};
///
/// // The default: writes to the workspace only, no network, this program as the helper.
/// let default = Sandbox { mode: Mode::WorkspaceWrite, network: Network::Off, helper: HelperPath::ThisProgram };
/// assert_eq!(Sandbox::default(), default);
///
/// // Chosen once, at start-up (the `--sandbox` flags); a second choice is refused.
/// let read_only = Sandbox { mode: "read-only".parse().unwrap(), ..Sandbox::default() };
/// assert!(set_default(read_only.clone()));
/// assert!(!set_default(Sandbox::default()));
/// assert_eq!(default_sandbox(), read_only);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sandbox {
    /// What a command may write.
    pub mode: Mode,
    /// Whether it may use the network.
    pub network: Network,
    /// Where the helper is.
    pub helper: HelperPath,
}

/// A word that is not a mode or a network setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{given}` (expected one of: {expected})")]
pub struct ParseError {
    what: &'static str,
    given: String,
    expected: &'static str,
}

impl Mode {
    /// The mode's name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::RepositoryWrite => "repository-write",
            Self::Off => "off",
        }
    }
}

impl FromStr for Mode {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        match s {
            "read-only" => Ok(Self::ReadOnly),
            "workspace-write" => Ok(Self::WorkspaceWrite),
            "repository-write" => Ok(Self::RepositoryWrite),
            "off" => Ok(Self::Off),
            _ => Err(ParseError {
                what: "sandbox mode",
                given: s.to_string(),
                expected: "read-only, workspace-write, repository-write, off",
            }),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Network {
    /// The setting's name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::On => "on",
        }
    }
}

impl FromStr for Network {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        match s {
            "off" => Ok(Self::Off),
            "on" => Ok(Self::On),
            _ => Err(ParseError {
                what: "network setting",
                given: s.to_string(),
                expected: "on, off",
            }),
        }
    }
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Self::Namespaces => "namespaces",
            Self::Landlock => "landlock",
            Self::Unconfined => "unconfined",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "namespaces" => Some(Self::Namespaces),
            "landlock" => Some(Self::Landlock),
            "unconfined" => Some(Self::Unconfined),
            _ => None,
        }
    }

    /// The one stderr line a fallback prints (once per process), naming what it does not
    /// enforce; `None` for the full sandbox.
    pub fn warning(self, why: &str) -> Option<String> {
        match self {
            Self::Namespaces => None,
            Self::Landlock => Some(format!(
                "sandbox: {why}; commands run under Landlock only — not enforced: a private /proc \
                 (the agent's processes stay visible), .git/ read-only, network off for UDP and \
                 local sockets, and the end of a process that leaves its group and clears its \
                 environment"
            )),
            Self::Unconfined => Some(format!(
                "sandbox: {why}; commands run unconfined — not enforced: file writes outside the \
                 workspace, .git/ read-only, network off, a private /proc, and the end of a \
                 process that leaves its group and clears its environment"
            )),
        }
    }
}

/// The sandbox chosen at start-up (the `--sandbox` flags); see [`set_default`].
static DEFAULT: OnceLock<Sandbox> = OnceLock::new();

/// Sets the sandbox every command of this process runs in unless it names its own. Chosen
/// once, at start-up: it must reach every place that starts a process for the model (bash,
/// jobs, hooks, later git and MCP) without each of them passing it along. Returns `false` if
/// it was set already (the first setting stays).
pub fn set_default(sandbox: Sandbox) -> bool {
    DEFAULT.set(sandbox).is_ok()
}

/// The sandbox set by [`set_default`], or [`Sandbox::default`] (workspace-write, network off).
pub fn default_sandbox() -> Sandbox {
    DEFAULT.get().cloned().unwrap_or_default()
}

/// Set by [`enter_if_helper`]: this program is its own helper.
static SELF_HELPER: AtomicBool = AtomicBool::new(false);

/// First thing in `main` of every program that can be the helper: if it was started as the
/// helper ([`HELPER_ARG`]), runs the helper and never returns; otherwise remembers that this
/// program can be its own helper ([`HelperPath::ThisProgram`]).
pub fn enter_if_helper() {
    let mut args = std::env::args_os();
    if args.nth(1).as_deref() == Some(OsStr::new(HELPER_ARG)) {
        run_helper(args.collect());
    }
    SELF_HELPER.store(true, Ordering::Relaxed);
}

/// Makes the agent's own memory unreachable for the commands it runs: not dumpable (its
/// `/proc/<pid>/mem`, `environ` and ptrace need root, not the same user) and a zero core
/// limit (`kill -QUIT` leaves no core file with the key in it). First thing in `main`.
pub fn harden_agent() {
    // SAFETY: prctl and setrlimit change only this process's own attributes.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        let zero = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &zero);
    }
}

/// How one command will run: the level enforced and, unless unconfined, the helper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// What is enforced.
    pub level: Level,
    /// The helper program (`None` when unconfined).
    pub helper: Option<PathBuf>,
    /// The mode (for the helper's arguments and a refused command's hint).
    pub mode: Mode,
    /// The network setting.
    pub network: Network,
}

/// The warnings already printed, so each fallback says what it lost once per process.
static WARNED: OnceLock<std::sync::Mutex<Vec<String>>> = OnceLock::new();

fn warn_once(line: String) {
    let warned = WARNED.get_or_init(Default::default);
    let mut warned = warned
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !warned.contains(&line) {
        eprintln!("{line}");
        warned.push(line);
    }
}

impl Sandbox {
    /// The sandbox for `mode` and `network`, with this program as its helper.
    pub fn new(mode: Mode, network: Network) -> Self {
        Self {
            mode,
            network,
            helper: HelperPath::ThisProgram,
        }
    }

    /// The same sandbox with the helper at `path`.
    pub fn with_helper(mut self, path: impl Into<PathBuf>) -> Self {
        self.helper = HelperPath::At(path.into());
        self
    }

    /// Decides how a command runs on this machine, printing the fallback's warning (once per
    /// process) when it cannot be fully enforced. [`Mode::Off`] is unconfined without a
    /// warning: the user asked for it.
    pub fn plan(&self) -> Plan {
        let unconfined = Plan {
            level: Level::Unconfined,
            helper: None,
            mode: self.mode,
            network: self.network,
        };
        if self.mode == Mode::Off {
            return unconfined;
        }
        let helper = match &self.helper {
            HelperPath::At(path) => Some(path.clone()),
            HelperPath::ThisProgram if SELF_HELPER.load(Ordering::Relaxed) => {
                Some(PathBuf::from("/proc/self/exe"))
            }
            HelperPath::ThisProgram => None,
        };
        let Some(helper) = helper else {
            if let Some(line) = Level::Unconfined.warning("no sandbox helper in this program") {
                warn_once(line);
            }
            return unconfined;
        };
        let (level, why) = choose_level(support(&helper));
        if let Some(line) = level.warning(&why) {
            warn_once(line);
        }
        Plan {
            level,
            helper: (level != Level::Unconfined).then_some(helper),
            mode: self.mode,
            network: self.network,
        }
    }
}

/// The level this machine supports, lowered by [`FORCE_FALLBACK_ENV`], and why it is lower.
fn choose_level(support: &Support) -> (Level, String) {
    let forced = std::env::var(FORCE_FALLBACK_ENV).ok();
    match forced.as_deref() {
        Some("none") => return (Level::Unconfined, format!("{FORCE_FALLBACK_ENV}=none")),
        Some("landlock") if support.landlock_abi.is_some() => {
            return (Level::Landlock, format!("{FORCE_FALLBACK_ENV}=landlock"));
        }
        _ => {}
    }
    match (&support.namespaces, support.landlock_abi) {
        (Ok(()), Some(_)) => (Level::Namespaces, String::new()),
        (Err(why), Some(_)) => (Level::Landlock, format!("no user namespaces ({why})")),
        (Ok(()), None) | (Err(_), None) => {
            (Level::Unconfined, "no Landlock in this kernel".to_string())
        }
    }
}

impl Plan {
    /// The private temporary folder of the call marked `marker` (`None` when unconfined). The
    /// helper creates it and removes it when the command ends; whoever kills the helper must
    /// remove it.
    pub fn private_tmp(&self, marker: &str) -> Option<PathBuf> {
        self.helper
            .as_ref()
            .map(|_| std::env::temp_dir().join(format!("agent-sandbox-{marker}")))
    }

    /// The program to start and its arguments: `program args…` itself when unconfined, else
    /// the helper with the sandbox's settings (and the private folder `tmp`) in front of them.
    pub fn argv(
        &self,
        workspace: &Path,
        tmp: Option<&Path>,
        program: &OsStr,
        args: &[OsString],
    ) -> (OsString, Vec<OsString>) {
        let (Some(helper), Some(tmp)) = (&self.helper, tmp) else {
            return (program.to_os_string(), args.to_vec());
        };
        let mut argv: Vec<OsString> = vec![
            HELPER_ARG.into(),
            self.mode.as_str().into(),
            self.network.as_str().into(),
            self.level.as_str().into(),
            std::process::id().to_string().into(),
            workspace.as_os_str().to_os_string(),
            tmp.as_os_str().to_os_string(),
            "--".into(),
            program.to_os_string(),
        ];
        argv.extend(args.iter().cloned());
        // The first argument is the helper's own: `run_helper` gets what follows it.
        (helper.clone().into_os_string(), argv)
    }

    /// The line a failed command's result gets when the sandbox may be why: what it refuses
    /// and how the user can give more access.
    pub fn refusal_hint(&self) -> Option<String> {
        if self.level == Level::Unconfined {
            return None;
        }
        let writes = match self.mode {
            Mode::ReadOnly => "every write to the disk (but the private temporary folder)",
            Mode::WorkspaceWrite | Mode::Off => "writes outside the workspace and to .git/",
            Mode::RepositoryWrite => "writes outside the workspace",
        };
        let network = match self.network {
            Network::Off => " and the network",
            Network::On => "",
        };
        Some(format!(
            "[the sandbox ({mode}, network {net}) refuses {writes}{network}; if the command needs \
             more, ask the user to rerun with more access (--sandbox workspace-write or off, \
             --sandbox-network on)]",
            mode = self.mode,
            net = self.network,
        ))
    }
}
