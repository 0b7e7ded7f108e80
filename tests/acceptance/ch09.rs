//! Chapter 9: file memory, injected as its own system message.

use agent_core::{AgentEvent, Message, ModelReply};
use predicates::prelude::*;
use serde_json::json;

use std::sync::Arc;

use agent_core::CollectingSink;
use agent_policy::StaticApproval;
use agent_test_support::ScriptedModel;
use agent_tutorial::Agent;

use crate::support::{
    command, memory_events, scripted_agent, scripted_agent_with, workspace, write_script,
};

/// A chapter-9 agent whose `ask`s are approved (a saved memory reaches every future prompt,
/// so saving one asks like a write), with every event collected.
fn approved_agent(
    dir: &std::path::Path,
    replies: Vec<ModelReply>,
) -> (Agent, Arc<ScriptedModel>, Arc<CollectingSink>) {
    let sink = Arc::new(CollectingSink::new());
    let (agent, model) = scripted_agent_with(9, dir, replies, |deps| {
        deps.events = sink.clone();
        deps.approval = Some(Arc::new(StaticApproval::ApproveAll));
    });
    (agent, model, sink)
}

const RECORD: &str = r#"[{"name": "prefers-tabs", "type": "feedback", "description": "The user wants Rust indented with tabs", "body": "Use tabs, never spaces, in .rs files."}]"#;
const BLOCK: &str = "<relevant_memories>\n## prefers-tabs (feedback)\nThe user wants Rust indented with tabs\nUse tabs, never spaces, in .rs files.\n</relevant_memories>";

fn count<M: AsRef<Message>>(messages: &[M], needle: &str) -> usize {
    messages
        .iter()
        .map(|m| m.as_ref().text().matches(needle).count())
        .sum()
}

#[tokio::test]
async fn one_instance_extracts_and_the_next_one_selects_the_memory_as_its_own_message() {
    let dir = workspace();
    // First instance: no memories yet (no selector call), the answer, then the extraction.
    let (mut first, model, events) = approved_agent(
        dir.path(),
        vec![ModelReply::text("Noted: tabs."), ModelReply::text(RECORD)],
    );
    assert_eq!(
        first
            .run_turn("Always indent Rust with tabs.")
            .await
            .unwrap()
            .final_text,
        "Noted: tabs."
    );
    model.finish().unwrap();
    // No memories yet: nothing selected (and no selector call); then the extraction.
    assert_eq!(
        memory_events(&events.events()),
        vec![
            AgentEvent::MemorySelected { names: vec![] },
            AgentEvent::MemoryExtracted {
                names: vec!["prefers-tabs".into()]
            },
        ]
    );

    // Second instance, same workspace: selector, answer, extraction (nothing new).
    let (mut second, model) = scripted_agent(
        9,
        dir.path(),
        vec![
            ModelReply::text(r#"["prefers-tabs"]"#),
            ModelReply::text("Using tabs."),
            ModelReply::text("[]"),
        ],
    );
    second.run_turn("Format src/main.rs").await.unwrap();
    model.finish().unwrap();
    let requests = model.requests();
    let main = &requests[1];
    assert_eq!(main.messages[1], Message::system(BLOCK));
    assert_eq!(count(&main.messages, "<relevant_memories>"), 1);
    assert_eq!(main.messages[2], Message::user("Format src/main.rs"));
    // Injected per request, never stored.
    assert_eq!(count(second.history(), "<relevant_memories>"), 0);
    // Selector and extractor run without tools.
    assert!(requests[0].tools.is_empty() && requests[2].tools.is_empty());
    assert!(!main.tools.is_empty());
}

#[tokio::test]
async fn memory_failures_never_break_the_answer() {
    let dir = workspace();
    let (mut agent, _m, events) = approved_agent(
        dir.path(),
        vec![
            ModelReply::text("The answer."),
            ModelReply::text("{garbage"),
        ],
    );
    let outcome = agent.run_turn("hello").await.unwrap();
    assert_eq!(outcome.final_text, "The answer.");
    let memory = memory_events(&events.events());
    let [selected, extracted, AgentEvent::MemoryFailed { message }] = &memory[..] else {
        panic!("{memory:?}");
    };
    assert_eq!(selected, &AgentEvent::MemorySelected { names: vec![] });
    assert_eq!(extracted, &AgentEvent::MemoryExtracted { names: vec![] });
    assert!(
        message.starts_with("extraction failed, nothing saved: the reply is not valid"),
        "{message}"
    );
    assert!(!dir.path().join(".memory/MEMORY.md").exists());
}

#[test]
fn the_cli_reports_memory_and_edits_the_store_by_hand() {
    let dir = workspace();
    let script = write_script(
        dir.path(),
        json!([{"content": "Noted."}, {"content": RECORD}]),
    );
    command("ch09", dir.path())
        .args([
            "--approve",
            "all",
            "--prompt",
            "Always indent Rust with tabs.",
            "--script",
        ])
        .arg(&script)
        .assert()
        .success()
        .stdout("Noted.\n")
        .stderr("[memory] selected: (none)\n[memory] extracted: prefers-tabs\n");
    command("agent-tutorial", dir.path())
        .args(["memory", "list"])
        .assert()
        .success()
        .stdout("prefers-tabs  (feedback)  The user wants Rust indented with tabs\n");
    command("agent-tutorial", dir.path())
        .args(["memory", "show", "prefers-tabs"])
        .assert()
        .success()
        .stdout("---\nname: prefers-tabs\ndescription: The user wants Rust indented with tabs\ntype: feedback\n---\n\nUse tabs, never spaces, in .rs files.\n");
    command("agent-tutorial", dir.path())
        .args(["memory", "forget", "prefers-tabs"])
        .assert()
        .success();
    command("agent-tutorial", dir.path())
        .args(["memory", "list"])
        .assert()
        .success()
        .stdout("(no memories)\n");
    command("agent-tutorial", dir.path())
        .args(["memory", "forget", "prefers-tabs"])
        .assert()
        .code(2)
        .stderr("error: no memory named `prefers-tabs`\n");
}

#[test]
fn prompt_shows_the_memory_message_without_a_model() {
    let dir = workspace();
    command("agent-tutorial", dir.path())
        .args([
            "memory",
            "add",
            "prefers-tabs",
            "--type",
            "feedback",
            "--description",
            "The user wants Rust indented with tabs",
            "--body",
            "Use tabs, never spaces, in .rs files.",
        ])
        .assert()
        .success();
    command("agent-tutorial", dir.path())
        .args([
            "prompt",
            "--chapter",
            "9",
            "--prompt",
            "indent this Rust file",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "── [1] system ──\n{BLOCK}\n── [2] user ──\nindent this Rust file\n"
        )));
}

#[test]
fn two_processes_writing_at_once_lose_nothing() {
    let dir = workspace();
    let spawn = |who: &str| {
        let mut children = Vec::new();
        for i in 0..8 {
            let mut cmd =
                std::process::Command::new(assert_cmd::cargo::cargo_bin("agent-tutorial"));
            cmd.current_dir(dir.path()).args([
                "memory",
                "add",
                &format!("{who}-{i}"),
                "--type",
                "project",
                "--description",
                "parallel write",
            ]);
            children.push(cmd.spawn().unwrap());
        }
        children
    };
    let children: Vec<_> = spawn("a").into_iter().chain(spawn("b")).collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let out = command("agent-tutorial", dir.path())
        .args(["memory", "list"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 16);
}

/// The file the index lists for `name`.
fn indexed_file(dir: &std::path::Path, name: &str) -> String {
    let index = std::fs::read_to_string(dir.join(".memory/MEMORY.md")).unwrap();
    let prefix = format!("- [{name}](");
    let line = index.lines().find(|l| l.starts_with(&prefix)).unwrap();
    line[prefix.len()..].split(')').next().unwrap().to_string()
}

#[test]
fn list_skips_a_corrupt_record_and_forget_archives_the_name_list_shows() {
    let dir = workspace();
    for name in ["alpha", "beta", "gamma"] {
        command("agent-tutorial", dir.path())
            .args(["memory", "add", name, "--type", "project"])
            .args(["--description", &format!("About {name}")])
            .assert()
            .success();
    }
    let memory = dir.path().join(".memory");
    // alpha's front matter renamed by hand; gamma's file broken.
    let alpha = indexed_file(dir.path(), "alpha");
    let text = std::fs::read_to_string(memory.join(&alpha)).unwrap();
    std::fs::write(
        memory.join(&alpha),
        text.replace("name: alpha", "name: renamed"),
    )
    .unwrap();
    let gamma = indexed_file(dir.path(), "gamma");
    std::fs::write(memory.join(&gamma), "not a record\n").unwrap();

    command("agent-tutorial", dir.path())
        .args(["memory", "list"])
        .assert()
        .success()
        .stdout("alpha  (project)  About alpha\nbeta  (project)  About beta\n")
        .stderr(format!(
            " WARN memory: {alpha} names itself `renamed` but the index lists it as `alpha`; using `alpha`\n WARN memory: skipped the corrupt record `gamma` ({gamma}): {gamma} is not valid: the file does not start with a `---` line\n"
        ));
    command("agent-tutorial", dir.path())
        .args(["memory", "forget", "renamed"])
        .assert()
        .code(2)
        .stderr("error: no memory named `renamed`\n");
    command("agent-tutorial", dir.path())
        .args(["memory", "forget", "alpha"])
        .assert()
        .success()
        .stderr(format!(
            "forgot alpha (archived as .memory/archive/{alpha})\n"
        ));
    command("agent-tutorial", dir.path())
        .args(["memory", "forget", "gamma"])
        .assert()
        .success()
        .stderr(format!(
            "forgot gamma (archived as .memory/archive/{gamma})\n"
        ));
    command("agent-tutorial", dir.path())
        .args(["memory", "list"])
        .assert()
        .success()
        .stdout("beta  (project)  About beta\n")
        .stderr("");
    assert!(!memory.join(&alpha).exists());
    assert_eq!(
        std::fs::read_to_string(memory.join("archive").join(&gamma)).unwrap(),
        "not a record\n"
    );
}

#[test]
fn a_memory_failure_is_printed_once() {
    let dir = workspace();
    command("agent-tutorial", dir.path())
        .args(["memory", "add", "tabs", "--type", "user"])
        .args(["--description", "Tabs in Rust"])
        .assert()
        .success();
    // The selector answers prose: keyword fallback, one error line.
    let script = write_script(
        dir.path(),
        json!([{"content": "no idea"}, {"content": "ok"}, {"content": "[]"}]),
    );
    command("ch09", dir.path())
        .args(["--script", script.to_str().unwrap(), "--prompt", "indent Rust"])
        .assert()
        .success()
        .stdout("ok\n")
        .stderr(
            "[memory] error: selector failed, used keyword fallback: the reply is not a JSON array of names (expected ident at line 1 column 2)\n\
             [memory] selected: tabs\n\
             [memory] extracted: (none)\n",
        );
}

/// A model server on 127.0.0.1 for one run: a request that offers tools (the turn's) is
/// answered at once with `answer`; one that offers none (memory's extraction) is reported on
/// the returned receiver and answered `[]` only once the returned sender is sent a `()`.
/// Handwritten HTTP/1.1, one connection at a time, each closed after its response.
fn extraction_held_server(
    answer: &'static str,
) -> (
    u16,
    std::sync::mpsc::Receiver<()>,
    std::sync::mpsc::Sender<()>,
) {
    use std::io::{BufRead, BufReader, Read, Write};

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (asked_tx, asked) = std::sync::mpsc::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(&stream);
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                if line == "\r\n" {
                    break;
                }
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let request: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let offers_tools = request["tools"].as_array().is_some_and(|t| !t.is_empty());
            let content = if offers_tools {
                answer
            } else {
                // The extraction: held until the test has seen the answer.
                let _ = asked_tx.send(());
                if released.recv().is_err() {
                    return;
                }
                "[]"
            };
            let reply = json!({
                "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
            })
            .to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (port, asked, release)
}

/// The answer is printed before memory extraction runs: the server holds the extraction call
/// until the test has read the answer on the run's standard output, so a run that extracted
/// first would never print it (and the test would fail at the end of its patience).
#[test]
fn the_answer_is_printed_while_the_memory_extraction_still_waits() {
    use std::io::BufRead;
    use std::process::Stdio;

    use crate::ch11::cancel::{poll, wait_exit};

    for bin in ["ch09", "ch10"] {
        let dir = workspace();
        let (port, asked, release) = extraction_held_server("the answer");
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin(bin));
        for (key, _) in std::env::vars() {
            if key.starts_with("OPENAI_") {
                child.env_remove(key);
            }
        }
        let config = tempfile::tempdir().unwrap();
        let mut child = child
            .env_remove("RUST_LOG")
            .env("XDG_CONFIG_HOME", config.path())
            .env("OPENAI_API_KEY", "sk-test-not-a-key")
            .current_dir(dir.path())
            .args(["--base-url", &format!("http://127.0.0.1:{port}/v1")])
            .args(["--model", "m", "--approve", "all", "--prompt", "hello"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (lines_tx, lines) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if lines_tx.send(line).is_err() {
                    return;
                }
            }
        });

        let first = poll(&format!("{bin}: the answer on stdout"), || {
            lines.try_recv().ok()
        });
        assert_eq!(first, "the answer", "{bin}");
        // The extraction was asked for and is still waiting: only now is it answered.
        poll(&format!("{bin}: the extraction call"), || {
            asked.try_recv().ok()
        });
        release.send(()).unwrap();

        assert_eq!(wait_exit(&mut child).code(), Some(0), "{bin}");
        let rest: Vec<String> = lines.iter().collect();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(
            (rest, stderr.as_str()),
            (
                vec![],
                "[memory] selected: (none)\n[memory] extracted: (none)\n"
            ),
            "{bin}"
        );
    }
}
