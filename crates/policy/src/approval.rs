//! Asking a person. What was decided leaves the pipeline as an
//! [`agent_core::AgentEvent::PermissionDecided`] event; the audit log is one of its readers.

use async_trait::async_trait;

use agent_core::PreparedCall;

use crate::display::escape_controls;

/// What an approval provider is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The tool's name.
    pub tool: String,
    /// The tool's one-line summary of the call (the command, the path, …), escaped.
    pub summary: String,
    /// Why the pipeline asks (the asking rules' reasons), escaped.
    pub reason: String,
    /// Lines to show under the summary, each escaped: a write's content, an edit's diff
    /// (bounded by the tool, which says what it left out). Empty for most calls.
    pub detail: Vec<String>,
    /// Whether a remembered answer may answer this question.
    pub protection: Protection,
}

/// Whether an `ask` may be answered by something the user said before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protection {
    /// An ordinary question: a provider may remember an "always" for it.
    #[default]
    Ordinary,
    /// A write to `.git/`, the harness's state, hooks, skills or `.mcp.json`: it changes
    /// what runs next time, so it is asked every time, never from a remembered answer.
    AlwaysAsk,
}

/// A person's (or a fixed policy's) answer to an `ask`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// The call may run.
    Approved,
    /// The call does not run; the model is told it was declined.
    Declined,
}

/// Why no answer could be had. The pipeline treats it as a no (fail closed) and says why.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    /// There is nobody to ask: no terminal on stdin or stderr.
    #[error("no terminal to ask on")]
    NoTerminal,
    /// The person cancelled the question (Ctrl-C) instead of answering it.
    #[error("the question was cancelled")]
    Cancelled,
    /// Asking or reading the answer failed.
    #[error(transparent)]
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

impl ApprovalError {
    /// An [`ApprovalError::Failed`] from any error or message.
    pub fn failed(err: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Failed(err.into())
    }
}

/// Answers `ask`. Only `Ok(Approval::Approved)` lets the call run.
#[async_trait]
pub trait ApprovalProvider: Send + Sync {
    /// Asks about one call. An error is a no, with its reason told to the model.
    async fn approve(&self, request: &ApprovalRequest) -> Result<Approval, ApprovalError>;
}

/// The same answer every time: `--approve all` / `--approve none`, and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StaticApproval {
    /// Approve every `ask` (hard denies still hold: they never reach approval).
    ApproveAll,
    /// Decline every `ask`.
    DenyAll,
}

#[async_trait]
impl ApprovalProvider for StaticApproval {
    async fn approve(&self, _request: &ApprovalRequest) -> Result<Approval, ApprovalError> {
        Ok(match self {
            Self::ApproveAll => Approval::Approved,
            Self::DenyAll => Approval::Declined,
        })
    }
}

/// The tool's own summary of the call (the command for `bash`, the path for file tools, the
/// compact arguments for a tool that says nothing better): the whole text, never shortened,
/// with control and invisible characters escaped (see [`escape_controls`]), so what the user
/// approves is what runs.
pub fn summarize(call: &PreparedCall) -> String {
    escape_controls(&call.summary.text)
}

/// The tool's detail for the call (a write's content, an edit's diff) as escaped lines.
pub fn detail(call: &PreparedCall) -> Vec<String> {
    call.summary
        .detail
        .as_deref()
        .map(crate::display::detail_lines)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use agent_core::{CallSummary, ToolEffect};
    use serde_json::{Value, json};

    use super::*;

    fn prepared(name: &str, arguments: Value, summary: CallSummary) -> PreparedCall {
        PreparedCall {
            call_id: "c1".into(),
            name: name.into(),
            arguments,
            effect: ToolEffect::Execute,
            summary,
        }
    }

    #[test]
    fn the_summary_is_the_whole_command_with_controls_escaped() {
        let long = format!("ls -la; : {}; touch pwned", "x".repeat(200));
        assert_eq!(
            summarize(&prepared(
                "bash",
                json!({ "command": long }),
                CallSummary::text(&long)
            )),
            long
        );
        let command = "echo  hi\n\u{1b}[2K\rtouch pwned";
        assert_eq!(
            summarize(&prepared(
                "bash",
                json!({ "command": command }),
                CallSummary::text(command)
            )),
            r"echo  hi\n\e[2K\rtouch pwned"
        );
        let path = "notes\u{202e}txt.exe";
        assert_eq!(
            summarize(&prepared(
                "read_file",
                json!({ "path": path }),
                CallSummary::path(path)
            )),
            r"notes\u{202e}txt.exe"
        );
    }
}
