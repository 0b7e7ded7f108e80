//! Chapter 11, Ctrl-C: the real `ch11` binary gets a real SIGINT while a `bash` call or a model
//! call is running. Waits are bounded polls on what the run leaves behind (a pid file, an
//! accepted connection, the exit), never a fixed sleep.

use std::io::{BufRead, Read, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use agent_core::cancel::CANCELLED_MESSAGE;
use agent_core::{Message, ModelRequest, validate_pairing};
use serde_json::json;

use crate::support::{workspace, write_script};

/// Far beyond any of these waits on a loaded machine; only a regression gets near it.
const PATIENCE: Duration = Duration::from_secs(60);

/// Records its pid (the `exec`ed sleep's), then sleeps 30 s: a call that would outlive the test.
const SLEEP_COMMAND: &str = "echo $$ > sleep.pid; exec sleep 30";

/// `ch11 ARGS` in `dir`, with every `OPENAI_*` and `RUST_LOG` removed and `env` set.
fn spawn_ch11(dir: &Path, args: &[&str], env: &[(&str, &str)], stdin: Stdio) -> Child {
    spawn_chapter("ch11", dir, args, env, stdin)
}

/// The chapter binary `bin` with `ARGS` in `dir`, with every `OPENAI_*` and `RUST_LOG`
/// removed and `env` set. Without the sandbox: these tests read a command's `$$` and look
/// for it from outside, which a PID namespace would make another process's number (the
/// sandbox's own kill tests are in `sandbox.rs`).
pub(crate) fn spawn_chapter(
    bin: &str,
    dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    stdin: Stdio,
) -> Child {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin(bin));
    for (key, _) in std::env::vars() {
        if key.starts_with("OPENAI_") {
            cmd.env_remove(key);
        }
    }
    cmd.env_remove("RUST_LOG")
        .envs(env.iter().copied())
        .current_dir(dir)
        .args(args)
        .args(["--sandbox", "off"])
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Polls `ready` until it gives a value, at most [`PATIENCE`].
pub(crate) fn poll<T>(what: &str, mut ready: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(value) = ready() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub(crate) fn interrupt(child: &Child) {
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill only sends a signal, to the child this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
}

pub(crate) fn wait_exit(child: &mut Child) -> ExitStatus {
    poll("the run to end", || child.try_wait().unwrap())
}

/// Whether `pid` is a live process (a zombie waiting for its reaper counts as gone).
pub(crate) fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// The pid `SLEEP_COMMAND` wrote, once the call has started.
pub(crate) fn sleep_pid(dir: &Path) -> u32 {
    poll("the bash call to start", || {
        std::fs::read_to_string(dir.join("sleep.pid"))
            .ok()
            .and_then(|text| text.trim().parse().ok())
    })
}

fn read_all(pipe: Option<impl Read>) -> String {
    let mut text = String::new();
    pipe.unwrap().read_to_string(&mut text).unwrap();
    text
}

fn recorded(path: &Path) -> Vec<ModelRequest> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn cancelled_result() -> String {
    format!("Error [cancelled]: {CANCELLED_MESSAGE}")
}

#[test]
fn ctrl_c_during_a_bash_call_kills_it_and_exits_130() {
    let dir = workspace();
    let script = write_script(
        dir.path(),
        json!([{"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": SLEEP_COMMAND}}]}]),
    );
    let record = dir.path().join("requests.jsonl");
    let mut child = spawn_ch11(
        dir.path(),
        &[
            "--script",
            script.to_str().unwrap(),
            "--approve",
            "all",
            "--record",
            record.to_str().unwrap(),
            "--prompt",
            "wait a while",
        ],
        &[],
        Stdio::null(),
    );
    let sleep = sleep_pid(dir.path());
    assert!(alive(sleep));

    interrupt(&child);

    assert_eq!(wait_exit(&mut child).code(), Some(130));
    poll("the sleep to be killed", || (!alive(sleep)).then_some(()));
    assert_eq!(read_all(child.stdout.take()), "");
    assert_eq!(
        read_all(child.stderr.take()),
        format!(
            "[memory] selected: (none)\n\
             [tool] bash {{\"command\":\"{}\"}}\n\
             [cancel] stopping the turn (Ctrl-C again to quit)\n\
             [result] {}\n\
             error: cancelled: the turn was stopped before it finished\n",
            SLEEP_COMMAND.replace('"', "\\\""),
            cancelled_result()
        )
    );
    // What the run stored: the one request it sent (the script's reply was not left unused
    // on purpose; the run ended where the user stopped it).
    let requests = recorded(&record);
    assert_eq!(requests.len(), 1);
    assert_eq!(validate_pairing(&requests[0].messages), Ok(()));
}

/// Accepts one connection on 127.0.0.1, reads the request's first line and never answers.
fn silent_server() -> (u16, std::sync::mpsc::Receiver<String>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(&stream)
            .read_line(&mut line)
            .unwrap();
        tx.send(line).unwrap();
        // Holds the connection open, silent, until the test process ends.
        std::thread::park();
        drop(stream);
    });
    (port, rx)
}

#[test]
fn ctrl_c_during_a_model_call_exits_130() {
    let dir = workspace();
    let (port, requested) = silent_server();
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let mut child = spawn_ch11(
        dir.path(),
        &["--base-url", &base_url, "--model", "m", "--prompt", "hello"],
        &[
            ("OPENAI_API_KEY", "sk-test-not-a-key"),
            ("OPENAI_FALLBACK_MODEL", "m-small"),
        ],
        Stdio::null(),
    );
    let line = requested.recv_timeout(PATIENCE).unwrap();
    assert_eq!(line, "POST /v1/chat/completions HTTP/1.1\r\n");

    interrupt(&child);

    assert_eq!(wait_exit(&mut child).code(), Some(130));
    assert_eq!(read_all(child.stdout.take()), "");
    assert_eq!(
        read_all(child.stderr.take()),
        "[memory] selected: (none)\n\
         [cancel] stopping the turn (Ctrl-C again to quit)\n\
         error: cancelled: the turn was stopped before it finished\n"
    );
}

#[test]
fn a_cancelled_turn_returns_to_the_prompt_and_the_next_one_sends_the_closed_history() {
    let dir = workspace();
    let script = write_script(
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": SLEEP_COMMAND}}]},
            {"content": "still here"},
            {"content": "[]"}
        ]),
    );
    let record = dir.path().join("requests.jsonl");
    let mut child = spawn_ch11(
        dir.path(),
        &[
            "--script",
            script.to_str().unwrap(),
            "--approve",
            "all",
            "--record",
            record.to_str().unwrap(),
        ],
        &[],
        Stdio::piped(),
    );
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"wait a while\n").unwrap();
    let sleep = sleep_pid(dir.path());

    interrupt(&child);
    // Read once the cancelled turn is over; the pipe holds it until then.
    stdin.write_all(b"are you there?\n").unwrap();
    drop(stdin);

    assert_eq!(wait_exit(&mut child).code(), Some(0));
    poll("the sleep to be killed", || (!alive(sleep)).then_some(()));
    assert_eq!(read_all(child.stdout.take()), "still here\n");
    let requests = recorded(&record);
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(validate_pairing(&request.messages), Ok(()));
    }
    // The second turn's request carries the first, closed: the call answered `cancelled`.
    let conversation: Vec<Message> = requests[1].messages[1..]
        .iter()
        .map(|m| Message::clone(m))
        .collect();
    assert_eq!(
        conversation,
        vec![
            Message::user("wait a while"),
            Message::Assistant {
                content: None,
                tool_calls: vec![agent_core::ToolCall {
                    id: "c1".into(),
                    name: "bash".into(),
                    arguments: json!({"command": SLEEP_COMMAND}).to_string(),
                }],
            },
            Message::tool_result("c1", cancelled_result()),
            Message::user("are you there?"),
        ]
    );
}

/// Answers the turn's request (it offers tools) at once; a side call (memory's, no tools)
/// presses Ctrl-C and then never answers.
struct CtrlCDuringSideCalls(agent_core::Cancellation);

#[async_trait::async_trait]
impl agent_core::ModelClient for CtrlCDuringSideCalls {
    async fn complete(
        &self,
        request: &ModelRequest,
    ) -> Result<agent_core::ModelReply, agent_core::ModelError> {
        if !request.tools.is_empty() {
            return Ok(agent_core::ModelReply::text("the answer"));
        }
        self.0.cancel();
        std::future::pending().await
    }
}

#[tokio::test]
async fn a_ctrl_c_after_the_answer_only_skips_memory_extraction() {
    // Before, the finished turn became `Cancelled`: the answer was never printed and a
    // one-shot run exited 130.
    let dir = workspace();
    let cancel = agent_core::Cancellation::new();
    let deps = agent_tutorial::AgentDeps::new(
        std::sync::Arc::new(CtrlCDuringSideCalls(cancel.clone())),
        agent_tools::Workspace::new(dir.path()).unwrap(),
    );
    let mut agent =
        agent_tutorial::build_agent(agent_tutorial::Profile::for_chapter(11).unwrap(), deps)
            .unwrap();
    let outcome = agent.run_turn_cancellable("hi", &cancel).await.unwrap();
    assert_eq!(
        (outcome.final_text.as_str(), cancel.is_cancelled()),
        ("the answer", true)
    );
}

/// Chapters 1–10 have no turn to go back to after a Ctrl-C: it ends the session, and the
/// command running then dies with it (it runs in its own process group, which the terminal's
/// SIGINT never reaches; the session drops the call, and the group with it).
#[test]
fn before_chapter_11_ctrl_c_ends_the_run_and_the_running_command_with_it() {
    let dir = workspace();
    let script = write_script(
        dir.path(),
        json!([{"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": SLEEP_COMMAND}}]}]),
    );
    let mut child = spawn_chapter(
        "ch02",
        dir.path(),
        &[
            "--script",
            script.to_str().unwrap(),
            "--prompt",
            "wait a while",
        ],
        &[],
        Stdio::null(),
    );
    let sleep = sleep_pid(dir.path());
    assert!(alive(sleep));

    interrupt(&child);

    assert_eq!(wait_exit(&mut child).code(), Some(130));
    poll("the sleep to be killed", || (!alive(sleep)).then_some(()));
    assert_eq!(read_all(child.stdout.take()), "");
    assert_eq!(
        read_all(child.stderr.take()),
        format!(
            "[tool] bash {{\"command\":\"{}\"}}\n\
             error: cancelled: the turn was stopped before it finished\n",
            SLEEP_COMMAND.replace('"', "\\\"")
        )
    );
}
