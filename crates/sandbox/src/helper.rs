//! The helper: the process the agent starts instead of the command. It dies with the agent,
//! sets the sandbox up, runs the command inside, and leaves with the command's status.
//!
//! ```text
//! agent ── helper (watches the agent) ── init, pid 1 (PDEATHSIG: the helper) ── command
//!          outside the namespaces         inside: reaps orphans; when it dies the kernel
//!                                         kills every process of the namespace
//! ```
//!
//! The helper watches the agent *process* through a pidfd rather than `PR_SET_PDEATHSIG`:
//! the parent-death signal fires when the *thread* that forked the helper ends, and a tokio
//! runtime may start commands from a thread that ends long before the agent does (a blocking
//! pool thread retires after ten idle seconds). The helper is single-threaded, so its own
//! children can use `PR_SET_PDEATHSIG`.
//!
//! It runs single-threaded before anything else in `main`, so forking it is safe.

use std::ffi::{OsStr, OsString};
use std::io::Write as _;
use std::os::unix::fs::DirBuilderExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};

use crate::check::PROBE_ARG;
use crate::mounts::{self, mount};
use crate::{Level, Mode, Network, rules};

/// The exit code of a helper that could not set the sandbox up (as `env` and `timeout` use
/// 125 for their own failures); its reason is on stderr, which the command's result shows.
const SETUP_FAILED: i32 = 125;

/// What the agent asked the helper to run (see `Plan::argv`).
struct Request {
    mode: Mode,
    network: Network,
    level: Level,
    parent: libc::pid_t,
    workspace: PathBuf,
    /// The private temporary folder to create (the agent chose it, so it can remove it too
    /// when it has to kill us).
    tmp: PathBuf,
    program: OsString,
    args: Vec<OsString>,
}

/// Runs the helper with the arguments after [`crate::HELPER_ARG`]; never returns.
pub fn run_helper(args: Vec<OsString>) -> ! {
    if args.first().map(OsString::as_os_str) == Some(OsStr::new(PROBE_ARG)) {
        std::process::exit(match probe() {
            Ok(()) => 0,
            Err(why) => {
                eprintln!("{why}");
                1
            }
        });
    }
    let request = match parse(args) {
        Some(request) => request,
        None => {
            die("usage: __agent-sandbox MODE NETWORK LEVEL PARENT WORKSPACE TMP -- PROGRAM [ARG…]")
        }
    };
    let agent = pidfd(request.parent).unwrap_or_else(|why| die(why));
    // SAFETY: prctl and setrlimit change only this process's own attributes.
    unsafe {
        // The agent may have died (and its pid been reused) before the pidfd was opened: we
        // would have been given to another parent first.
        if libc::getppid() != request.parent {
            libc::_exit(SETUP_FAILED);
        }
        libc::prctl(libc::PR_SET_DUMPABLE, 0);
        let zero = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &zero);
    }
    let tmp = request.tmp.clone();
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&tmp)
        .unwrap_or_else(|err| die(format!("cannot create a private temporary folder: {err}")));
    let status = match request.level {
        Level::Namespaces => in_namespaces(&request, &tmp, agent),
        Level::Landlock => landlocked(&request, &tmp, agent),
        Level::Unconfined => die("the helper is not used unconfined"),
    };
    // Outside the sandbox, after every process inside has ended: nothing can race the removal
    // (`remove_dir_all` does not follow symlinks).
    let _ = std::fs::remove_dir_all(&tmp);
    exit_like(status)
}

fn parse(args: Vec<OsString>) -> Option<Request> {
    let mut args = args.into_iter();
    let mut word = || args.next();
    let text = |w: Option<OsString>| w.and_then(|w| w.into_string().ok());
    let mode = text(word())?.parse().ok()?;
    let network = text(word())?.parse().ok()?;
    let level = Level::parse(&text(word())?)?;
    let parent = text(word())?.parse().ok()?;
    let workspace = PathBuf::from(word()?);
    let tmp = PathBuf::from(word()?);
    (word()? == "--").then_some(())?;
    let program = word()?;
    Some(Request {
        mode,
        network,
        level,
        parent,
        workspace,
        tmp,
        program,
        args: args.collect(),
    })
}

fn die(why: impl std::fmt::Display) -> ! {
    let _ = writeln!(std::io::stderr(), "agent-sandbox: {why}");
    // SAFETY: ends this process at once (a forked child must not run the parent's exit code).
    unsafe { libc::_exit(SETUP_FAILED) }
}

/// Why the helper could not set the sandbox up: the one line it prints (after
/// `agent-sandbox: `, or alone for the probe) before it gives up.
#[derive(Debug, thiserror::Error)]
enum SetupError {
    /// A system call failed; `what` says which step.
    #[error("{what}: {source}")]
    Os {
        /// The step, in words.
        what: &'static str,
        /// The system's error.
        source: std::io::Error,
    },
    /// Writing one of the new user namespace's id maps failed.
    #[error("cannot write {path}: {source}")]
    IdMap {
        /// The `/proc/self/…` file.
        path: &'static str,
        /// The system's error.
        source: std::io::Error,
    },
    /// The probe's namespace init could not make its mounts.
    #[error("the namespace's init failed")]
    ProbeInit,
}

impl SetupError {
    /// The system call just made failed at `what` (errno read now, before anything else).
    fn os(what: &'static str) -> Self {
        Self::Os {
            what,
            source: std::io::Error::last_os_error(),
        }
    }
}

/// Enters new user, mount and PID namespaces (and a network namespace when the network is
/// off) and maps our own user and group into them.
fn unshare(network: Network) -> Result<(), SetupError> {
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let mut flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID;
    if network == Network::Off {
        flags |= libc::CLONE_NEWNET;
    }
    // SAFETY: unshare only changes this (single-threaded) process's namespaces.
    if unsafe { libc::unshare(flags) } != 0 {
        return Err(SetupError::os("cannot create user namespaces"));
    }
    let write = |path: &'static str, text: String| {
        std::fs::write(path, text).map_err(|source| SetupError::IdMap { path, source })
    };
    // Same ids inside as outside: files the command creates belong to the user, as before.
    write("/proc/self/setgroups", "deny".to_string())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))
}

/// Forks; the child runs `child` and exits with its code, the parent gets the child's pid.
fn fork(child: impl FnOnce() -> i32) -> Result<libc::pid_t, SetupError> {
    // SAFETY: the helper is single-threaded, so the child may run ordinary code.
    match unsafe { libc::fork() } {
        -1 => Err(SetupError::os("cannot fork")),
        0 => {
            let code = child();
            // SAFETY: ends the child without running the parent's exit handlers.
            unsafe { libc::_exit(code) }
        }
        pid => Ok(pid),
    }
}

/// A pidfd of `pid`: readable once that process has ended.
fn pidfd(pid: libc::pid_t) -> Result<libc::c_int, SetupError> {
    // SAFETY: pidfd_open only returns a new descriptor (or an error).
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    libc::c_int::try_from(fd)
        .ok()
        .filter(|fd| *fd >= 0)
        .ok_or_else(|| SetupError::os("cannot watch the agent (pidfd_open)"))
}

/// Waits for our child `pid` like [`wait`], but if the agent ends first, kills the child
/// (and with it, for the init, the whole namespace), removes `tmp` and leaves at once.
fn wait_or_orphaned(pid: libc::pid_t, agent: libc::c_int, tmp: &Path) -> libc::c_int {
    let Ok(child) = pidfd(pid) else {
        return wait(pid);
    };
    let mut fds = [
        libc::pollfd {
            fd: child,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: agent,
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    loop {
        // SAFETY: polls the two descriptors in `fds`.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if ready < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        if ready > 0 && fds[1].revents != 0 && fds[0].revents == 0 {
            // SAFETY: kills our own child, which has not been reaped (its pidfd is not ready).
            unsafe { libc::kill(pid, libc::SIGKILL) };
            wait(pid);
            let _ = std::fs::remove_dir_all(tmp);
            // SAFETY: then the call's whole process group, ourselves included: the agent is
            // gone and nobody reads our status.
            unsafe { libc::kill(0, libc::SIGKILL) };
        }
        break wait(pid);
    }
}

/// Waits for `pid` and returns its raw wait status.
fn wait(pid: libc::pid_t) -> libc::c_int {
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child.
        let got = unsafe { libc::waitpid(pid, &mut status, 0) };
        if got == pid {
            return status;
        }
        if got == -1 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return SETUP_FAILED << 8;
        }
    }
}

/// The full sandbox: namespaces, a private `/proc`, `.git/` read-only, Landlock.
fn in_namespaces(request: &Request, tmp: &Path, agent: libc::c_int) -> libc::c_int {
    if let Err(why) = unshare(request.network) {
        die(why);
    }
    // The init hands the command's raw status back through this pipe (its own exit code
    // could not say "killed by signal N").
    let mut fds = [0; 2];
    // SAFETY: creates a pipe into `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        die(SetupError::os("cannot create a pipe"));
    }
    let [read_end, write_end] = fds;
    let init = fork(|| {
        // SAFETY: closes our copy of the read end.
        unsafe { libc::close(read_end) };
        init(request, tmp, write_end)
    })
    .unwrap_or_else(|why| die(why));
    // SAFETY: closes our copy of the write end, so the read below ends when the init does.
    unsafe { libc::close(write_end) };
    let init_status = wait_or_orphaned(init, agent, tmp);
    let mut raw = [0u8; 4];
    // SAFETY: reads at most 4 bytes into `raw`.
    let got = unsafe { libc::read(read_end, raw.as_mut_ptr().cast(), raw.len()) };
    if got == 4 {
        libc::c_int::from_ne_bytes(raw)
    } else {
        init_status
    }
}

/// Pid 1 of the new namespaces: sets up the mounts and Landlock, starts the command, reaps
/// every orphan, and leaves when the command does (the kernel then kills the rest).
fn init(request: &Request, tmp: &Path, report: libc::c_int) -> i32 {
    // SAFETY: prctl changes only this process; the helper cannot have died yet (it waits for
    // us), and if it dies later the kernel kills us, and with us the whole namespace.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    if let Err(why) = mounts::mounts(request.mode, &request.workspace) {
        die(why);
    }
    if let Err(why) = rules::restrict(request.mode, request.network, &request.workspace, tmp) {
        die(why);
    }
    // The init needs no capability after the mounts: a command cannot borrow them from it.
    // It may be dumpable again (the helper is not, and the init inherited that): its
    // environment is the scrubbed one, its memory the helper's own, and a command reading
    // `/proc/$PPID/environ` sees what it was given.
    drop_capabilities();
    // SAFETY: only this process's own attribute.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1) };
    let command = fork(|| exec(request, tmp)).unwrap_or_else(|why| die(why));
    loop {
        let mut status = 0;
        // SAFETY: reaps any child of ours (every orphan of the namespace is ours).
        let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
        if pid == command {
            let bytes = status.to_ne_bytes();
            // SAFETY: writes 4 bytes from `bytes` to the pipe the helper reads.
            unsafe { libc::write(report, bytes.as_ptr().cast(), bytes.len()) };
            return 0;
        }
        if pid == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD) {
            return SETUP_FAILED;
        }
    }
}

/// The fallback without namespaces: the command under Landlock, dying with the helper.
fn landlocked(request: &Request, tmp: &Path, agent: libc::c_int) -> libc::c_int {
    // SAFETY: getpid cannot fail.
    let helper = unsafe { libc::getpid() };
    let command = fork(|| {
        // SAFETY: prctl/getppid concern only this process.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != helper {
                return SETUP_FAILED;
            }
        }
        if let Err(why) = rules::restrict(request.mode, request.network, &request.workspace, tmp) {
            die(why);
        }
        exec(request, tmp)
    })
    .unwrap_or_else(|why| die(why));
    wait_or_orphaned(command, agent, tmp)
}

/// Runs the command: no capabilities left (also for root), `TMPDIR` the private folder.
fn exec(request: &Request, tmp: &Path) -> i32 {
    drop_capabilities();
    let err = std::process::Command::new(&request.program)
        .args(&request.args)
        .env("TMPDIR", tmp)
        .exec();
    let _ = writeln!(
        std::io::stderr(),
        "agent-sandbox: cannot run {}: {err}",
        request.program.to_string_lossy()
    );
    127
}

/// Empties the bounding, ambient, inheritable, permitted and effective sets, so even a
/// command running as root inside the user namespace has no capability there (it could
/// otherwise undo the read-only `.git` mount).
fn drop_capabilities() {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: each call changes only this process's capability sets (dropping is always
    // allowed; a capability already missing makes PR_CAPBSET_DROP fail, which is fine).
    unsafe {
        for cap in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap);
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        libc::syscall(libc::SYS_capset, &header, data.as_ptr());
    }
}

/// Leaves as the command did: the same exit code, or killed by the same signal.
fn exit_like(status: libc::c_int) -> ! {
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        // SAFETY: the default action, then the signal to ourselves; no core is written (the
        // core limit is 0 and we are not dumpable).
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::raise(signal);
        }
        std::process::exit(128 + signal);
    }
    std::process::exit(libc::WEXITSTATUS(status))
}

/// Tries the namespaces and a private `/proc` without running anything.
fn probe() -> Result<(), SetupError> {
    unshare(Network::Off)?;
    let child = fork(|| {
        match mount(None, "/", None, libc::MS_REC | libc::MS_PRIVATE).and_then(|()| {
            mount(
                Some("proc"),
                "/proc",
                Some("proc"),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            )
        }) {
            Ok(()) => 0,
            Err(err) => {
                let _ = writeln!(std::io::stderr(), "cannot mount a private /proc: {err}");
                1
            }
        }
    })?;
    let status = wait(child);
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        Ok(())
    } else {
        Err(SetupError::ProbeInit)
    }
}
