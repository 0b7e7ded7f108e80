//! Chapter 11's interactive mode at a real pseudo-terminal (`script` from util-linux): the
//! line editor reads the prompts, the approval question (chapter 3) still reads its answer from
//! the same terminal in the middle of a turn, and the prompts land in the history file.

use serde_json::json;

use crate::pty::Terminal;
use crate::support::{workspace, write_script};

#[test]
fn at_a_terminal_the_editor_reads_prompts_approval_still_asks_and_history_is_kept() {
    let dir = workspace();
    let data = tempfile::tempdir().unwrap();
    let script = write_script(
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "touch ran"}}]},
            {"content": "first done"},
            {"content": "[]"}
        ]),
    );
    let mut terminal = Terminal::start(
        "ch11",
        &["--script", script.to_str().unwrap()],
        dir.path(),
        data.path(),
    );
    // Each answer is typed once its question is on the screen, as a person would: the line
    // editor discards type-ahead when it hands the terminal back (TCSAFLUSH).
    terminal.wait_for("ch11 >> ", 1);
    terminal.type_keys(b"run it\r");
    terminal.wait_for("Allow bash touch ran? [y/N] ", 1);
    terminal.type_keys(b"y\n");
    terminal.wait_for("first done\n", 1);
    // The next prompt, then Ctrl-D on its empty line.
    terminal.wait_for("ch11 >> ", 2);
    terminal.type_keys(b"\x04");
    terminal.expect_success();
    // The screen is full of the editor's escape sequences (the question, too, is read by the
    // line editor now, so a Ctrl-C there cancels it): the exchange is compared whole, as read.
    let screen = terminal.screen();
    assert!(
        screen.contains("Allow bash touch ran? [y/N] y\n[result] ok: 1 line, 11 bytes\n"),
        "the approved call did not run:\n{screen}"
    );
    assert!(dir.path().join("ran").exists());
    let history = std::fs::read_to_string(data.path().join("agent-tutorial/history")).unwrap();
    assert_eq!(history, "run it\n");
}
