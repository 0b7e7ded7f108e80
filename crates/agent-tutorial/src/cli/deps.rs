//! The CLI's implementations of the chapter 3–4 seams: asking on the terminal, the audit
//! file, and shell hooks from `.agent_tutorial/hooks.json`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_core::hooks::{HookEventKind, HookRegistry};
use agent_core::permissions::{
    ApprovalProvider, ApprovalRequest, AuditEntry, AuditSink, StaticApproval, escape_controls,
    wrap_escaped,
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
/// terminal, end of input, an error or anything but `y`/`yes` is a no. A summary too long for
/// one line is shown whole, wrapped (see [`question`]).
#[derive(Debug, Clone, Copy)]
pub struct TtyApproval;

/// Wrap width when the terminal does not say (or says something unusably small).
const FALLBACK_WIDTH: usize = 100;

/// The width of the terminal on stderr, else [`FALLBACK_WIDTH`].
fn terminal_width() -> usize {
    terminal_size::terminal_size_of(std::io::stderr())
        .map(|(terminal_size::Width(w), _)| usize::from(w))
        .filter(|w| *w >= 20)
        .unwrap_or(FALLBACK_WIDTH)
}

/// The approval question. It fits on one line when it can (`Allow bash ls -la? [y/N] `);
/// otherwise the tool is named on a line of its own and the summary follows, indented by two
/// spaces and wrapped at `width` so nothing is cut off:
///
/// ```text
/// Allow bash (212 characters):
///   ls -la; : xxxx…
///   xxxx; touch pwned
/// [y/N]
/// ```
///
/// `summary` is expected already escaped (the permission pipeline does it); it is escaped
/// again here anyway, which changes nothing for escaped text and keeps a provider fed by
/// other code from printing control characters.
pub fn question(request: &ApprovalRequest, width: usize) -> String {
    let tool = escape_controls(&request.tool);
    let summary = escape_controls(&request.summary);
    let single = format!("Allow {tool} {summary}? [y/N] ");
    if single.chars().count() <= width {
        return single;
    }
    let mut text = format!("Allow {tool} ({} characters):\n", summary.chars().count());
    for line in wrap_escaped(&summary, width.saturating_sub(2)) {
        text.push_str("  ");
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str("[y/N] ");
    text
}

#[cfg(test)]
mod question_tests {
    use super::*;

    fn request(tool: &str, summary: &str) -> ApprovalRequest {
        ApprovalRequest {
            tool: tool.into(),
            summary: summary.into(),
            reason: "running a command needs approval".into(),
        }
    }

    #[test]
    fn a_short_call_is_asked_on_one_line() {
        assert_eq!(
            question(&request("bash", "touch ran"), 100),
            "Allow bash touch ran? [y/N] "
        );
    }

    #[test]
    fn a_long_call_is_shown_whole_and_wrapped() {
        let command = format!("ls -la; : {}; touch pwned", "x".repeat(40));
        assert_eq!(
            question(&request("bash", &command), 32),
            [
                "Allow bash (63 characters):",
                "  ls -la; : xxxxxxxxxxxxxxxxxxxx",
                "  xxxxxxxxxxxxxxxxxxxx; touch pw",
                "  ned",
                "[y/N] ",
            ]
            .join("\n")
        );
    }

    #[test]
    fn control_characters_never_reach_the_terminal_raw() {
        assert_eq!(
            question(&request("bash", "ls\u{1b}[2K\rrm -rf x"), 100),
            "Allow bash ls\\e[2K\\rrm -rf x? [y/N] "
        );
    }
}

#[async_trait]
impl ApprovalProvider for TtyApproval {
    async fn approve(&self, request: &ApprovalRequest) -> Result<bool, String> {
        if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
            return Err("no terminal to ask on".into());
        }
        let question = question(request, terminal_width());
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

/// Appends each decision as one JSON line to `.agent_tutorial/audit.jsonl`.
#[derive(Debug)]
pub struct JsonlAudit {
    path: PathBuf,
    lock: Mutex<()>,
}

impl JsonlAudit {
    pub fn new(workspace: &Workspace) -> Self {
        Self {
            path: workspace.root().join(STATE_DIR).join("audit.jsonl"),
            lock: Mutex::new(()),
        }
    }

    fn append(&self, entry: &AuditEntry) -> std::io::Result<()> {
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut line = serde_json::to_string(entry)?;
        line.push('\n');
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        file.write_all(line.as_bytes())
    }
}

impl AuditSink for JsonlAudit {
    fn record(&self, entry: &AuditEntry) {
        if let Err(err) = self.append(entry) {
            tracing::warn!(path = %self.path.display(), "cannot write the audit log: {err}");
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
