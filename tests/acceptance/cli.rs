//! The binaries, driven as a user would drive them.

use predicates::prelude::*;
use serde_json::json;

use crate::support::{command, stdout_of, workspace, write_script};

#[test]
fn missing_configuration_exits_2_and_names_every_variable() {
    let dir = workspace();
    command("agent-tutorial", dir.path())
        .args(["run", "--chapter", "2", "--prompt", "hi"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::starts_with(
            "error: missing model configuration: OPENAI_API_KEY, OPENAI_MODEL.\n",
        ))
        .stderr(predicate::str::ends_with(format!(
            "No API key? `just -f {repo}/justfile local-model` serves a small model on 127.0.0.1 \
             and prints the settings to use (`just chNN ...` in that folder does it for you), or \
             replay a session offline with `--script {repo}/examples/scripts/chNN.json`.\n",
            repo = agent_openai::config::repository()
        )));
}

#[test]
fn a_dotenv_in_the_working_directory_is_read() {
    let dir = workspace();
    // Key and model from .env; a closed port so the run fails at the transport, not at config.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(
        dir.path().join(".env"),
        format!("OPENAI_API_KEY=sk-dotenv-secret\nOPENAI_MODEL=m\nOPENAI_BASE_URL=http://127.0.0.1:{port}/v1\n"),
    )
    .unwrap();
    command("agent-tutorial", dir.path())
        .args(["run", "--chapter", "1", "--prompt", "hi"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("could not reach the model server"))
        .stderr(predicate::str::contains("sk-dotenv-secret").not());
}

#[test]
fn prompt_shows_the_first_request_without_credentials() {
    let dir = workspace();
    let root = dir.path().canonicalize().unwrap();
    let text = stdout_of(
        command("agent-tutorial", dir.path())
            .args(["prompt", "--chapter", "2", "--prompt", "Read notes.txt"])
            .assert()
            .success(),
    );
    let head: Vec<&str> = text.lines().take(7).collect();
    assert_eq!(
        head,
        vec![
            "# chapter 2 (P02): the first request, as the model receives it".to_string(),
            "── [0] system ──".into(),
            format!("You are a coding agent working in the directory {}.", root.display()),
            "Use the tools to inspect and change files and to run commands; act rather than explain.".into(),
            "When the task is done, reply with a short summary of what you did and found.".into(),
            "── [1] user ──".into(),
            "Read notes.txt".into(),
        ]
    );
    assert!(text.contains("── tools (5) ──\n- bash [execute]: "));
}

#[test]
fn prompt_json_is_the_exact_chat_completions_body() {
    let dir = workspace();
    let out = command("agent-tutorial", dir.path())
        .args([
            "prompt",
            "--chapter",
            "1",
            "--prompt",
            "hi",
            "--json",
            "--model",
            "m1",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let body: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(body["model"], "m1");
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": "hi"})
    );
    assert_eq!(body["tool_choice"], "auto");
    assert_eq!(body["tools"][0]["function"]["name"], "bash");
    assert_eq!(body["tools"].as_array().unwrap().len(), 1);
}

#[test]
fn chapters_lists_the_built_chapters() {
    let dir = workspace();
    let text = stdout_of(
        command("agent-tutorial", dir.path())
            .arg("chapters")
            .assert()
            .success(),
    );
    let lines: Vec<&str> = text.lines().take(3).collect();
    assert_eq!(
        lines,
        vec![
            "chapter  profile  adds                      what it teaches",
            "      1  P01      bash                      the loop: call the model, run tool calls, feed results back",
            "      2  P02      files                     a schema-checked tool registry and workspace-confined file tools",
        ]
    );
}

#[test]
fn unknown_chapters_exit_2() {
    let dir = workspace();
    command("agent-tutorial", dir.path())
        .args(["run", "--chapter", "42", "--prompt", "hi"])
        .assert()
        .code(2)
        .stderr("error: there is no chapter 42; chapters are numbered 1 to 20\n");
    // One past the last chapter is refused by `prompt` too (every chapter of the table is
    // built, so none is refused as planned).
    command("agent-tutorial", dir.path())
        .args(["prompt", "--chapter", "21"])
        .assert()
        .code(2)
        .stderr("error: there is no chapter 21; chapters are numbered 1 to 20\n");
}

#[test]
fn a_script_runs_a_whole_session_offline() {
    let dir = workspace();
    let script = write_script(
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "write_file", "arguments": {"path": "hello.txt", "content": "hi\n"}}]},
            {"tool_calls": [{"id": "c2", "name": "read_file", "arguments": "{not json"}]},
            {"content": "Wrote hello.txt."}
        ]),
    );
    command("agent-tutorial", dir.path())
        .args(["run", "--chapter", "2", "--prompt", "write hello", "--script"])
        .arg(&script)
        .assert()
        .success()
        .stdout("Wrote hello.txt.\n")
        .stderr(
            "[tool] write_file {\"content\":\"hi\\n\",\"path\":\"hello.txt\"}\n\
             [result] ok: 1 line, 26 bytes\n\
             [tool] read_file {not json\n\
             [result] Error [invalid_json]: arguments are not valid JSON (key must be a string at line 1 column 2)\n",
        );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
}

#[test]
fn the_chapter_binary_takes_the_same_arguments() {
    let dir = workspace();
    let script = write_script(
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "cat notes.txt"}}]},
            {"content": "alpha and beta"}
        ]),
    );
    command("ch01", dir.path())
        .args(["--prompt", "what is in notes.txt?", "--script"])
        .arg(&script)
        .assert()
        .success()
        .stdout("alpha and beta\n");
}

#[test]
fn an_unused_script_reply_fails_the_run() {
    let dir = workspace();
    let script = write_script(dir.path(), json!([{"content": "one"}, {"content": "two"}]));
    command("ch02", dir.path())
        .args(["--prompt", "hi", "--script"])
        .arg(&script)
        .assert()
        .code(1)
        .stdout("one\n")
        .stderr("error: the script has 1 unused reply left after the run\n");
}

#[test]
fn the_turn_limit_is_a_clear_error() {
    let dir = workspace();
    let script = write_script(
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "true"}}]},
            {"tool_calls": [{"id": "c2", "name": "bash", "arguments": {"command": "true"}}]}
        ]),
    );
    command("ch01", dir.path())
        .args(["--prompt", "loop", "--max-turns", "2", "--script"])
        .arg(&script)
        .assert()
        .code(1)
        .stderr(predicate::str::ends_with(
            "error: turn limit reached: the model still asked for tools after 2 requests; raise --max-turns or narrow the task\n",
        ));
}

#[test]
fn interactive_mode_reads_prompts_until_exit() {
    let dir = workspace();
    let script = write_script(dir.path(), json!([{"content": "A1"}, {"content": "A2"}]));
    command("ch02", dir.path())
        .arg("--script")
        .arg(&script)
        .write_stdin("first\n\n  \nsecond\nexit\nnever sent\n")
        .assert()
        .success()
        .stdout("A1\nA2\n")
        .stderr("ch02 >> ch02 >> ch02 >> ch02 >> ch02 >> ");
}

#[test]
fn prompt_diff_shows_what_a_chapter_changes_in_the_request() {
    let dir = workspace();
    let text = stdout_of(
        command("agent-tutorial", dir.path())
            .args(["prompt", "--chapter", "2", "--diff", "1"])
            .assert()
            .success(),
    );
    let changed: Vec<&str> = text
        .lines()
        .filter(|l| (l.starts_with('+') || l.starts_with('-')) && !l.starts_with("  "))
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert_eq!(
        changed,
        vec![
            "--- chapter 1 (P01)",
            "+++ chapter 2 (P02)",
            "-── tools (1) ──",
            "+── tools (5) ──",
            "+- read_file [read]",
            "+  {\"properties\"",
            "+- write_file [write]",
            "+  {\"properties\"",
            "+- edit_file [write]",
            "+  {\"properties\"",
            "+- glob [read]",
            "+  {\"properties\"",
        ]
    );
    command("agent-tutorial", dir.path())
        .args(["prompt", "--chapter", "3", "--diff"])
        .assert()
        .success()
        .stdout("The first request of chapter 3 is identical to chapter 2's: the chapter changes what happens around the model, not what it is sent first.\n");
}

#[test]
fn prompt_refuses_json_with_diff_and_a_diff_before_chapter_1() {
    let dir = workspace();
    command("agent-tutorial", dir.path())
        .args(["prompt", "--chapter", "2", "--json", "--diff"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::starts_with(
            "error: the argument '--json' cannot be used with '--diff [<M>]'",
        ));
    command("agent-tutorial", dir.path())
        .args(["prompt", "--chapter", "1", "--diff"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "error: chapter 1 has no previous chapter to compare with; name one with --diff M\n",
        );
}

#[test]
fn a_missing_script_file_names_its_cause_once() {
    let dir = workspace();
    command("ch01", dir.path())
        .args(["--prompt", "hi", "--script", "missing.json"])
        .assert()
        .code(2)
        .stdout("")
        .stderr("error: cannot read script missing.json: No such file or directory (os error 2)\n");
}

#[test]
fn a_chapter_binary_help_opens_with_its_chapter() {
    let dir = workspace();
    let help = stdout_of(command("ch10", dir.path()).arg("--help").assert().success());
    // The first paragraph, unwrapped: clap wraps it to the terminal's width.
    let about: Vec<&str> = help.lines().take_while(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        about.join(" "),
        "Chapter 10 (P10): the system prompt assembled at run time. Runs this chapter's agent: one turn with --prompt, otherwise an interactive loop (see docs/ch10.md)."
    );
    assert!(help.contains("docs/scripts.md"), "{help}");
}

#[test]
fn a_subagent_calls_are_marked_apart_from_the_parent() {
    let dir = workspace();
    let script = write_script(
        dir.path(),
        json!([
            {"tool_calls": [{"name": "task", "arguments": {"description": "count the lines of notes.txt"}}]},
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
            {"content": "2 lines"},
            {"tool_calls": [{"name": "glob", "arguments": {"pattern": "*.txt"}}]},
            {"content": "notes.txt has 2 lines."}
        ]),
    );
    command("ch06", dir.path())
        .args([
            "--approve",
            "none",
            "--prompt",
            "how long is notes.txt?",
            "--script",
        ])
        .arg(&script)
        .assert()
        .success()
        .stdout("notes.txt has 2 lines.\n")
        .stderr(
            "[tool] task {\"description\":\"count the lines of notes.txt\"}\n  \
             ⤷ [tool] read_file {\"path\":\"notes.txt\"}\n  \
             ⤷ [result] ok: 2 lines, 11 bytes\n\
             [result] ok: 1 line, 7 bytes\n\
             [tool] glob {\"pattern\":\"*.txt\"}\n\
             [result] ok: 1 line, 9 bytes\n",
        );
}

#[test]
fn a_record_file_that_cannot_be_opened_is_named() {
    let dir = workspace();
    let script = crate::support::write_script(dir.path(), serde_json::json!([{"content": "hi"}]));
    command("ch01", dir.path())
        .args(["--prompt", "hi", "--record", "missing/requests.jsonl", "--script"])
        .arg(&script)
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "error: cannot open the --record file missing/requests.jsonl: No such file or directory (os error 2)\n",
        );
}

#[test]
fn prompt_previews_the_reminder_placement() {
    let dir = workspace();
    command("agent-tutorial", dir.path())
        .args(["memory", "add", "tabs", "--type", "user"])
        .args(["--description", "Tabs in Rust", "--body", "Use tabs."])
        .assert()
        .success();
    let body: serde_json::Value = serde_json::from_str(&stdout_of(
        command("agent-tutorial", dir.path())
            .args([
                "prompt",
                "--chapter",
                "10",
                "--json",
                "--prompt",
                "indent Rust",
            ])
            .args(["--memory-placement", "reminder"])
            .assert()
            .success(),
    ))
    .unwrap();
    let messages = body["messages"].as_array().unwrap();
    // The system prompt without a memory section, then the block, then the user message.
    assert_eq!(
        (
            messages[0]["content"]
                .as_str()
                .unwrap()
                .contains("## memory"),
            &messages[1..]
        ),
        (
            false,
            &[
                json!({"role": "system", "content": "<relevant_memories>\n## tabs (user)\nTabs in Rust\nUse tabs.\n</relevant_memories>"}),
                json!({"role": "user", "content": "indent Rust"}),
            ][..]
        )
    );
    command("agent-tutorial", dir.path())
        .args(["prompt", "--chapter", "9", "--memory-placement", "reminder"])
        .assert()
        .code(2)
        .stderr("error: --memory-placement needs chapter 10 or later: chapter 9's system prompt is fixed (chapter 9 sends memory as its own message)\n");
}
