//! Hooks written as shell commands (chapter 4): the command gets the event as JSON on stdin
//! and answers a JSON [`HookResult`] on stdout (empty stdout: no change).

use std::process::Stdio;
use std::time::Duration;

use agent_core::hooks::{Hook, HookEvent, HookResult};
use async_trait::async_trait;

use agent_workspace::process::{Shell, shell};

use crate::Workspace;
use crate::bash::supervise;

/// Bytes of a hook's stdout and stderr kept; a hook's answer is a small JSON object.
const HOOK_OUTPUT_CAP: usize = 1024 * 1024;

struct Output {
    status: std::process::ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs `bash -c <command>` in the workspace for each event.
#[derive(Debug, Clone)]
pub struct ShellHook {
    pub name: String,
    pub command: String,
    pub workspace: Workspace,
    pub timeout: Duration,
}

#[async_trait]
impl Hook for ShellHook {
    fn name(&self) -> &str {
        &self.name
    }

    async fn run(&self, event: &HookEvent) -> Result<HookResult, String> {
        let input = serde_json::to_vec(event).map_err(|e| e.to_string())?;
        let Shell {
            mut command,
            mut tree,
        } = shell(&self.workspace, &self.command);
        let child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start `{}`: {e}", self.command))?;
        tree.set_leader(child.id());
        let finished = supervise(child, tree, Some(input), self.timeout, HOOK_OUTPUT_CAP)
            .await
            .map_err(|e| e.to_string())?;
        let Some(status) = finished.status else {
            return Err(format!("timed out after {}s", self.timeout.as_secs_f64()));
        };
        let output = Output {
            status,
            stdout: finished.stdout.render(),
            stderr: finished.stderr.render(),
        };
        if !output.status.success() {
            return Err(format!(
                "exited with {}: {}",
                output.status,
                output.stderr.trim()
            ));
        }
        let stdout = output.stdout;
        if stdout.trim().is_empty() {
            return Ok(HookResult::default());
        }
        serde_json::from_str(stdout.trim()).map_err(|e| format!("answered invalid JSON ({e})"))
    }
}
