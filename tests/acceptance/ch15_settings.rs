//! Chapter 15: a teammate works under the lead's settings. The lead's approval mode decides a
//! teammate's calls (and the audit log records them), the workspace's shell hooks run on a
//! teammate's calls, and what the run says once about the workspace (hooks not trusted) it
//! says once, however many teammates start.

use std::path::Path;

use serde_json::json;

use crate::support::{command, stderr_of, workspace, write_script};

/// A ch15 script: the lead starts `names` (each with the same first task), and each runs
/// `bash {command}` once (call `a1`) and answers.
fn script(dir: &Path, names: &[&str], command: &str) -> std::path::PathBuf {
    let spawns: Vec<serde_json::Value> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            json!({"id": format!("c{i}"), "name": "spawn_teammate", "arguments": {"name": name, "role": "runs a command", "prompt": "Run the command."}})
        })
        .collect();
    let mut steps = json!({
        "lead": [{"tool_calls": spawns}, {"content": "Started."}, {"content": "[]"}]
    });
    for name in names {
        let lead = steps["lead"].as_array_mut().unwrap();
        lead.push(json!({"content": format!("{name} reported.")}));
        lead.push(json!({"content": "[]"}));
        steps[*name] = json!([
            {"tool_calls": [{"id": "a1", "name": "bash", "arguments": {"command": command}}]},
            {"content": "I tried."}
        ]);
    }
    write_script(dir, steps)
}

/// The lines of `text` that start with `prefix` (one agent's, in its order: the agents' lines
/// interleave as they run).
fn lines_of(text: &str, prefix: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with(prefix))
        .map(str::to_string)
        .collect()
}

fn run(dir: &Path, script: &Path, args: &[&str]) -> (String, String) {
    let assert = command("ch15", dir)
        .args([
            "--script",
            script.to_str().unwrap(),
            "--prompt",
            "Start the team.",
        ])
        .args(args)
        .assert()
        .success();
    let out = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    (out, stderr_of(assert))
}

/// The lead's approval mode is alice's: without a terminal (`--approve prompt`, the default)
/// her command is denied and the audit log says so; with `--approve all` it runs.
#[test]
fn a_teammates_call_is_decided_by_the_leads_approval_mode_and_audited() {
    let dir = workspace();
    let script = script(dir.path(), &["alice"], "touch ran");
    let (_, err) = run(dir.path(), &script, &[]);
    assert_eq!(
        lines_of(&err, "[alice] "),
        [
            "[alice] [memory] selected: (none)",
            "[alice] [tool] bash {\"command\":\"touch ran\"}",
            "[alice] [result] Error [permission_denied]: running a command needs approval; approval failed (no terminal to ask on), so denied (by execute_asks)",
        ]
    );
    assert!(!dir.path().join("ran").exists());
    let lines = crate::support::audit_lines(dir.path());
    assert_eq!(
        lines,
        vec![
            json!({
                "agent": "lead",
                "call_id": "c0",
                "tool": "spawn_teammate",
                "arguments": {"name": "alice", "prompt": "Run the command.", "role": "runs a command"},
                "merged": "allow",
                "source": "default",
                "allowed": true,
                "reason": "no rule objected"
            }),
            json!({
                "agent": "alice",
                "call_id": "a1",
                "tool": "bash",
                "arguments": {"command": "touch ran"},
                "merged": "ask",
                "source": "execute_asks",
                "allowed": false,
                "reason": "running a command needs approval; approval failed (no terminal to ask on), so denied"
            })
        ]
    );

    run(dir.path(), &script, &["--approve", "all"]);
    assert!(dir.path().join("ran").exists());
}

/// The workspace's PreToolUse hook sees alice's call (its event, whole) and its block holds
/// for her: the command never runs.
#[test]
fn a_teammates_call_runs_the_workspaces_hooks() {
    let dir = workspace();
    std::fs::create_dir(dir.path().join(".agent_tutorial")).unwrap();
    std::fs::write(
        dir.path().join(".agent_tutorial/hooks.json"),
        json!([{"event": "PreToolUse", "matcher": "bash", "command": "cat > hook-event.json; echo '{\"block\": \"no commands here\"}'"}])
            .to_string(),
    )
    .unwrap();
    let script = script(dir.path(), &["alice"], "touch ran");
    let (_, err) = run(dir.path(), &script, &["--trust-hooks", "--approve", "all"]);
    assert_eq!(
        lines_of(&err, "[alice] "),
        [
            "[alice] [memory] selected: (none)",
            "[alice] [tool] bash {\"command\":\"touch ran\"}",
            "[alice] [result] Error [hook_blocked]: no commands here (hook `hooks.json#0`)",
        ]
    );
    assert!(!dir.path().join("ran").exists());
    let event: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("hook-event.json")).unwrap())
            .unwrap();
    assert_eq!(
        event,
        json!({"event": "PreToolUse", "call_id": "a1", "tool": "bash", "input": {"command": "touch ran"}})
    );
}

/// Hooks nobody trusted: the run says so once, not once more for each teammate it starts.
#[test]
fn the_untrusted_hooks_notice_is_printed_once_however_many_teammates_start() {
    let dir = workspace();
    std::fs::create_dir(dir.path().join(".agent_tutorial")).unwrap();
    std::fs::write(
        dir.path().join(".agent_tutorial/hooks.json"),
        json!([{"event": "PreToolUse", "matcher": "bash", "command": "touch hook-ran"}])
            .to_string(),
    )
    .unwrap();
    let script = script(dir.path(), &["alice", "bob"], "true");
    let config = tempfile::tempdir().unwrap();
    let assert = command("ch15", dir.path())
        .env("XDG_CONFIG_HOME", config.path())
        .args([
            "--script",
            script.to_str().unwrap(),
            "--prompt",
            "Start the team.",
        ])
        .args(["--approve", "all"])
        .assert()
        .success();
    let err = stderr_of(assert);
    // Every line but the agents' own: the notice, once.
    let others: Vec<&str> = err.lines().filter(|l| !l.starts_with('[')).collect();
    let root = dir.path().display().to_string();
    assert_eq!(
        others,
        [format!(
            "hooks in .agent_tutorial/hooks.json are not trusted (1), so none will run; review and trust them with: agent-tutorial trust --workspace {root}"
        )]
    );
    assert_eq!(lines_of(&err, "[bob] [tool] ").len(), 1);
    assert!(!dir.path().join("hook-ran").exists());
}
