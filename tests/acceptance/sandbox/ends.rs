//! What ends with the agent, sandboxed: every process a call, a job or a hook leaves behind
//! when the agent gets SIGKILL, SIGTERM or SIGHUP, and the command running when Ctrl-C is
//! typed at a terminal. Processes are found by their command line (`sleeps`): inside the
//! sandbox's PID namespace a command's `$$` is another number.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;

use super::KEY;
use crate::pty::Terminal;
use crate::support::{workspace, write_script};

/// How long a process may take to appear or to die before the test fails.
const PATIENCE: Duration = Duration::from_secs(20);
/// Pids of live processes whose command line is exactly `sleep <seconds>`.
fn sleeps(seconds: u32) -> Vec<u32> {
    let wanted = format!("sleep\0{seconds}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == wanted.as_bytes())
                && std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|s| !s.contains(") Z "))
        })
        .collect()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What leaves the sleeps behind in [`nothing_survives`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LeftBy {
    /// A background job and a foreground `bash` call.
    JobAndCall,
    /// A shell hook at the prompt (`UserPromptSubmit`), which waits on its last sleep.
    Hook,
}

/// Chapter 13 runs what `left_by` names, each leaving a `setsid env -i` sleep and a
/// double-forked one behind (and waiting on a third); `signal` to the agent ends every one of
/// them.
fn nothing_survives(signal: libc::c_int, base: u32, left_by: LeftBy) {
    let dir = workspace();
    let leave = |n: u32| {
        format!(
            "(setsid env -i sleep {} &); (sh -c 'sleep {} &' &); sleep {}",
            n,
            n + 1,
            n + 2
        )
    };
    let (script, offsets, trust) = match left_by {
        LeftBy::JobAndCall => (
            json!([
                {"tool_calls": [{"id": "c1", "name": "bash",
                    "arguments": {"command": leave(base), "run_in_background": true}}]},
                {"tool_calls": [{"id": "c2", "name": "bash", "arguments": {"command": leave(base + 10)}}]},
                {"content": "done"}
            ]),
            vec![0, 1, 2, 10, 11, 12],
            None,
        ),
        LeftBy::Hook => {
            std::fs::create_dir(dir.path().join(".agent_tutorial")).unwrap();
            std::fs::write(
                dir.path().join(".agent_tutorial/hooks.json"),
                json!([{"event": "UserPromptSubmit", "command": leave(base), "timeout_secs": 600}])
                    .to_string(),
            )
            .unwrap();
            (
                json!([{"content": "done"}]),
                vec![0, 1, 2],
                Some("--trust-hooks"),
            )
        }
    };
    let script = write_script(dir.path(), script);
    let mut agent = std::process::Command::new(assert_cmd::cargo::cargo_bin("ch13"));
    agent
        .env_remove("RUST_LOG")
        .env("OPENAI_API_KEY", KEY)
        .current_dir(dir.path())
        .args(["--approve", "all", "--prompt", "go", "--script"])
        .arg(&script)
        .args(trust)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut agent = agent.spawn().unwrap();
    let all = || offsets.iter().flat_map(|n| sleeps(base + n)).count();
    wait_until("every sleep to start", || all() == offsets.len());
    let pid = libc::pid_t::try_from(agent.id()).unwrap();
    // SAFETY: kill only sends a signal, to the child this test started.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    let _ = agent.wait();
    wait_until("every sleep to end", || all() == 0);
    // The helpers removed the calls' private temporary folders before they went.
    let prefix = format!("agent-sandbox-{pid}-");
    let left = || {
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            })
            .count()
    };
    wait_until("the private folders to be removed", || left() == 0);
}

#[test]
fn nothing_survives_sigkill_to_the_agent() {
    nothing_survives(libc::SIGKILL, 3100, LeftBy::JobAndCall);
}

#[test]
fn nothing_survives_sigterm_to_the_agent() {
    nothing_survives(libc::SIGTERM, 3200, LeftBy::JobAndCall);
}

#[test]
fn nothing_survives_sighup_to_the_agent() {
    nothing_survives(libc::SIGHUP, 3300, LeftBy::JobAndCall);
}

#[test]
fn nothing_a_hook_leaves_survives_sigkill_to_the_agent() {
    nothing_survives(libc::SIGKILL, 3600, LeftBy::Hook);
}

#[test]
fn nothing_a_hook_leaves_survives_sigterm_to_the_agent() {
    nothing_survives(libc::SIGTERM, 3700, LeftBy::Hook);
}

#[test]
fn nothing_a_hook_leaves_survives_sighup_to_the_agent() {
    nothing_survives(libc::SIGHUP, 3800, LeftBy::Hook);
}

/// Chapter `bin` at a pseudo-terminal with the default sandbox, in the middle of a `bash` call
/// running `sleep <seconds>`: the workspace and data folders (kept alive) and the terminal.
/// The sleep is found by its command line: inside the sandbox's PID namespace its `$$` is
/// another number.
fn at_a_terminal_during_a_sleep(
    bin: &str,
    args: &[&str],
    seconds: u32,
) -> (tempfile::TempDir, tempfile::TempDir, Terminal) {
    let dir = workspace();
    let data = tempfile::tempdir().unwrap();
    let script = write_script(
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": format!("sleep {seconds}")}}]}
        ]),
    );
    let mut all = vec!["--script", script.to_str().unwrap()];
    all.extend_from_slice(args);
    let mut terminal = Terminal::start(bin, &all, dir.path(), data.path());
    terminal.wait_for(&format!("{bin} >> "), 1);
    terminal.type_keys(b"wait a while\r");
    wait_until("the sleep to start", || sleeps(seconds).len() == 1);
    (dir, data, terminal)
}

/// Chapters 1–10 at a terminal, sandboxed: Ctrl-C ends the session and the sandboxed command
/// with it (the helper's whole PID namespace goes), and the exit code is the interrupt's, 130.
#[test]
fn sandboxed_ctrl_c_at_a_terminal_in_chapter_1_ends_the_command_and_exits_130() {
    let (_dir, _data, mut terminal) = at_a_terminal_during_a_sleep("ch01", &[], 3400);

    terminal.type_keys(b"\x03");

    wait_until("the sleep to end", || sleeps(3400).is_empty());
    assert_eq!(terminal.wait_exit().code(), Some(130));
}

/// Chapter 11 at a terminal, sandboxed: Ctrl-C during a call ends the sandboxed command and
/// the prompt comes back.
#[test]
fn sandboxed_ctrl_c_at_a_terminal_in_chapter_11_ends_the_command_and_the_prompt_comes_back() {
    let (_dir, _data, mut terminal) =
        at_a_terminal_during_a_sleep("ch11", &["--approve", "all"], 3500);

    terminal.type_keys(b"\x03");

    wait_until("the sleep to end", || sleeps(3500).is_empty());
    terminal.wait_for("ch11 >> ", 2);
    let screen = terminal.screen();
    let from = screen.find("[tool] bash").unwrap();
    assert_eq!(
        &screen[from..],
        "[tool] bash {\"command\":\"sleep 3500\"}\n\
         ^C[cancel] stopping the turn (Ctrl-C again to quit)\n\
         [result] Error [cancelled]: the user cancelled the turn (Ctrl-C) before this call finished\n\
         [cancel] turn cancelled\n\
         ch11 >> "
    );
    terminal.type_keys(b"\x04");
    terminal.expect_success();
}
