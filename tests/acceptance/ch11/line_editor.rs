//! Chapter 11's interactive mode at a real pseudo-terminal (`script` from util-linux): the
//! line editor reads the prompts, the approval question (chapter 3) still reads its answer from
//! the same terminal in the middle of a turn, and the prompts land in the history file.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

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
    let bin = assert_cmd::cargo::cargo_bin("ch11");
    let line = format!("'{}' --script '{}'", bin.display(), script.display());
    let mut cmd = Command::new("script");
    for (key, _) in std::env::vars() {
        if key.starts_with("OPENAI_") {
            cmd.env_remove(key);
        }
    }
    let mut child = cmd
        .args(["-qec", &line, "/dev/null"])
        .current_dir(dir.path())
        .env_remove("RUST_LOG")
        .env("XDG_DATA_HOME", data.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // What the terminal showed so far, read as it comes.
    let screen = Arc::new(Mutex::new(String::new()));
    let mut stdout = child.stdout.take().unwrap();
    let shown = screen.clone();
    let reader = std::thread::spawn(move || {
        let mut chunk = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut chunk) {
            if n == 0 {
                break;
            }
            let text = String::from_utf8_lossy(&chunk[..n]).replace('\r', "");
            shown.lock().unwrap().push_str(&text);
        }
    });
    // Each answer is typed once its question is on the screen, as a person would: the line
    // editor discards type-ahead when it hands the terminal back (TCSAFLUSH).
    let mut stdin = child.stdin.take().unwrap();
    let mut type_after = |seen: &str, keys: &[u8]| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !screen.lock().unwrap().contains(seen) {
            assert!(
                Instant::now() < deadline,
                "never saw {seen:?}:\n{}",
                screen.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        stdin.write_all(keys).unwrap();
        stdin.flush().unwrap();
    };
    type_after("ch11 >> ", b"run it\r");
    type_after("Allow bash touch ran? [y/N] ", b"y\n");
    type_after("first done\n", b"");
    // The next prompt, then Ctrl-D on its empty line.
    let prompts = |text: &str| text.matches("ch11 >> ").count();
    let deadline = Instant::now() + Duration::from_secs(60);
    while prompts(&screen.lock().unwrap()) < 2 {
        assert!(Instant::now() < deadline, "no second prompt");
        std::thread::sleep(Duration::from_millis(20));
    }
    stdin.write_all(b"\x04").unwrap();
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("ch11 did not end on Ctrl-D");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    reader.join().unwrap();
    assert!(child.wait().unwrap().success());
    let screen = screen.lock().unwrap().clone();
    // The screen is full of the editor's escape sequences (the question, too, is read by the
    // line editor now, so a Ctrl-C there cancels it): the exchange is compared whole, as read.
    let screen = crate::pty::plain(&screen);
    assert!(
        screen.contains("Allow bash touch ran? [y/N] y\n[result] ok: 1 line, 11 bytes\n"),
        "the approved call did not run:\n{screen}"
    );
    assert!(dir.path().join("ran").exists());
    let history = std::fs::read_to_string(data.path().join("agent-tutorial/history")).unwrap();
    assert_eq!(history, "run it\n");
}
