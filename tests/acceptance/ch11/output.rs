//! `--output-format json|stream-json` (chapter 11 on, one-shot runs): what a script reads on
//! stdout, pinned whole; refused before chapter 11 and without `--prompt`.

use serde_json::Value;

use crate::support::{command, stderr_of, workspace};

/// Chapter 11's example session (a 429, a tool call, a 503, an answer) with `format`.
fn run(format: &str) -> (String, String) {
    run_in(&workspace(), format)
}

fn run_in(dir: &tempfile::TempDir, format: &str) -> (String, String) {
    run_with(dir, format, &[])
}

fn run_with(dir: &tempfile::TempDir, format: &str, extra: &[&str]) -> (String, String) {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/scripts/ch11.json"
    );
    let output = command("agent-tutorial", dir.path())
        .args([
            "run",
            "--chapter",
            "11",
            "--script",
            script,
            "--approve",
            "all",
        ])
        .args(["--prompt", "When does 0.3 ship?", "--output-format", format])
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn json_prints_one_object_when_the_run_ends() {
    let dir = workspace();
    let (stdout, stderr) = run_in(&dir, "json");
    let mut summary: Value = serde_json::from_str(&stdout).unwrap();
    // The session kept: its file is named by the id the summary gives.
    let id = summary["session_id"].as_str().unwrap().to_string();
    let kept: Vec<String> = std::fs::read_dir(dir.path().join(".agent_tutorial/sessions"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(kept, [format!("{id}.jsonl")]);
    summary["session_id"] = "ID".into();
    // The one field that depends on the machine (the 429 asks to wait 1 s).
    assert!(
        summary["duration_ms"].as_u64().unwrap() >= 1000,
        "{summary}"
    );
    summary["duration_ms"] = 0.into();
    assert_eq!(
        summary,
        serde_json::json!({
            "answer": "notes.txt says version 0.3 ships on Friday.",
            "turns": 1,
            "requests": 2,
            "input_tokens": 0,
            "output_tokens": 0,
            "cached_tokens": 0,
            "replies_without_usage": 2,
            "duration_ms": 0,
            "exit": "done",
            "session_id": "ID",
        })
    );
    assert_eq!(stdout.lines().count(), 1);
    // The human lines are not printed: stdout is for the script, stderr for errors.
    assert_eq!(stderr, "");
}

#[test]
fn stream_json_prints_every_event_as_it_happens() {
    let (stdout, stderr) = run("stream-json");
    let events: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "memory_selected",
            "prompt_assembled",
            "request_sent",
            "recovery",
            "reply_received",
            "tool_started",
            "permission_decided",
            "tool_finished",
            "prompt_assembled",
            "request_sent",
            "recovery",
            "reply_received",
            "turn_answered",
            "memory_extracted",
        ]
    );
    // Numbered in order, every one the lead's, in its first turn.
    for (i, event) in events.iter().enumerate() {
        assert_eq!(
            (&event["seq"], &event["agent"], &event["turn"]),
            (&Value::from(i + 1), &Value::from("lead"), &Value::from(1)),
        );
    }
    assert_eq!(
        events[7],
        serde_json::json!({
            "seq": 8, "agent": "lead", "turn": 1, "event": "tool_finished",
            "call_id": "c1", "tool": "read_file", "ok": true, "output": "alpha\nbeta\n",
        })
    );
    assert_eq!(
        events[12],
        serde_json::json!({
            "seq": 13, "agent": "lead", "turn": 1, "event": "turn_answered",
            "text": "notes.txt says version 0.3 ships on Friday.",
        })
    );
    assert_eq!(stderr, "");
}

#[test]
fn output_formats_are_refused_before_chapter_11_and_without_a_prompt() {
    let dir = workspace();
    let refused = |args: &[&str]| {
        let assert = command("agent-tutorial", dir.path())
            .args(args)
            .args(["--output-format", "json"])
            .assert()
            .code(2)
            .stdout("");
        stderr_of(assert)
    };
    assert_eq!(
        refused(&["run", "--chapter", "10", "--prompt", "hi"]),
        "error: --output-format needs chapter 11 or later (the chapter whose events a script can rely on); chapter 10 prints text\n"
    );
    assert_eq!(
        refused(&["run", "--chapter", "11"]),
        "error: --output-format is for one-shot runs: give the prompt with --prompt\n"
    );
}

#[test]
fn record_keeps_the_same_requests_whatever_the_output_format() {
    let recorded = |format: &str| {
        let dir = workspace();
        let file = dir.path().join("requests.jsonl");
        run_with(&dir, format, &["--record", file.to_str().unwrap()]);
        // Each run has its own folder, which the system prompt names.
        std::fs::read_to_string(file)
            .unwrap()
            .replace(dir.path().to_str().unwrap(), "WORKSPACE")
    };
    let text = recorded("text");
    assert_eq!(text.lines().count(), 2, "{text}");
    assert_eq!(recorded("json"), text);
    assert_eq!(recorded("stream-json"), text);
}
