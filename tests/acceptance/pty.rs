//! A chapter binary at a real pseudo-terminal, typed at like a person would.
//!
//! The terminal is `script` (util-linux), as in the line-editor test: it opens the
//! pseudo-terminal, makes it the child's controlling terminal in a session of its own (so the
//! line discipline turns a typed Ctrl-C into SIGINT for the foreground group, as a real terminal
//! does), and copies our keys in and the screen out. `libc::openpty` would need all of that by
//! hand (fork, setsid, TIOCSCTTY) in a test process that runs other tests on threads.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Far beyond any wait here on a loaded machine; only a regression gets near it.
const PATIENCE: Duration = Duration::from_secs(60);

/// A running binary at a pseudo-terminal.
pub struct Terminal {
    child: Child,
    keys: Option<ChildStdin>,
    screen: Arc<Mutex<String>>,
}

/// The screen's text without the editor's escape sequences (CSI, and the bare `\r`): what a
/// person reads.
pub fn plain(screen: &str) -> String {
    let mut out = String::with_capacity(screen.len());
    let mut chars = screen.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' if chars.peek() == Some(&'[') => {
                chars.next();
                // Parameters and intermediates, then one final byte in @..~.
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

/// `script` (util-linux) set up to run `bin ARGS` in `dir` at a new pseudo-terminal, with
/// `OPENAI_*` and `RUST_LOG` removed.
///
/// `script` runs the line with `$SHELL -c`. The line begins with `exec` so the binary itself is
/// the terminal's session leader whatever the shell: dash (Debian's `/bin/sh`, `script`'s
/// default without `$SHELL`) otherwise waits as the parent in the foreground group, a typed
/// Ctrl-C ends it, and `script` reports 130 for a program that handled the key and went on.
pub fn script_command(bin: &str, args: &[&str], dir: &Path) -> Command {
    let bin = assert_cmd::cargo::cargo_bin(bin);
    let mut line = format!("exec '{}'", bin.display());
    for arg in args {
        line.push_str(&format!(" '{arg}'"));
    }
    let mut cmd = Command::new("script");
    for (key, _) in std::env::vars() {
        if key.starts_with("OPENAI_") {
            cmd.env_remove(key);
        }
    }
    cmd.args(["-qec", &line, "/dev/null"])
        .current_dir(dir)
        .env_remove("RUST_LOG")
        // The shell the tests were written against, named rather than inherited.
        .env("SHELL", "/bin/sh");
    cmd
}

impl Terminal {
    /// Starts `bin ARGS` in `dir` at a new pseudo-terminal, `OPENAI_*` and `RUST_LOG` removed,
    /// the prompt history kept in `data`.
    pub fn start(bin: &str, args: &[&str], dir: &Path, data: &Path) -> Self {
        let mut child = script_command(bin, args, dir)
            .env("XDG_DATA_HOME", data)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let screen = Arc::new(Mutex::new(String::new()));
        let mut stdout = child.stdout.take().unwrap();
        let shown = screen.clone();
        std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                shown
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&chunk[..n]));
            }
        });
        let keys = child.stdin.take();
        Self {
            child,
            keys,
            screen,
        }
    }

    /// What the screen showed so far, escape sequences removed.
    pub fn screen(&self) -> String {
        plain(&self.screen.lock().unwrap())
    }

    /// Waits until the screen shows `seen` `times` times or more.
    pub fn wait_for(&self, seen: &str, times: usize) {
        let deadline = Instant::now() + PATIENCE;
        while self.screen().matches(seen).count() < times {
            assert!(
                Instant::now() < deadline,
                "never saw {seen:?} {times} times:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the screen shows `seen` after the first `anchor` (the prompt back after an
    /// answer, say: a key typed before the line editor reads again may meet the terminal in
    /// its cooked mode, where a Ctrl-D is an end of input that never reaches the editor).
    pub fn wait_for_after(&self, anchor: &str, seen: &str) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let screen = self.screen();
            let after = screen.find(anchor).map(|at| &screen[at + anchor.len()..]);
            if after.is_some_and(|rest| rest.contains(seen)) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "never saw {seen:?} after {anchor:?}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types `keys`.
    pub fn type_keys(&mut self, keys: &[u8]) {
        let stdin = self.keys.as_mut().unwrap();
        stdin.write_all(keys).unwrap();
        stdin.flush().unwrap();
    }

    /// Waits for the program to end (Ctrl-D typed or not), returns whether it succeeded.
    pub fn wait_exit(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the program did not end:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Terminal {
    /// Waits for the program to end and fails, showing its status and the screen, unless it
    /// succeeded.
    pub fn expect_success(&mut self) {
        let status = self.wait_exit();
        assert!(
            status.success(),
            "the program ended with {status}:\n{}",
            self.screen()
        );
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        // Closing the keys ends `script` (and the program with it) if a test failed early.
        drop(self.keys.take());
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

#[test]
fn escape_sequences_and_carriage_returns_are_not_text() {
    assert_eq!(
        plain("\u{1b}[?2004h\u{1b}[?2026h\r\u{1b}[Kch11 >> \r\u{1b}[8C\u{1b}[?2026lrun it\r\n"),
        "ch11 >> run it\n"
    );
}
