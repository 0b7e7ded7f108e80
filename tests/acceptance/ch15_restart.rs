//! Chapter 15 across real processes: a harness killed with SIGKILL, then started again in the
//! same folder. A message whose turn had completed is acknowledged with no model call; one
//! whose turn was cut short is delivered again and its death counted.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use agent_core::AgentId;
use agent_team::{MailKind, MailMessage, MessageId};
use serde_json::json;

use crate::support::{command, stdout_of, workspace, write_script};

const LEAD_MAIL: &str = ".agent_tutorial/mail/lead";
const RECORD: &str = ".agent_tutorial/deliveries/lead.json";

/// A result alice left for the lead before this process started.
fn plant_result(dir: &Path) -> MailMessage {
    let ready = dir.join(LEAD_MAIL).join("ready");
    std::fs::create_dir_all(&ready).unwrap();
    let message = MailMessage {
        id: MessageId::parse("0000002a-00000000001-000000000003").unwrap(),
        from: AgentId::new("alice").unwrap(),
        to: AgentId::lead(),
        kind: MailKind::Result,
        body: "left over from yesterday".into(),
        created_at: 3,
        failures: vec![],
    };
    std::fs::write(
        ready.join(message.file_name()),
        serde_json::to_vec(&message).unwrap(),
    )
    .unwrap();
    message
}

fn mailbox(dir: &Path) -> String {
    stdout_of(
        command("agent-tutorial", dir)
            .args(["mailbox", "lead"])
            .assert()
            .success(),
    )
}

fn record(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join(RECORD)).unwrap()).unwrap()
}

/// The turn completed, then the process died before the ack (the ack undone by hand: no
/// signal lands between two lines of code deterministically). The next process's script has
/// replies for the person's prompt only: one more model call would find none and fail the run.
#[test]
fn a_result_answered_before_the_process_died_costs_no_second_model_call() {
    let dir = workspace();
    let message = plant_result(dir.path());
    let script = write_script(
        dir.path(),
        json!({"lead": [
            {"content": "Hello."}, {"content": "[]"},
            {"content": "Noted: yesterday's result."}, {"content": "[]"}
        ]}),
    );
    let first = command("ch15", dir.path())
        .args(["--script", script.to_str().unwrap(), "--prompt", "hi"])
        .assert()
        .success();
    assert_eq!(
        stdout_of(first),
        "[lead] Hello.\n[lead] Noted: yesterday's result.\n"
    );
    assert_eq!(
        record(dir.path()),
        json!({"id": message.id.to_string(), "turn": "answered"})
    );
    let name = message.file_name();
    let mail = dir.path().join(LEAD_MAIL);
    std::fs::rename(
        mail.join("done").join(&name),
        mail.join("processing").join(&name),
    )
    .unwrap();

    let script = write_script(
        dir.path(),
        json!({"lead": [{"content": "Hello again."}, {"content": "[]"}]}),
    );
    let second = command("ch15", dir.path())
        .args(["--script", script.to_str().unwrap(), "--prompt", "hi"])
        .assert()
        .success();
    // One turn (the prompt's) and no failed one: a second turn would say so here.
    let output = second.get_output();
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "[lead] [memory] selected: (none)\n[lead] [memory] extracted: (none)\n"
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "[lead] Hello again.\n"
    );
    assert_eq!(
        mailbox(dir.path()),
        "mailbox lead: ready 0, processing 0, done 1, quarantine 0\n"
    );
}

/// The first process is killed (SIGKILL, its whole process group) while the lead's turn on
/// the mail runs a command; the second delivers the message again, counted as one failure.
#[test]
fn a_result_whose_turn_was_killed_is_delivered_again_and_the_death_counted() {
    let dir = workspace();
    let message = plant_result(dir.path());
    let script = write_script(
        dir.path(),
        json!({"lead": [
            {"content": "Hello."}, {"content": "[]"},
            {"tool_calls": [{"id": "k1", "name": "bash", "arguments": {"command": "touch started && sleep 30"}}]},
            {"content": "never reached"}, {"content": "[]"}
        ]}),
    );
    let mut first = Command::new(assert_cmd::cargo::cargo_bin("ch15"));
    for (key, _) in std::env::vars() {
        if key.starts_with("OPENAI_") {
            first.env_remove(key);
        }
    }
    let config = tempfile::tempdir().unwrap();
    let child = first
        .args([
            "--approve",
            "all",
            "--script",
            script.to_str().unwrap(),
            "--prompt",
            "hi",
        ])
        .env("XDG_CONFIG_HOME", config.path())
        .env_remove("RUST_LOG")
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own group, so the kill takes the command it runs too.
        .process_group(0);
    let mut child = child.spawn().unwrap();
    // Waits for the command to have started (the turn is then mid-way), never for a time.
    let started = dir.path().join("started");
    while !started.exists() {
        assert_eq!(
            child.try_wait().unwrap(),
            None,
            "the first process ended early"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let group = i32::try_from(child.id()).unwrap();
    assert_eq!(unsafe { libc::killpg(group, libc::SIGKILL) }, 0);
    child.wait().unwrap();
    assert_eq!(
        record(dir.path()),
        json!({"id": message.id.to_string(), "turn": "started"})
    );
    assert_eq!(
        mailbox(dir.path()),
        "mailbox lead: ready 0, processing 1, done 0, quarantine 0\n"
    );

    let script = write_script(
        dir.path(),
        json!({"lead": [
            {"content": "Hello again."}, {"content": "[]"},
            {"content": "Yesterday's result, at last."}, {"content": "[]"}
        ]}),
    );
    let second = command("ch15", dir.path())
        .args(["--script", script.to_str().unwrap(), "--prompt", "hi"])
        .assert()
        .success();
    assert_eq!(
        stdout_of(second),
        "[lead] Hello again.\n[lead] Yesterday's result, at last.\n"
    );
    assert_eq!(
        mailbox(dir.path()),
        "mailbox lead: ready 0, processing 0, done 1, quarantine 0\n"
    );
    let done: MailMessage = serde_json::from_slice(
        &std::fs::read(
            dir.path()
                .join(LEAD_MAIL)
                .join("done")
                .join(message.file_name()),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(done.failures, ["the process ended while its turn ran"]);
}
