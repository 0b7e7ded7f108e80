//! What extraction and consolidation save reaches every future prompt, so it is a write and
//! follows the write policy: asked where writes ask, refused under `--approve none`.
//!
//! There is no tool call to ask about: the model proposed the records in a side call. So the
//! session asks the agent's own permission gate about a call it makes up for the purpose —
//! `memory_write`, a write to `.memory/` whose summary names the records and whose detail is
//! each record's file as it would be saved — and saves only on `Allow`. The same rules, the
//! same approval provider and the same audit log decide it as any `write_file`.

use agent_core::{CallSummary, GateDecision, PermissionGate, PreparedCall, ToolEffect};
use serde_json::json;

use crate::record::MemoryRecord;
use crate::store::MEMORY_DIR;

/// The name the made-up call carries (in the approval question and the audit log).
pub const MEMORY_WRITE: &str = "memory_write";

/// The call the gate is asked about for saving `records`.
pub fn proposed_call(records: &[MemoryRecord]) -> PreparedCall {
    let names: Vec<&str> = records.iter().map(|r| r.name.as_str()).collect();
    let detail: Vec<String> = records
        .iter()
        .map(|r| {
            r.to_file_text()
                .unwrap_or_else(|err| format!("{}: {err}", r.name))
        })
        .collect();
    PreparedCall {
        call_id: MEMORY_WRITE.to_string(),
        name: MEMORY_WRITE.to_string(),
        arguments: json!({ "records": names }),
        effect: ToolEffect::Write,
        summary: CallSummary {
            text: format!("save to {MEMORY_DIR}/: {}", names.join(", ")),
            paths: vec![MEMORY_DIR.to_string()],
            detail: Some(detail.join("\n")),
        },
    }
}

/// The gate refused to let records be saved; its `Display` is the gate's reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Refused {
    /// Why, in the gate's words.
    pub reason: String,
}

/// `Ok` when the gate allows saving `records`, else why not.
pub async fn ask(gate: &dyn PermissionGate, records: &[MemoryRecord]) -> Result<(), Refused> {
    match gate.check(&proposed_call(records), &[]).await {
        GateDecision::Allow => Ok(()),
        GateDecision::Deny { reason } => Err(Refused { reason }),
    }
}
