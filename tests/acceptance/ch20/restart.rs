//! Chapter 20 across real processes: a session plans (a task, a board task, a durable
//! schedule, a memory), answers one result from its mailbox and is killed (SIGKILL, its whole
//! process group) while it works on a second; the next session in the same folder finds all
//! of it on disk, delivers only the message whose turn was cut short, and asks the model
//! nothing it was asked before (its script has no reply to spare: one more call would fail).

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use agent_core::AgentId;
use agent_team::{MailKind, MailMessage, MessageId};
use serde_json::json;

use crate::support::{command, stdout_of, workspace, write_script};

/// A result `alice` left for the lead before the first process started: number `n`.
fn plant_result(dir: &Path, n: u64, body: &str) {
    let ready = dir.join(".agent_tutorial/mail/lead/ready");
    std::fs::create_dir_all(&ready).unwrap();
    let message = MailMessage {
        id: MessageId::parse(&format!("0000002a-00000000001-{n:012}")).unwrap(),
        from: AgentId::new("alice").unwrap(),
        to: AgentId::lead(),
        kind: MailKind::Result,
        body: body.into(),
        created_at: n,
        failures: vec![],
    };
    std::fs::write(
        ready.join(message.file_name()),
        serde_json::to_vec(&message).unwrap(),
    )
    .unwrap();
}

fn cli(dir: &Path, args: &[&str]) -> String {
    stdout_of(command("agent-tutorial", dir).args(args).assert().success())
}

#[test]
fn a_killed_session_is_rebuilt_from_disk_and_repeats_nothing() {
    let dir = workspace();
    plant_result(dir.path(), 3, "the first result");
    plant_result(dir.path(), 4, "the second result");
    let memory = json!([{
        "name": "typo-owner",
        "type": "project",
        "description": "Who fixes typos",
        "body": "The writer fixes typos in notes.txt."
    }])
    .to_string();
    let script = write_script(
        dir.path(),
        json!({"lead": [
            {"tool_calls": [
                {"id": "c1", "name": "task_create", "arguments": {"subject": "Review the notes", "description": "Read notes.txt once more."}},
                {"id": "c2", "name": "create_task", "arguments": {"subject": "Fix the typo in notes.txt", "description": "teh -> the"}},
                {"id": "c3", "name": "schedule_cron", "arguments": {"cron": "0 9 * * 1", "prompt": "Weekly review.", "durable": true}}
            ]},
            {"content": "Planned."}, {"content": memory},
            // From here on a memory exists: every turn first asks which to show.
            {"content": "[]"}, {"content": "Noted: the first result."}, {"content": "[]"},
            {"content": "[]"},
            {"tool_calls": [{"id": "k1", "name": "bash", "arguments": {"command": "touch started && sleep 30"}}]},
            {"content": "never reached"}, {"content": "[]"}
        ]}),
    );
    let mut first = Command::new(assert_cmd::cargo::cargo_bin("ch20"));
    for (key, _) in std::env::vars() {
        if key.starts_with("OPENAI_") {
            first.env_remove(key);
        }
    }
    let config = tempfile::tempdir().unwrap();
    let mut child = first
        .args(["--approve", "all", "--script"])
        .arg(&script)
        .args(["--prompt", "Plan the work."])
        .env("XDG_CONFIG_HOME", config.path())
        .env_remove("RUST_LOG")
        .env_remove("AGENT_TUTORIAL_BOARD")
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.path().join("first.err")).unwrap())
        // Its own group, so the kill takes the command it runs too.
        .process_group(0)
        .spawn()
        .unwrap();
    // Waits for the command to have started (the turn is then mid-way), never for a time.
    let started = dir.path().join("started");
    while !started.exists() {
        assert_eq!(
            child.try_wait().unwrap(),
            None,
            "the first process ended early: {}",
            std::fs::read_to_string(dir.path().join("first.err")).unwrap()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let group = i32::try_from(child.id()).unwrap();
    assert_eq!(unsafe { libc::killpg(group, libc::SIGKILL) }, 0);
    child.wait().unwrap();

    let script = write_script(
        dir.path(),
        json!({"lead": [
            {"content": "[\"typo-owner\"]"}, {"content": "Hello again."}, {"content": "[]"},
            {"content": "[]"}, {"content": "The second result, at last."}, {"content": "[]"}
        ]}),
    );
    let second = command("ch20", dir.path())
        .args(["--approve", "all", "--script"])
        .arg(&script)
        .args(["--prompt", "Where are we?"])
        .assert()
        .success();
    assert_eq!(
        stdout_of(second),
        "[lead] Hello again.\n[lead] The second result, at last.\n"
    );
    assert_eq!(
        [
            cli(dir.path(), &["mailbox", "lead"]),
            cli(dir.path(), &["tasks", "list"]),
            cli(dir.path(), &["tasks", "list", "--board"]),
            cli(dir.path(), &["memory", "list"]),
        ],
        [
            "mailbox lead: ready 0, processing 0, done 2, quarantine 0\n",
            "#1 [pending] Review the notes (ready)\n",
            "#1 [pending] Fix the typo in notes.txt (ready)\n",
            "typo-owner  (project)  Who fixes typos\n",
        ]
    );
    // The first result was acknowledged before the kill and never delivered again; the second
    // was delivered again, the death counted on it.
    let failures = |n: u64| -> Vec<String> {
        let done = dir.path().join(".agent_tutorial/mail/lead/done");
        let name = format!("{n:020}-0000002a-00000000001-{n:012}.json");
        let message: MailMessage =
            serde_json::from_slice(&std::fs::read(done.join(name)).unwrap()).unwrap();
        message.failures
    };
    assert_eq!(
        [failures(3), failures(4)],
        [
            vec![],
            vec!["the process ended while its turn ran".to_string()]
        ]
    );
    let crons = cli(dir.path(), &["cron", "list"]);
    let row: Vec<&str> = crons.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(row[..8], ["1", "durable", "0", "9", "*", "*", "1", "UTC"]);
}
