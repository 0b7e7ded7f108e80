//! Hooks written as shell commands (chapter 4): the command gets the event as JSON on stdin
//! and answers a JSON [`HookResult`] on stdout (empty stdout: no change).

use std::process::Stdio;
use std::time::Duration;

use agent_core::hooks::{Hook, HookEvent, HookResult};
use async_trait::async_trait;
use tokio::io::AsyncWriteExt;

use crate::bash::{kill_group, shell};
use crate::workspace::Workspace;

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
        let mut child = shell(&self.workspace, &self.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start `{}`: {e}", self.command))?;
        let pid = child.id();
        if let Some(mut stdin) = child.stdin.take() {
            // A hook that does not read its input is fine: ignore a broken pipe.
            let _ = stdin.write_all(&input).await;
        }
        let output = match tokio::time::timeout(self.timeout, child.wait_with_output()).await {
            Ok(output) => output.map_err(|e| e.to_string())?,
            Err(_) => {
                kill_group(pid);
                return Err(format!("timed out after {}s", self.timeout.as_secs_f64()));
            }
        };
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(format!("exited with {}: {}", output.status, stderr.trim()));
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        if stdout.trim().is_empty() {
            return Ok(HookResult::default());
        }
        serde_json::from_str(stdout.trim()).map_err(|e| format!("answered invalid JSON ({e})"))
    }
}
