//! The CLI's implementations of the chapter 3–4 seams: asking on the terminal, the audit
//! file, and shell hooks from `.agent_tutorial/hooks.json`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_core::hooks::{HookEventKind, HookRegistry};
use agent_core::permissions::{
    ApprovalProvider, ApprovalRequest, AuditEntry, AuditSink, StaticApproval,
};
use agent_tools::Workspace;
use agent_tools::shell_hook::ShellHook;
use async_trait::async_trait;
use serde::Deserialize;

use super::{CliError, CliResult};

/// Where the CLI keeps its per-workspace files.
pub const STATE_DIR: &str = ".agent_tutorial";

/// How `ask` decisions are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ApproveMode {
    /// Ask on the terminal; without a terminal, deny.
    Prompt,
    /// Approve every `ask` (hard denies still hold).
    All,
    /// Deny every `ask`.
    None,
}

impl ApproveMode {
    pub fn provider(self) -> Arc<dyn ApprovalProvider> {
        match self {
            Self::Prompt => Arc::new(TtyApproval),
            Self::All => Arc::new(StaticApproval(true)),
            Self::None => Arc::new(StaticApproval(false)),
        }
    }
}

/// Asks `Allow <tool> <summary>? [y/N]` on stderr and reads the answer from stdin. No
/// terminal, end of input, an error or anything but `y`/`yes` is a no.
#[derive(Debug, Clone, Copy)]
pub struct TtyApproval;

#[async_trait]
impl ApprovalProvider for TtyApproval {
    async fn approve(&self, request: &ApprovalRequest) -> Result<bool, String> {
        if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
            return Err("no terminal to ask on".into());
        }
        let question = format!("Allow {} {}? [y/N] ", request.tool, request.summary);
        tokio::task::spawn_blocking(move || {
            eprint!("{question}");
            let _ = std::io::stderr().flush();
            let mut answer = String::new();
            match std::io::stdin().lock().read_line(&mut answer) {
                Ok(0) => Ok(false),
                Ok(_) => Ok(matches!(
                    answer.trim().to_ascii_lowercase().as_str(),
                    "y" | "yes"
                )),
                Err(err) => Err(err.to_string()),
            }
        })
        .await
        .map_err(|err| err.to_string())?
    }
}

/// Appends each decision as one JSON line to `.agent_tutorial/audit.jsonl`, through the
/// workspace boundary: a planted symlink (the folder or the file) is refused, never followed,
/// so a model-chosen call id cannot be appended to a file outside.
#[derive(Debug)]
pub struct JsonlAudit {
    workspace: Workspace,
    lock: Mutex<()>,
}

/// The audit log, relative to the workspace.
pub const AUDIT_FILE: &str = ".agent_tutorial/audit.jsonl";

impl JsonlAudit {
    pub fn new(workspace: &Workspace) -> Self {
        Self {
            workspace: workspace.clone(),
            lock: Mutex::new(()),
        }
    }

    fn append(&self, entry: &AuditEntry) -> anyhow::Result<()> {
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        let mut line = serde_json::to_string(entry)?;
        line.push('\n');
        let path = self.workspace.inside(AUDIT_FILE)?;
        self.workspace.append(&path, line.as_bytes())?;
        Ok(())
    }
}

impl AuditSink for JsonlAudit {
    fn record(&self, entry: &AuditEntry) {
        if let Err(err) = self.append(entry) {
            tracing::warn!("cannot write the audit log {AUDIT_FILE}: {err:#}");
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HookEntry {
    event: HookEventKind,
    #[serde(default)]
    matcher: Option<String>,
    command: String,
    #[serde(default = "default_timeout")]
    timeout_secs: f64,
}

fn default_timeout() -> f64 {
    10.0
}

/// Loads `.agent_tutorial/hooks.json` (a JSON array of `{event, matcher?, command,
/// timeout_secs?}`) into `hooks`. A missing file is no hooks; a malformed one is an error.
pub fn load_shell_hooks(workspace: &Workspace, hooks: &mut HookRegistry) -> CliResult<usize> {
    let path: PathBuf = workspace.root().join(STATE_DIR).join("hooks.json");
    if !Path::new(&path).is_file() {
        return Ok(0);
    }
    let text = std::fs::read_to_string(&path).map_err(CliError::usage)?;
    let entries: Vec<HookEntry> = serde_json::from_str(&text).map_err(|err| {
        CliError::usage(anyhow::anyhow!("{} is not valid: {err}", path.display()))
    })?;
    let count = entries.len();
    for (i, entry) in entries.into_iter().enumerate() {
        let hook = ShellHook {
            name: format!("hooks.json#{i}"),
            command: entry.command,
            workspace: workspace.clone(),
            timeout: Duration::from_secs_f64(entry.timeout_secs.max(0.1)),
        };
        hooks.register(entry.event, entry.matcher, Arc::new(hook));
    }
    Ok(count)
}
