//! Hooks written as shell commands: the command gets the event as JSON on stdin and answers
//! the JSON output of that event on stdout (empty stdout: no change).

use std::time::Duration;

use agent_workspace::Workspace;
use agent_workspace::process::{Command, Stdin};
use async_trait::async_trait;

use crate::error::HookError;
use crate::event::HookEvent;
use crate::output::HookOutput;
use crate::registry::Hook;

/// Bytes of a hook's stdout and stderr kept; a hook's answer is a small JSON object.
const HOOK_OUTPUT_CAP: usize = 1024 * 1024;

/// Runs `bash -c <command>` in the workspace for each event, under the same process
/// supervision as the `bash` tool: one deadline, bounded output, every process it started
/// killed when it ends.
#[derive(Debug, Clone)]
pub struct ShellHook {
    /// The name failures are reported under.
    pub name: String,
    /// The command line, run with `bash -c`.
    pub command: String,
    /// Where it runs (its working directory and sandbox).
    pub workspace: Workspace,
    /// How long one run may take before everything it started is killed.
    pub timeout: Duration,
}

#[async_trait]
impl Hook for ShellHook {
    fn name(&self) -> &str {
        &self.name
    }

    async fn run(&self, event: &HookEvent) -> Result<HookOutput, HookError> {
        let input =
            serde_json::to_vec(event).map_err(|source| HookError::EncodeEvent { source })?;
        let finished = Command::shell(&self.workspace, &self.command)
            .spawn(Stdin::Piped)
            .map_err(|source| HookError::Spawn {
                command: self.command.clone(),
                source,
            })?
            .run(Some(input), self.timeout, HOOK_OUTPUT_CAP)
            .await
            .map_err(|source| HookError::Supervise { source })?;
        let Some(status) = finished.status else {
            return Err(HookError::TimedOut {
                after: self.timeout,
            });
        };
        if !status.success() {
            return Err(HookError::Exited {
                status,
                stderr: finished.stderr.render(),
            });
        }
        // Parsed as the output of the event it was run for: the registry runs a hook only
        // for the event it was registered for.
        HookOutput::from_text(event.kind(), &finished.stdout.render())
    }
}
