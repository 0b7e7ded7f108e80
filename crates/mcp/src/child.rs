//! Starting a server's program through the workspace's process layer: argv (no shell), its
//! own process group, the sandbox, a scrubbed environment, stderr kept bounded.

use agent_sandbox::Sandbox;
use agent_workspace::process::{Command, StdioChild};
use agent_workspace::{FileKind, Workspace};

use crate::config::ServerConfig;
use crate::error::{ConnectError, CwdProblem};

/// The variables of our own environment a server gets (plus its config's `env`): enough to
/// find programs, a home and a locale, and nothing the user exported for other programs (a
/// token, a key). The model server's credentials are refused by the process layer whatever
/// this says.
pub const ENV_ALLOWED: &[&str] = &[
    "HOME", "LOGNAME", "USER", "PATH", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR",
    "TZ",
];
/// The most of a server's stderr kept (head and tail): for diagnosing, never printed by us.
pub const STDERR_CAP: usize = 64 * 1024;
/// The longest JSON-RPC line taken from a server (rmcp's default is 16 MiB). A longer one is
/// dropped unread, so the call it answered ends at its tool timeout (`mcp_timeout`) and the
/// connection goes on.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Starts the server's program: argv (no shell), in `cwd` if configured, with only the
/// allowed variables of our environment plus the config's `env`.
pub(crate) fn spawn(
    workspace: &Workspace,
    alias: &str,
    server: &ServerConfig,
    sandbox: Option<Sandbox>,
) -> Result<StdioChild, ConnectError> {
    let mut command = Command::argv(workspace, &server.command, &server.args).env_only(ENV_ALLOWED);
    for (name, value) in &server.env {
        command = command.env(name, value);
    }
    if let Some(cwd) = &server.cwd {
        let problem = |reason| ConnectError::Cwd {
            alias: alias.to_string(),
            cwd: cwd.clone(),
            reason,
        };
        let folder = workspace
            .inside(cwd)
            .map_err(|err| problem(CwdProblem::Path(err)))?;
        match workspace.kind(&folder) {
            Ok(Some(FileKind::Directory)) => {}
            Ok(Some(_)) => return Err(problem(CwdProblem::NotAFolder)),
            Ok(None) => return Err(problem(CwdProblem::Missing)),
            Err(err) => return Err(problem(CwdProblem::Path(err))),
        }
        command = command.current_dir(workspace, &folder);
    }
    if let Some(sandbox) = sandbox {
        command = command.sandbox(sandbox);
    }
    command
        .spawn_stdio(STDERR_CAP)
        .map_err(|source| ConnectError::Spawn {
            alias: alias.to_string(),
            source,
        })
}
