//! `bash{command}`: run a shell command in the workspace.
//!
//! The command runs in its own process group so that a timeout can kill everything it
//! started (a `sleep` in the background, a child that ignores SIGTERM), not just `bash`.

use std::process::Stdio;
use std::time::Duration;

use agent_core::{
    PreparedCall, ToolEffect, ToolFailure, ToolHandler, ToolSpec, tool::parse_arguments,
};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

use crate::output::Capture;
use crate::workspace::Workspace;

/// Limits for `bash`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BashConfig {
    pub timeout: Duration,
    /// Bytes of output kept (head and tail); the middle is replaced by a marker.
    pub max_output_bytes: usize,
}

impl Default for BashConfig {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(120),
            max_output_bytes: 100_000,
        }
    }
}

pub fn spec() -> ToolSpec {
    ToolSpec::new(
        "bash",
        "Run a shell command with `bash -c` in the workspace directory. Returns stdout, then stderr, then the exit code when it is not 0.",
        ToolEffect::Execute,
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line to run.", "minLength": 1}
            },
            "required": ["command"]
        }),
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    command: String,
}

#[derive(Debug, Clone)]
pub struct BashTool {
    workspace: Workspace,
    config: BashConfig,
}

impl BashTool {
    pub fn new(workspace: Workspace, config: BashConfig) -> Self {
        Self { workspace, config }
    }
}

#[async_trait]
impl ToolHandler for BashTool {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: Args = parse_arguments(call)?;
        run(&self.workspace, &args.command, self.config).await
    }
}

/// Reads a pipe to the end in bounded memory, so the child never blocks on a full pipe.
async fn drain<R: AsyncRead + Unpin>(pipe: Option<R>, cap: usize) -> Capture {
    let mut capture = Capture::new(cap);
    let Some(mut pipe) = pipe else {
        return capture;
    };
    let mut buf = [0u8; 8192];
    while let Ok(n) = pipe.read(&mut buf).await {
        if n == 0 {
            break;
        }
        capture.push(&buf[..n]);
    }
    capture
}

pub(crate) fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| libc::pid_t::try_from(p).ok()) {
        // SAFETY: killpg only sends a signal; the group id is the child's pid because the
        // child was spawned with `process_group(0)`. SIGKILL cannot be caught or ignored.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
}

/// Whether an environment variable is kept from commands the model (or a hook) runs: the
/// model-server credentials are not, so `echo $OPENAI_API_KEY` cannot put the key into the
/// conversation, a transcript or an artifact file.
pub fn inherits(name: &str) -> bool {
    !name.starts_with("OPENAI_")
}

/// `bash -c <command>` in the workspace, in its own process group (so a timeout can kill
/// everything it starts), killed if dropped, without the variables [`inherits`] refuses.
pub(crate) fn shell(workspace: &Workspace, command: &str) -> Command {
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(command)
        .current_dir(workspace.root())
        .process_group(0)
        .kill_on_drop(true);
    for (name, _) in std::env::vars_os() {
        if !inherits(&name.to_string_lossy()) {
            cmd.env_remove(name);
        }
    }
    cmd
}

pub async fn run(
    workspace: &Workspace,
    command: &str,
    config: BashConfig,
) -> Result<String, ToolFailure> {
    let mut child = shell(workspace, command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| ToolFailure::execution(format!("cannot start bash: {err}")))?;
    let pid = child.id();
    let cap = config.max_output_bytes;
    let stdout = tokio::spawn(drain(child.stdout.take(), cap));
    let stderr = tokio::spawn(drain(child.stderr.take(), cap));

    let status = match tokio::time::timeout(config.timeout, child.wait()).await {
        Ok(status) => {
            status.map_err(|err| ToolFailure::execution(format!("bash failed: {err}")))?
        }
        Err(_) => {
            kill_group(pid);
            let _ = child.wait().await;
            // Children that left the group could hold the pipes open: do not wait on them.
            let grace = Duration::from_millis(500);
            let partial = match tokio::time::timeout(grace, stdout).await {
                Ok(Ok(capture)) => capture.render(),
                _ => String::new(),
            };
            return Err(ToolFailure::execution(format!(
                "command timed out after {}s; its process group was killed. Output so far:\n{partial}",
                config.timeout.as_secs_f64()
            )));
        }
    };
    // The group leader exited; kill stragglers it left in the group so pipes close.
    kill_group(pid);
    let out = stdout.await.map(|c| c.render()).unwrap_or_default();
    let err = stderr.await.map(|c| c.render()).unwrap_or_default();

    let mut text = out;
    if !err.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&err);
    }
    match status.code() {
        Some(0) => {}
        Some(code) => text.push_str(&format!("\n[exit code: {code}]")),
        None => text.push_str("\n[killed by a signal]"),
    }
    if text.is_empty() {
        text.push_str("(no output)");
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        (dir, ws)
    }

    #[tokio::test]
    async fn runs_in_the_workspace_and_reports_exit_codes() {
        let (_d, ws) = ws();
        let out = run(&ws, "pwd; echo oops >&2; exit 3", BashConfig::default())
            .await
            .unwrap();
        assert_eq!(
            out,
            format!("{}\noops\n\n[exit code: 3]", ws.root().display())
        );
        assert_eq!(
            run(&ws, "true", BashConfig::default()).await.unwrap(),
            "(no output)"
        );
    }

    #[test]
    fn model_server_credentials_are_not_inherited() {
        let kept: Vec<bool> = [
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "PATH",
            "HOME",
            "MY_OPENAI_X",
        ]
        .iter()
        .map(|n| inherits(n))
        .collect();
        assert_eq!(kept, vec![false, false, true, true, true]);
    }

    #[tokio::test]
    async fn invalid_utf8_is_replaced() {
        let (_d, ws) = ws();
        let out = run(&ws, r"printf 'a\377b'", BashConfig::default())
            .await
            .unwrap();
        assert_eq!(out, "a\u{FFFD}b");
    }

    #[tokio::test]
    async fn output_is_capped_with_a_marker() {
        let (_d, ws) = ws();
        let config = BashConfig {
            max_output_bytes: 10,
            ..BashConfig::default()
        };
        let out = run(&ws, "printf '0123456789abcdefghij'", config)
            .await
            .unwrap();
        assert_eq!(
            out,
            "01234\n[... output truncated: 10 of 20 bytes omitted ...]\nfghij"
        );
    }

    #[tokio::test]
    async fn a_timeout_kills_the_whole_group_even_children_ignoring_sigterm() {
        let (dir, ws) = ws();
        let config = BashConfig {
            timeout: Duration::from_millis(500),
            ..BashConfig::default()
        };
        let script =
            "trap '' TERM; (trap '' TERM; sleep 30) & echo $! > child.pid; echo started; wait";
        let err = run(&ws, script, config).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "Error [tool_execution_error]: command timed out after 0.5s; its process group was killed. Output so far:\nstarted\n"
        );
        let pid: i32 = std::fs::read_to_string(dir.path().join("child.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The grandchild must be gone (or a zombie about to be reaped by init).
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|stat| !stat.contains(") Z "))
            .unwrap_or(false);
        assert!(!alive, "grandchild {pid} survived the timeout");
    }
}
