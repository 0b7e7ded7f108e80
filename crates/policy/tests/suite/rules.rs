//! The built-in rules read a call through its tool's own description (summary and paths),
//! never by guessing argument names.

use std::sync::{Arc, Mutex};

use agent_core::{CallSummary, GateDecision, PermissionGate, PreparedCall, ToolEffect};
use agent_policy::{
    Approval, ApprovalError, ApprovalProvider, ApprovalRequest, Behavior, DestructiveCommands,
    EffectRule, MemoryAudit, PermissionPipeline, PermissionRule, SecretReads, Verdict,
    WorkspaceBoundary,
};
use agent_workspace::Workspace;
use serde_json::{Value, json};

/// A call to a tool whose arguments use names no rule knows (`target`, `cmd`).
fn call(effect: ToolEffect, arguments: Value, summary: CallSummary) -> PreparedCall {
    PreparedCall {
        call_id: "c1".into(),
        name: "custom".into(),
        arguments,
        effect,
        summary,
    }
}

/// Chapter 3's effect rules as the composition root adds them, with no one to ask: a change
/// to the harness's own state (`ToolEffect::State`) is neither a write nor a command, so it
/// runs; a write is asked about and, unanswered, denied.
#[tokio::test]
async fn a_state_change_is_not_asked_about_where_writes_are() {
    let pipeline = PermissionPipeline::new(Arc::new(MemoryAudit::default()))
        .rule(Arc::new(EffectRule::new(
            "execute_asks",
            ToolEffect::Execute,
            Behavior::Ask,
            "running a command needs approval",
        )))
        .rule(Arc::new(EffectRule::new(
            "writes_ask",
            ToolEffect::Write,
            Behavior::Ask,
            "changing a file needs approval",
        )));
    let mut decisions = Vec::new();
    for effect in [ToolEffect::State, ToolEffect::Write] {
        let call = call(effect, json!({}), CallSummary::text("x"));
        decisions.push(pipeline.check(&call, &[]).await);
    }
    assert_eq!(
        decisions,
        [
            GateDecision::Allow,
            GateDecision::Deny {
                reason: "changing a file needs approval; no approval provider, so denied (by writes_ask)"
                    .into()
            },
        ]
    );
}

#[test]
fn the_boundary_checks_the_paths_the_tool_lists() {
    let dir = tempfile::tempdir().unwrap();
    let rule = WorkspaceBoundary(Workspace::new(dir.path()).unwrap());
    let verdicts: Vec<Verdict> = [
        call(
            ToolEffect::Write,
            json!({"target": "../x.txt"}),
            CallSummary::path("../x.txt"),
        ),
        call(
            ToolEffect::Write,
            json!({"target": "ok.txt"}),
            CallSummary::path("ok.txt"),
        ),
        // A path argument the tool does not list is not the rule's business.
        call(
            ToolEffect::Write,
            json!({"path": "../x.txt"}),
            CallSummary::text("no file"),
        ),
        call(
            ToolEffect::Read,
            json!({"target": "../x.txt"}),
            CallSummary::path("../x.txt"),
        ),
    ]
    .iter()
    .map(|c| rule.evaluate(c).unwrap())
    .collect();
    assert_eq!(
        verdicts,
        vec![
            Verdict::new(
                Behavior::Deny,
                "workspace_boundary",
                "`../x.txt` resolves outside the workspace"
            ),
            Verdict::passthrough("workspace_boundary"),
            Verdict::passthrough("workspace_boundary"),
            Verdict::passthrough("workspace_boundary"),
        ]
    );
}

#[test]
fn secret_reads_check_the_paths_the_tool_lists() {
    let (_dir, workspace) = empty_workspace();
    let rule = SecretReads::new(workspace);
    let listed = call(
        ToolEffect::Read,
        json!({"file": ".env"}),
        CallSummary {
            text: "notes.txt and .env".into(),
            paths: vec!["notes.txt".into(), ".env".into()],
        },
    );
    let unlisted = call(
        ToolEffect::Read,
        json!({"path": ".env"}),
        CallSummary::text(".env"),
    );
    assert_eq!(
        (
            rule.evaluate(&listed).unwrap(),
            rule.evaluate(&unlisted).unwrap()
        ),
        (
            Verdict::new(
                Behavior::Ask,
                "secret_reads_ask",
                "`.env` may hold secrets, so reading it needs approval"
            ),
            Verdict::passthrough("secret_reads_ask"),
        )
    );
}

#[test]
fn the_deny_list_checks_what_an_execute_tool_says_it_runs() {
    let rule = DestructiveCommands;
    let sudo = call(
        ToolEffect::Execute,
        json!({"cmd": "sudo ls"}),
        CallSummary::text("sudo ls"),
    );
    assert_eq!(
        rule.evaluate(&sudo).unwrap(),
        Verdict::new(
            Behavior::Deny,
            "destructive_commands",
            "privilege escalation (`sudo`) is not allowed"
        )
    );
}

/// Declines and keeps what it was asked.
#[derive(Default)]
struct Recording(Mutex<Vec<ApprovalRequest>>);

#[async_trait::async_trait]
impl ApprovalProvider for Recording {
    async fn approve(&self, request: &ApprovalRequest) -> Result<Approval, ApprovalError> {
        self.0.lock().unwrap().push(request.clone());
        Ok(Approval::Declined)
    }
}

#[tokio::test]
async fn the_approval_question_shows_the_tools_summary_escaped() {
    let recording = Arc::new(Recording::default());
    let pipeline = PermissionPipeline::new(Arc::new(MemoryAudit::default()))
        .rule(Arc::new(EffectRule::new(
            "execute_asks",
            ToolEffect::Execute,
            Behavior::Ask,
            "running a command needs approval",
        )))
        .approval(recording.clone());
    let run = call(
        ToolEffect::Execute,
        json!({"cmd": "make", "jobs": 2}),
        CallSummary::text("make -j2\u{1b}[2K"),
    );
    assert_eq!(
        pipeline.check(&run, &[]).await,
        GateDecision::Deny {
            reason: "running a command needs approval; the user declined (by execute_asks)".into()
        }
    );
    assert_eq!(
        recording.0.lock().unwrap().clone(),
        vec![ApprovalRequest {
            tool: "custom".into(),
            summary: r"make -j2\e[2K".into(),
            reason: "running a command needs approval".into(),
        }]
    );
}

/// A workspace with nothing in it, so only the names given decide.
fn empty_workspace() -> (tempfile::TempDir, agent_workspace::Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let workspace = agent_workspace::Workspace::new(dir.path()).unwrap();
    (dir, workspace)
}
