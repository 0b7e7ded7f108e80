//! Asking a person, and writing down what was decided.

use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;

use super::Behavior;
use super::display::escape_controls;
use crate::tool::PreparedCall;

/// What an approval provider is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    pub tool: String,
    /// A one-line summary of the call: the command, the path, or the compact arguments.
    pub summary: String,
    pub reason: String,
}

/// Answers `ask`. `Ok(true)` approves; `Ok(false)` and `Err` both deny (fail closed).
#[async_trait]
pub trait ApprovalProvider: Send + Sync {
    async fn approve(&self, request: &ApprovalRequest) -> Result<bool, String>;
}

/// The same answer every time: `--approve all` / `--approve none`, and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaticApproval(pub bool);

#[async_trait]
impl ApprovalProvider for StaticApproval {
    async fn approve(&self, _request: &ApprovalRequest) -> Result<bool, String> {
        Ok(self.0)
    }
}

/// One line of the audit log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditEntry {
    pub call_id: String,
    pub tool: String,
    pub arguments: Value,
    /// The merged behaviour before approval.
    pub merged: Behavior,
    /// Which participant decided.
    pub source: String,
    /// The final decision.
    pub allowed: bool,
    pub reason: String,
}

/// Receives every final decision.
pub trait AuditSink: Send + Sync {
    fn record(&self, entry: &AuditEntry);
}

/// Keeps entries in memory (tests, and callers that print them later).
#[derive(Debug, Default)]
pub struct MemoryAudit(Mutex<Vec<AuditEntry>>);

impl MemoryAudit {
    pub fn entries(&self) -> Vec<AuditEntry> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl AuditSink for MemoryAudit {
    fn record(&self, entry: &AuditEntry) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(entry.clone());
    }
}

/// Discards entries.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoAudit;

impl AuditSink for NoAudit {
    fn record(&self, _entry: &AuditEntry) {}
}

/// `ls -la` for bash, the path for file tools, else the compact arguments: the whole text,
/// never shortened, with control and invisible characters escaped (see [`escape_controls`]),
/// so what the user approves is what runs.
pub fn summarize(call: &PreparedCall) -> String {
    let text = ["command", "path", "pattern", "description"]
        .iter()
        .find_map(|key| call.arguments.get(*key).and_then(Value::as_str))
        .map(str::to_string)
        .unwrap_or_else(|| call.arguments.to_string());
    escape_controls(&text)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tool::ToolEffect;

    fn prepared(name: &str, arguments: Value) -> PreparedCall {
        PreparedCall {
            call_id: "c1".into(),
            name: name.into(),
            arguments,
            effect: ToolEffect::Execute,
        }
    }

    #[test]
    fn the_summary_is_the_whole_command_with_controls_escaped() {
        let long = format!("ls -la; : {}; touch pwned", "x".repeat(200));
        assert_eq!(
            summarize(&prepared("bash", json!({ "command": long }))),
            long
        );
        assert_eq!(
            summarize(&prepared(
                "bash",
                json!({"command": "echo  hi\n\u{1b}[2K\rtouch pwned"})
            )),
            r"echo  hi\n\e[2K\rtouch pwned"
        );
        assert_eq!(
            summarize(&prepared(
                "read_file",
                json!({"path": "notes\u{202e}txt.exe"})
            )),
            r"notes\u{202e}txt.exe"
        );
    }
}
