//! The OS sandbox (docs/sandbox.md), through the real binaries on the real kernel: what a
//! command can reach of the agent, what it may write, the network, what survives the agent
//! (`ends`), and the fallbacks with their warning lines.

use std::path::Path;
use std::process::Stdio;

use serde_json::json;

use crate::support::{command, workspace, write_script};

mod ends;

const KEY: &str = "sk-test-SANDBOX-0123456789abcdef";

/// Runs chapter `bin` on `script` in `dir` with the key in the environment, `env` set and
/// `args` added; returns the last request's messages and the agent's stderr, after checking
/// that neither its output nor any request holds the key.
fn run(
    bin: &str,
    dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    script: serde_json::Value,
) -> (Vec<String>, String) {
    let script = write_script(dir, script);
    let record = dir.join("requests.jsonl");
    let config = tempfile::tempdir().unwrap();
    let output = command(bin, dir)
        .env("OPENAI_API_KEY", KEY)
        .env("XDG_CONFIG_HOME", config.path())
        .envs(env.iter().copied())
        .args(["--approve", "all", "--prompt", "run it", "--script"])
        .arg(&script)
        .arg("--record")
        .arg(&record)
        .args(args)
        .assert()
        .success()
        .get_output()
        .clone();
    let requests = std::fs::read_to_string(&record).unwrap();
    std::fs::remove_file(&record).unwrap();
    assert_eq!(count(requests.as_bytes(), KEY), 0);
    assert_eq!(count(&output.stdout, KEY) + count(&output.stderr, KEY), 0);
    let last: agent_core::ModelRequest =
        serde_json::from_str(requests.lines().last().unwrap()).unwrap();
    let texts = last.messages.iter().map(|m| m.text().to_string()).collect();
    (texts, String::from_utf8_lossy(&output.stderr).into_owned())
}

/// Runs `bash{command}` once in chapter 1; returns the tool result the model saw and the
/// agent's stderr.
fn bash(dir: &Path, args: &[&str], env: &[(&str, &str)], command_line: &str) -> (String, String) {
    let (texts, stderr) = run(
        "ch01",
        dir,
        args,
        env,
        json!([
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": command_line}}]},
            {"content": "done"}
        ]),
    );
    (texts.last().cloned().unwrap_or_default(), stderr)
}

fn count(hay: &[u8], needle: &str) -> usize {
    hay.windows(needle.len())
        .filter(|w| *w == needle.as_bytes())
        .count()
}

/// A workspace with a `.git/` (config and hooks folder) and a folder outside it.
fn repo() -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = workspace();
    std::fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
    std::fs::write(dir.path().join(".git/config"), "[core]\n").unwrap();
    (dir, tempfile::tempdir().unwrap())
}

/// A shell line that tries to write each place and says which were written.
fn write_each(outside: &Path) -> String {
    format!(
        "for p in inside.txt {}/.bashrc .git/config .git/hooks/x; do \
         if {{ echo x >> \"$p\"; }} 2>/dev/null; then echo \"$p: written\"; else echo \"$p: refused\"; fi; done",
        outside.display()
    )
}

#[test]
fn the_agent_is_out_of_sight_and_its_key_out_of_reach() {
    for mode in ["workspace-write", "read-only"] {
        let (dir, _outside) = repo();
        let (seen, _) = bash(
            dir.path(),
            &["--sandbox", mode],
            &[],
            "echo \"parent $PPID\"; tr '\\0' '\\n' < /proc/$PPID/environ; cat /proc/$PPID/mem; \
             kill -QUIT $PPID; ls /proc | grep -c '^[0-9]*$' >/dev/null; true",
        );
        assert_eq!(seen.lines().next(), Some("parent 1"), "{mode}: {seen}");
        assert_eq!(count(seen.as_bytes(), KEY), 0, "{mode}: {seen}");
        assert_eq!(count(seen.as_bytes(), "OPENAI_"), 0, "{mode}: {seen}");
        let core = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("core")
            })
            .count();
        assert_eq!(core, 0, "{mode}");
    }
}

#[test]
fn workspace_write_refuses_writes_outside_and_to_git() {
    let (dir, outside) = repo();
    let (seen, _) = bash(dir.path(), &[], &[], &write_each(outside.path()));
    let out = outside.path().display();
    assert_eq!(
        seen,
        format!(
            "inside.txt: written\n{out}/.bashrc: refused\n.git/config: refused\n.git/hooks/x: refused\n"
        )
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".git/config")).unwrap(),
        "[core]\n"
    );
}

#[test]
fn read_only_refuses_every_write() {
    let (dir, outside) = repo();
    let (seen, _) = bash(
        dir.path(),
        &["--sandbox", "read-only"],
        &[],
        &format!(
            "{}; echo tmp > $TMPDIR/t && cat $TMPDIR/t",
            write_each(outside.path())
        ),
    );
    let out = outside.path().display();
    assert_eq!(
        seen,
        format!(
            "inside.txt: refused\n{out}/.bashrc: refused\n.git/config: refused\n.git/hooks/x: refused\ntmp\n"
        )
    );
}

#[test]
fn a_refused_command_is_told_it_was_the_sandbox() {
    let (dir, _outside) = repo();
    let (seen, _) = bash(dir.path(), &[], &[], "echo x > .git/config");
    assert_eq!(
        seen,
        "bash: line 1: .git/config: Read-only file system\n\n[exit code: 1]\n[the sandbox \
         (workspace-write, network off) refuses writes outside the workspace and to .git/ and \
         the network; if the command needs more, ask the user to rerun with more access \
         (--sandbox workspace-write or off, --sandbox-network on)]"
    );
}

#[test]
fn the_network_is_off_unless_allowed() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let line = format!("(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo connected");
    let (dir, _outside) = repo();
    let (off, _) = bash(dir.path(), &[], &[], &format!("{line} || echo refused"));
    let (on, _) = bash(dir.path(), &["--sandbox-network", "on"], &[], &line);
    assert_eq!([off.as_str(), on.as_str()], ["refused\n", "connected\n"]);
}

/// The writes a probe gets with `AGENT_TUTORIAL_SANDBOX_FALLBACK=forced`, and the warning.
fn fallback(forced: &str) -> (String, Option<String>) {
    let (dir, outside) = repo();
    let (seen, stderr) = bash(
        dir.path(),
        &[],
        &[("AGENT_TUTORIAL_SANDBOX_FALLBACK", forced)],
        &write_each(outside.path()),
    );
    let warning = stderr
        .lines()
        .find(|l| l.starts_with("sandbox:"))
        .map(str::to_string);
    (
        seen.replace(&outside.path().display().to_string(), "<outside>"),
        warning,
    )
}

#[test]
fn the_landlock_fallback_says_what_it_lost() {
    // Landlock alone cannot carve .git/ out of the writable workspace: the line says so.
    assert_eq!(
        fallback("landlock"),
        (
            "inside.txt: written\n<outside>/.bashrc: refused\n.git/config: written\n.git/hooks/x: written\n"
                .to_string(),
            Some(
                "sandbox: AGENT_TUTORIAL_SANDBOX_FALLBACK=landlock; commands run under Landlock \
                 only — not enforced: a private /proc (the agent's processes stay visible), \
                 .git/ read-only, network off for UDP and local sockets, and the end of a \
                 process that leaves its group and clears its environment"
                    .to_string()
            )
        )
    );
}

#[test]
fn the_unconfined_fallback_says_what_it_lost() {
    assert_eq!(
        fallback("none"),
        (
            "inside.txt: written\n<outside>/.bashrc: written\n.git/config: written\n.git/hooks/x: written\n"
                .to_string(),
            Some(
                "sandbox: AGENT_TUTORIAL_SANDBOX_FALLBACK=none; commands run unconfined — not \
                 enforced: file writes outside the workspace, .git/ read-only, network off, a \
                 private /proc, and the end of a process that leaves its group and clears its \
                 environment"
                    .to_string()
            )
        )
    );
}

/// What a command learns of the agent and which writes it gets, as the lines a probe prints.
fn probe(outside: &Path) -> String {
    format!(
        "echo \"parent $PPID\"; tr '\\0' '\\n' < /proc/$PPID/environ 2>&1; \
         cat /proc/$PPID/mem 2>&1 | head -c 100; echo; kill -QUIT $PPID; {}; echo END",
        write_each(outside)
    )
}

/// The probe's verdicts: its first line, and each `path: written|refused` line.
fn verdicts(text: &str, outside: &Path) -> Vec<String> {
    let out = outside.display().to_string();
    let first = text
        .lines()
        .find(|l| l.contains("parent "))
        .map(|l| l[l.find("parent ").unwrap_or(0)..].to_string())
        .unwrap_or_default();
    std::iter::once(first)
        .chain(
            text.lines()
                .filter(|l| l.ends_with(": written") || l.ends_with(": refused"))
                .map(|l| l.replace(&out, "<outside>")),
        )
        .collect()
}

/// The message of the last request that holds the probe's output (a job's notice may come
/// after it).
fn last_result(bin: &str, dir: &Path, args: &[&str], script: serde_json::Value) -> String {
    run(bin, dir, args, &[], script)
        .0
        .into_iter()
        .find(|text| text.contains("parent "))
        .unwrap_or_default()
}

/// What a probe in `mode` must find: pid 1 for a parent, no key, and `mode`'s refusals.
fn assert_probe(text: &str, outside: &Path, mode: &str) {
    assert_eq!(verdicts(text, outside), expected(mode), "{mode}: {text}");
    assert_eq!(count(text.as_bytes(), KEY), 0, "{mode}: {text}");
    assert_eq!(count(text.as_bytes(), "OPENAI_"), 0, "{mode}: {text}");
}

fn expected(mode: &str) -> Vec<String> {
    let ws = if mode == "read-only" {
        "refused"
    } else {
        "written"
    };
    vec![
        "parent 1".to_string(),
        format!("inside.txt: {ws}"),
        "<outside>/.bashrc: refused".to_string(),
        ".git/config: refused".to_string(),
        ".git/hooks/x: refused".to_string(),
    ]
}

#[test]
fn a_background_job_is_sandboxed_like_a_call() {
    for mode in ["workspace-write", "read-only"] {
        let (dir, outside) = repo();
        let text = last_result(
            "ch13",
            dir.path(),
            &["--sandbox", mode],
            json!([
                {"tool_calls": [{"id": "c1", "name": "bash",
                    "arguments": {"command": probe(outside.path()), "run_in_background": true}}]},
                {"tool_calls": [{"id": "c2", "name": "bash", "arguments": {"command":
                    "until grep -qx END .agent_tutorial/jobs/1.log 2>/dev/null; do sleep 0.05; done; cat .agent_tutorial/jobs/1.log"}}]},
                {"content": "done"}
            ]),
        );
        assert_probe(&text, outside.path(), mode);
    }
}

#[test]
fn a_shell_hook_is_sandboxed_like_a_call() {
    for mode in ["workspace-write", "read-only"] {
        let (dir, outside) = repo();
        std::fs::create_dir(dir.path().join(".agent_tutorial")).unwrap();
        std::fs::write(
            dir.path().join(".agent_tutorial/hooks.json"),
            json!([{"event": "PreToolUse", "matcher": "glob",
                    "command": format!("{{ {}; }} >&2; exit 1", probe(outside.path()))}])
            .to_string(),
        )
        .unwrap();
        let text = last_result(
            "ch04",
            dir.path(),
            &["--sandbox", mode, "--trust-hooks"],
            json!([
                {"tool_calls": [{"id": "c1", "name": "glob", "arguments": {"pattern": "*"}}]},
                {"content": "done"}
            ]),
        );
        assert_probe(&text, outside.path(), mode);
    }
}

/// A listener on 127.0.0.1 and the shell line that connects to it and says `connected` or
/// `refused`, then `END`.
fn local_listener() -> (std::net::TcpListener, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let line = format!(
        "if (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null; then echo connected; else echo refused; fi; echo END"
    );
    (listener, line)
}

/// The lines ending in a verdict (`connected` / `refused`) of the first message that holds the
/// probe's `END`, under each `--sandbox-network` setting.
fn network_verdicts(
    bin: &str,
    args: &[&str],
    script: impl Fn() -> serde_json::Value,
    setup: impl Fn(&Path),
) -> Vec<Vec<String>> {
    ["off", "on"]
        .iter()
        .map(|network| {
            let (dir, _outside) = repo();
            setup(dir.path());
            let mut all = vec!["--sandbox-network", network];
            all.extend_from_slice(args);
            run(bin, dir.path(), &all, &[], script())
                .0
                .into_iter()
                .find(|text| text.lines().any(|l| l.ends_with("END")))
                .unwrap_or_default()
                .lines()
                .filter(|l| ["connected", "refused"].iter().any(|v| l.ends_with(v)))
                .map(str::to_string)
                .collect()
        })
        .collect()
}

#[test]
fn a_background_job_has_the_network_only_when_allowed() {
    let (_listener, line) = local_listener();
    let seen = network_verdicts(
        "ch13",
        &[],
        || {
            json!([
                {"tool_calls": [{"id": "c1", "name": "bash",
                    "arguments": {"command": line, "run_in_background": true}}]},
                {"tool_calls": [{"id": "c2", "name": "bash", "arguments": {"command":
                    "until grep -qx END .agent_tutorial/jobs/1.log 2>/dev/null; do sleep 0.05; done; cat .agent_tutorial/jobs/1.log"}}]},
                {"content": "done"}
            ])
        },
        |_| {},
    );
    assert_eq!(seen, [["refused"], ["connected"]]);
}

#[test]
fn a_shell_hook_has_the_network_only_when_allowed() {
    let (_listener, line) = local_listener();
    let seen = network_verdicts(
        "ch04",
        &["--trust-hooks"],
        || {
            json!([
                {"tool_calls": [{"id": "c1", "name": "glob", "arguments": {"pattern": "*"}}]},
                {"content": "done"}
            ])
        },
        |dir| {
            std::fs::create_dir(dir.join(".agent_tutorial")).unwrap();
            std::fs::write(
                dir.join(".agent_tutorial/hooks.json"),
                json!([{"event": "PreToolUse", "matcher": "glob",
                        "command": format!("{{ {line}; }} >&2; exit 1")}])
                .to_string(),
            )
            .unwrap();
        },
    );
    let failed =
        "Error [hook_error]: PreToolUse hook `hooks.json#0` failed: exited with exit status: 1";
    assert_eq!(
        seen,
        [
            [format!("{failed}: refused")],
            [format!("{failed}: connected")]
        ]
    );
}

#[test]
fn sigquit_from_an_unsandboxed_command_leaves_no_core_file() {
    // Even with the sandbox off a command can signal the agent; the agent set a zero core
    // limit and is not dumpable, so the key does not land in a core file.
    let dir = workspace();
    let script = write_script(
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "kill -QUIT $PPID; sleep 5"}}]},
            {"content": "done"}
        ]),
    );
    let mut agent = std::process::Command::new(assert_cmd::cargo::cargo_bin("ch01"));
    // As `prlimit --core=unlimited` would: the agent starts allowed to dump core.
    // SAFETY: setrlimit is async-signal-safe and changes only the child.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut agent, || {
            let unlimited = libc::rlimit {
                rlim_cur: libc::RLIM_INFINITY,
                rlim_max: libc::RLIM_INFINITY,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &unlimited);
            Ok(())
        });
    }
    let status = agent
        .env_remove("RUST_LOG")
        .env("OPENAI_API_KEY", KEY)
        .current_dir(dir.path())
        .args(["--sandbox", "off", "--prompt", "quit", "--script"])
        .arg(&script)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let cores: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("core"))
        .collect();
    assert_eq!(
        (
            std::os::unix::process::ExitStatusExt::signal(&status),
            cores
        ),
        (Some(libc::SIGQUIT), Vec::<String>::new())
    );
}
