//! `bash{command}`: run a shell command in the workspace.
//!
//! The command runs in its own process group, marked so that everything it started can be
//! found (`agent_workspace::process`): when the call ends, by finishing or by its deadline,
//! every process it started is killed — a `sleep` in the background, a child that ignores
//! SIGTERM, one that left the group with `setsid`.

use std::sync::Arc;
use std::time::Duration;

use agent_core::tool::{parse_arguments, string_argument};
use agent_core::{CallSummary, PreparedCall, ToolEffect, ToolFailure, ToolHandler, ToolSpec};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use agent_workspace::process::{Command, Stdin};

use crate::Workspace;

/// Limits for `bash`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BashConfig {
    /// How long a command may run before its whole process group is killed.
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

/// What starts a command in the background for `bash{command, run_in_background: true}`.
/// Chapter 13's job manager implements it; this crate (chapter 1) does not depend on it.
pub trait BackgroundJobs: Send + Sync + std::fmt::Debug {
    /// Starts `command` as a job and returns its id; it runs after the call has returned.
    fn start(&self, command: &str) -> Result<u64, ToolFailure>;
}

/// Whether `bash` can start a command in the background (chapter 13 on).
#[derive(Debug, Clone, Default)]
pub enum Background {
    /// Chapters 1–12: `bash{command}` only, the schema they have always sent.
    #[default]
    Off,
    /// `bash{command, run_in_background: true}` hands the command to these jobs.
    On(Arc<dyn BackgroundJobs>),
}

const DESCRIPTION: &str = "Run a shell command with `bash -c` in the workspace directory. Returns stdout, then stderr, then the exit code when it is not 0.";

/// Chapters 1–12's `bash`.
pub fn spec() -> ToolSpec {
    spec_for(&Background::Off)
}

/// `bash` as `background` makes it: with it on, one more (optional) parameter.
pub fn spec_for(background: &Background) -> ToolSpec {
    let mut properties = json!({
        "command": {"type": "string", "description": "The command line to run.", "minLength": 1}
    });
    if let Background::On(_) = background {
        properties["run_in_background"] = json!({
            "type": "boolean",
            "description": "Start the command and return at once with a job id instead of waiting. You are told when it finishes; job_output shows its output so far, job_kill stops it."
        });
    }
    ToolSpec::new(
        BashTool::NAME,
        DESCRIPTION,
        ToolEffect::Execute,
        json!({
            "type": "object",
            "properties": properties,
            "required": ["command"]
        }),
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    command: String,
    /// Only in the schema when [`Background::On`]: with it off, the registry refuses the field
    /// before the handler runs.
    #[serde(default)]
    run_in_background: bool,
}

/// `bash`: runs `bash -c <command>` in the workspace, through the workspace's process
/// `Command` (no model-server credentials, the OS sandbox, the group killed at the end), and
/// returns its bounded output.
#[derive(Debug, Clone)]
pub struct BashTool {
    workspace: Workspace,
    config: BashConfig,
    background: Background,
}

impl BashTool {
    /// The tool's name, as the model calls it.
    pub const NAME: &'static str = "bash";

    /// A foreground-only `bash` (chapters 1–12) confined to `workspace`.
    pub fn new(workspace: Workspace, config: BashConfig) -> Self {
        Self {
            workspace,
            config,
            background: Background::Off,
        }
    }

    /// The same tool, able to start background jobs when `background` is on.
    pub fn background(mut self, background: Background) -> Self {
        self.background = background;
        self
    }
}

#[async_trait]
impl ToolHandler for BashTool {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: Args = parse_arguments(call)?;
        match (&self.background, args.run_in_background) {
            (Background::On(jobs), true) => {
                let id = jobs.start(&args.command)?;
                Ok(format!(
                    "started job {id} in the background; you will be told when it finishes; job_output{{\"id\": {id}}} shows its output so far"
                ))
            }
            _ => run(&self.workspace, &args.command, self.config).await,
        }
    }

    /// The command, whole: it is what runs. Its paths cannot be known without running it.
    fn describe(&self, arguments: &Value) -> CallSummary {
        CallSummary::text(string_argument(arguments, "command"))
    }
}

/// `bash -c <command>` in the workspace. One deadline covers the command and reading its
/// output; when the call ends, for whatever reason, every process it started is killed.
pub async fn run(
    workspace: &Workspace,
    command: &str,
    config: BashConfig,
) -> Result<String, ToolFailure> {
    let child = Command::shell(workspace, command)
        .spawn(Stdin::Null)
        .map_err(|err| ToolFailure::execution(format!("cannot start bash: {err}")))?;
    let hint = child.plan().refusal_hint();
    let finished = child
        .run(None, config.timeout, config.max_output_bytes)
        .await
        .map_err(|err| ToolFailure::execution(format!("bash failed: {err}")))?;
    let Some(status) = finished.status else {
        return Err(ToolFailure::execution(format!(
            "command timed out after {}s; every process it started was killed. Output so far:\n{}",
            config.timeout.as_secs_f64(),
            finished.stdout.render()
        )));
    };
    let mut text = finished.stdout.render();
    let err = finished.stderr.render();
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
    // The model cannot tell a sandbox refusal from any other failure; this line tells it, and
    // how the user can give more access.
    if let Some(hint) = hint.filter(|_| !status.success() && looks_refused(&text)) {
        text.push('\n');
        text.push_str(&hint);
    }
    if text.is_empty() {
        text.push_str("(no output)");
    }
    Ok(text)
}

/// The errors a sandbox refusal shows as: Landlock's `EACCES`, the read-only `.git` mount's
/// `EROFS`, `EPERM`, and a network namespace's unreachable network.
fn looks_refused(output: &str) -> bool {
    [
        "Permission denied",
        "Read-only file system",
        "Operation not permitted",
        "Network is unreachable",
    ]
    .iter()
    .any(|marker| output.contains(marker))
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
        .map(|n| agent_workspace::process::inherits(n))
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
            "Error [tool_execution_error]: command timed out after 0.5s; every process it started was killed. Output so far:\nstarted\n"
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
