//! Chapters 11–14 at a real pseudo-terminal: Ctrl-C typed during a `bash` call ends the call
//! and brings the prompt back; Ctrl-C typed at an approval question cancels only the question.
//! Chapters 1–10 have no turn to cancel: Ctrl-C ends the session, and the command with it.

use serde_json::json;

use super::cancel::{alive, poll, sleep_pid};
use crate::pty::Terminal;
use crate::support::{workspace, write_script};

/// A chapter binary at a pseudo-terminal, in the middle of a `bash` call running `sleep 30`:
/// the workspace and data folders (kept alive), the terminal, and the sleep's pid.
/// `--sandbox off`: the test reads the command's pid from outside (inside a PID namespace `$$`
/// is another number); the sandboxed case is covered by `sandbox::`.
fn during_a_sleep_30(
    bin: &str,
    args: &[&str],
) -> (tempfile::TempDir, tempfile::TempDir, Terminal, u32) {
    let dir = workspace();
    let data = tempfile::tempdir().unwrap();
    let script = write_script(
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "echo $$ > sleep.pid; exec sleep 30"}}]}
        ]),
    );
    let script = script.to_str().unwrap();
    let mut all = vec!["--script", script, "--sandbox", "off"];
    all.extend_from_slice(args);
    let mut terminal = Terminal::start(bin, &all, dir.path(), data.path());
    terminal.wait_for(&format!("{bin} >> "), 1);
    terminal.type_keys(b"wait a while\r");
    let sleep = sleep_pid(dir.path());
    (dir, data, terminal, sleep)
}

/// The chapters with a turn to cancel: they share the code path, and each is checked at the
/// terminal (one after the other: four sessions at a pseudo-terminal at once would only slow
/// a loaded machine down).
const CANCELLING: [&str; 4] = ["ch11", "ch12", "ch13", "ch14"];

#[test]
fn ctrl_c_typed_during_a_sleep_30_call_ends_the_call_and_the_prompt_comes_back() {
    for bin in CANCELLING {
        ctrl_c_typed_during_a_sleep_30_call(bin);
    }
}

fn ctrl_c_typed_during_a_sleep_30_call(bin: &str) {
    let (_dir, _data, mut terminal, sleep) = during_a_sleep_30(bin, &["--approve", "all"]);

    // The terminal's line discipline turns the key into SIGINT (no line is being read).
    terminal.type_keys(b"\x03");

    // Bounded by the helpers' patience, not a claim about speed.
    poll(&format!("{bin}: the sleep to be killed"), || {
        (!alive(sleep)).then_some(())
    });
    let prompt = format!("{bin} >> ");
    terminal.wait_for(&prompt, 2);
    let screen = terminal.screen();
    let from = screen.find("[tool] bash").unwrap();
    assert_eq!(
        &screen[from..],
        // `^C`: the terminal echoes the key, as a person sees it.
        format!(
            "[tool] bash {{\"command\":\"echo $$ > sleep.pid; exec sleep 30\"}}\n\
             ^C[cancel] stopping the turn (Ctrl-C again to quit)\n\
             [result] Error [cancelled]: the user cancelled the turn (Ctrl-C) before this call finished\n\
             [cancel] turn cancelled\n\
             {prompt}"
        ),
        "{bin}"
    );
    terminal.type_keys(b"\x04");
    terminal.expect_success();
}

#[test]
fn ctrl_c_typed_at_an_approval_question_cancels_only_the_question() {
    let dir = workspace();
    let data = tempfile::tempdir().unwrap();
    let script = write_script(
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "touch ran"}}]},
            {"content": "not run, then"},
            {"content": "[]"}
        ]),
    );
    let mut terminal = Terminal::start(
        "ch11",
        &["--script", script.to_str().unwrap()],
        dir.path(),
        data.path(),
    );
    terminal.wait_for("ch11 >> ", 1);
    terminal.type_keys(b"run it\r");
    terminal.wait_for("Allow bash touch ran? [y/N] ", 1);

    terminal.type_keys(b"\x03");

    // The turn goes on without the call; the prompt comes back.
    terminal.wait_for("ch11 >> ", 2);
    let screen = terminal.screen();
    let from = screen.find("Allow bash").unwrap();
    assert_eq!(
        &screen[from..],
        "Allow bash touch ran? [y/N] \n\
         [cancel] question q1 cancelled\n\
         [result] Error [permission_denied]: running a command needs approval; approval failed (the question was cancelled), so denied (by execute_asks)\n\
         not run, then\n\
         [memory] extracted: (none)\n\
         ch11 >> "
    );
    assert!(!dir.path().join("ran").exists());
    terminal.type_keys(b"\x04");
    terminal.expect_success();
}

#[test]
fn ctrl_c_at_the_prompt_clears_the_line_and_a_second_one_quits() {
    for bin in CANCELLING {
        ctrl_c_at_the_prompt_clears_the_line_then_quits(bin);
    }
}

fn ctrl_c_at_the_prompt_clears_the_line_then_quits(bin: &str) {
    let dir = workspace();
    let data = tempfile::tempdir().unwrap();
    let script = write_script(dir.path(), json!([]));
    let mut terminal = Terminal::start(
        bin,
        &["--script", script.to_str().unwrap()],
        dir.path(),
        data.path(),
    );
    let prompt = format!("{bin} >> ");
    terminal.wait_for(&prompt, 1);
    terminal.type_keys(b"half a thought");
    terminal.wait_for("half a thought", 1);

    terminal.type_keys(b"\x03");
    terminal.wait_for(&prompt, 2);
    terminal.type_keys(b"\x03");

    assert_eq!(terminal.wait_exit().code(), Some(130), "{bin}");
    let screen = terminal.screen();
    let from = screen.find("[cancel]").unwrap();
    assert_eq!(
        &screen[from..],
        format!("[cancel] (Ctrl-C again to quit)\n{prompt}\nerror: interrupted\n"),
        "{bin}"
    );
}

/// Chapter 1 at a real pseudo-terminal: the command runs in a process group of its own, so the
/// terminal's SIGINT reaches only the agent; the session ends and kills the command's group
/// (it used to keep running after the agent died), and the program exits with 130.
#[test]
fn before_chapter_11_ctrl_c_at_a_terminal_ends_the_session_and_the_running_command() {
    let (_dir, _data, mut terminal, sleep) = during_a_sleep_30("ch01", &[]);

    terminal.type_keys(b"\x03");

    poll("the sleep to be killed", || (!alive(sleep)).then_some(()));
    assert_eq!(terminal.wait_exit().code(), Some(130));
}
