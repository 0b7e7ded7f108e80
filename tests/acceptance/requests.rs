//! Full-text request snapshots, chapters 3–9 and 11: every request a chapter's binary sends in a short
//! scripted session (`--script` + `--record`), every message in full and every tool with its
//! schema. A refactor that changes one byte the model receives shows up here as a diff; the
//! labelled one-line snapshots of chapters 1, 2 and 10 live in their own modules.

use std::path::Path;

use agent_core::ModelRequest;
use agent_tutorial::render;
use serde_json::{Value, json};

use crate::support::{command, workspace, write_script};

/// Runs chapter `chapter`'s binary on `script` with `args`, and renders every recorded request.
fn recorded(chapter: u8, dir: &Path, script: Value, args: &[&str]) -> String {
    let script = write_script(dir, script);
    let record = dir.join("requests.jsonl");
    let config = tempfile::tempdir().unwrap();
    command(&format!("ch{chapter:02}"), dir)
        .env("XDG_CONFIG_HOME", config.path())
        .args(args)
        .arg("--script")
        .arg(&script)
        .arg("--record")
        .arg(&record)
        .assert()
        .success();
    let root = dir.canonicalize().unwrap().display().to_string();
    let text = std::fs::read_to_string(&record).unwrap();
    std::fs::remove_file(&record).unwrap();
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            let request: ModelRequest = serde_json::from_str(line).unwrap();
            format!("══ request {i}\n{}", render::full(&request))
        })
        .collect::<String>()
        .replace(&root, "<workspace>")
}

#[test]
fn ch03_a_read_a_denied_command_and_an_escape() {
    let dir = workspace();
    let text = recorded(
        3,
        dir.path(),
        json!([
            {"tool_calls": [
                {"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt"}},
                {"id": "c2", "name": "bash", "arguments": {"command": "echo ran > ran.txt"}},
                {"id": "c3", "name": "write_file", "arguments": {"path": "../outside.txt", "content": "x"}}
            ]},
            {"content": "Two calls were denied."}
        ]),
        &["--approve", "none", "--prompt", "look around"],
    );
    insta::assert_snapshot!(text);
}

#[test]
fn ch04_a_hook_adds_context_and_blocks_a_call() {
    let dir = workspace();
    std::fs::create_dir(dir.path().join(".agent_tutorial")).unwrap();
    std::fs::write(
        dir.path().join(".agent_tutorial/hooks.json"),
        json!([
            {"event": "UserPromptSubmit", "command": "echo '{\"additional_context\": \"The user prefers short answers.\"}'"},
            {"event": "PreToolUse", "matcher": "glob", "command": "echo '{\"block\": \"no globbing\"}'"}
        ])
        .to_string(),
    )
    .unwrap();
    let text = recorded(
        4,
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "glob", "arguments": {"pattern": "*"}}]},
            {"content": "Blocked."}
        ]),
        &["--trust-hooks", "--prompt", "list the files"],
    );
    insta::assert_snapshot!(text);
}

#[test]
fn ch05_the_plan_and_the_stale_plan_reminder() {
    let dir = workspace();
    let bash = |id: &str| json!({"tool_calls": [{"id": id, "name": "bash", "arguments": {"command": "true"}}]});
    let text = recorded(
        5,
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "todo_write", "arguments": {"todos": [
                {"content": "look", "status": "in_progress"},
                {"content": "answer", "status": "pending"}
            ]}}]},
            bash("c2"), bash("c3"), bash("c4"),
            {"content": "Done."}
        ]),
        &["--approve", "all", "--prompt", "plan and work"],
    );
    insta::assert_snapshot!(text);
}

#[test]
fn ch06_a_subagent_runs_with_fresh_history() {
    let dir = workspace();
    let text = recorded(
        6,
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "task", "arguments": {"description": "Count the lines of notes.txt"}}]},
            {"tool_calls": [{"id": "k1", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
            {"content": "notes.txt has 2 lines."},
            {"content": "The helper says 2 lines."}
        ]),
        &["--prompt", "delegate the counting"],
    );
    insta::assert_snapshot!(text);
}

#[test]
fn ch07_the_catalog_and_a_loaded_skill() {
    let dir = workspace();
    crate::ch07::install_example_skills(dir.path());
    let text = recorded(
        7,
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "load_skill", "arguments": {"name": "rust-test"}}]},
            {"content": "Reviewed."}
        ]),
        // The example skills are the user's own here: trusted without the `trust` step.
        &["--trust-workspace", "--prompt", "review my code"],
    );
    insta::assert_snapshot!(text);
}

#[test]
fn ch08_a_large_result_becomes_an_artifact_preview() {
    let dir = workspace();
    let big: String = (0..2_000)
        .map(|i| format!("line {i:04} of a long log\n"))
        .collect();
    std::fs::write(dir.path().join("build.log"), big).unwrap();
    let text = recorded(
        8,
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "cat build.log"}}]},
            {"content": "The log is long."}
        ]),
        &["--approve", "all", "--prompt", "show me the build log"],
    );
    insta::assert_snapshot!(text);
}

#[test]
fn ch09_a_memory_extracted_then_injected_as_its_own_message() {
    let dir = workspace();
    let record = r#"[{"name": "prefers-tabs", "type": "feedback", "description": "The user wants Rust indented with tabs", "body": "Use tabs, never spaces, in .rs files."}]"#;
    let first = recorded(
        9,
        dir.path(),
        json!([{"content": "Noted."}, {"content": record}]),
        // Saving a memory asks like a write.
        &[
            "--approve",
            "all",
            "--prompt",
            "Always indent Rust with tabs.",
        ],
    );
    let second = recorded(
        9,
        dir.path(),
        json!([{"content": "[\"prefers-tabs\"]"}, {"content": "Using tabs."}, {"content": "[]"}]),
        &["--prompt", "Format src/main.rs"],
    );
    insta::assert_snapshot!(format!("{first}══ second run\n{second}"));
}

#[test]
fn ch11_the_first_request() {
    let dir = workspace();
    let text = recorded(
        11,
        dir.path(),
        json!([{"content": "Nothing to do."}, {"content": "[]"}]),
        &["--prompt", "look around"],
    );
    insta::assert_snapshot!(text);
}

/// `--record-form delta` writes what changed since the line before; `agent-tutorial record
/// expand` turns it back into exactly what `--record` writes in the full form.
#[test]
fn a_delta_recording_expands_to_the_full_recording_byte_for_byte() {
    let script = json!([
        {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"tool_calls": [{"id": "c2", "name": "glob", "arguments": {"pattern": "*"}}]},
        {"content": "Read and listed."}
    ]);
    let run = |form: &str| {
        let dir = workspace();
        let script = write_script(dir.path(), script.clone());
        let record = dir.path().join("requests.jsonl");
        command("ch03", dir.path())
            .args([
                "--approve",
                "all",
                "--prompt",
                "look around",
                "--record-form",
                form,
            ])
            .arg("--script")
            .arg(&script)
            .arg("--record")
            .arg(&record)
            .assert()
            .success();
        let root = dir.path().canonicalize().unwrap().display().to_string();
        let expanded = command("agent-tutorial", dir.path())
            .args(["record", "expand"])
            .arg(&record)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let recorded = std::fs::read_to_string(&record).unwrap();
        (
            recorded.replace(&root, "<workspace>"),
            String::from_utf8(expanded)
                .unwrap()
                .replace(&root, "<workspace>"),
        )
    };
    let (full, full_expanded) = run("full");
    let (delta, delta_expanded) = run("delta");
    assert_eq!(full.lines().count(), 3);
    assert_eq!(delta_expanded, full);
    assert_eq!(full_expanded, full);
    assert_ne!(delta, full);
}
