//! Chapter 4's shell hooks, end to end through the `ch04` binary: the hooks a workspace ships
//! in `.agent_tutorial/hooks.json`, the trust step (a repository's hooks run only after the
//! user trusted that exact file, and stop when one byte of it changes or the trust is
//! revoked), and the files refused as configuration errors.
//!
//! Apart from the in-process hook tests (`ch04.rs`) because these run the binaries
//! (`ch04`, `agent-tutorial trust`) in a scratch workspace with their own config folder: the
//! repository is the attacker here, and what is checked is what a user sees on stderr and
//! what the trust store records.

use predicates::prelude::*;
use serde_json::json;

use crate::support::{command, stderr_of, stdout_of, workspace, write_script};

#[test]
fn chapter_4_loads_shell_hooks_from_the_workspace() {
    let dir = workspace();
    std::fs::create_dir(dir.path().join(".agent_tutorial")).unwrap();
    std::fs::write(
        dir.path().join(".agent_tutorial/hooks.json"),
        json!([
            {"event": "PreToolUse", "matcher": "glob", "command": "cat > event.json; echo '{\"block\": \"no globbing\"}'"},
            {"event": "PreToolUse", "matcher": "read_file", "command": "sleep 5", "timeout_secs": 0.2},
            {"event": "PostToolUse", "command": "echo not-json"}
        ])
        .to_string(),
    )
    .unwrap();
    let script = write_script(
        dir.path(),
        json!([
            {"tool_calls": [
                {"id": "c1", "name": "glob", "arguments": {"pattern": "*"}},
                {"id": "c2", "name": "read_file", "arguments": {"path": "notes.txt"}},
                {"id": "c3", "name": "edit_file", "arguments": {"path": "notes.txt", "old_text": "alpha", "new_text": "a"}}
            ]},
            {"content": "blocked twice"}
        ]),
    );
    // Updated for the trust step: `--trust-hooks` is the explicit bypass (no trust recorded).
    let config = tempfile::tempdir().unwrap();
    command("ch04", dir.path())
        .env("XDG_CONFIG_HOME", config.path())
        .args(["--trust-hooks", "--prompt", "look", "--script"])
        .arg(&script)
        .assert()
        .success()
        .stderr(predicate::str::contains("[result] Error [hook_blocked]: no globbing (hook `hooks.json#0`)"))
        .stderr(predicate::str::contains(
            "[result] Error [hook_error]: PreToolUse hook `hooks.json#1` failed: timed out after 0.2s",
        ))
        // A PostToolUse hook answering garbage is reported, and the run goes on.
        .stderr(predicate::str::contains(
            "PostToolUse hook `hooks.json#2` failed: answered invalid JSON (expected ident at line 1 column 2)",
        ));
    let event: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("event.json")).unwrap())
            .unwrap();
    assert_eq!(
        event,
        json!({"event": "PreToolUse", "call_id": "c1", "tool": "glob", "input": {"pattern": "*"}})
    );
}

// ---- The trust step: a repository's hooks run only after the user trusted that exact file.

/// A UserPromptSubmit hook that leaves `ran` behind, and a PreToolUse hook whose command holds
/// an escape sequence. `#a` is the byte the tests change.
const TOUCH_HOOKS: &str = r#"[{"event": "UserPromptSubmit", "command": "touch ran #a"}, {"event": "PreToolUse", "matcher": "bash", "command": "echo \u001b[2K", "timeout_secs": 0.5}]"#;

fn hooks_workspace(hooks: &str) -> tempfile::TempDir {
    let dir = workspace();
    std::fs::create_dir(dir.path().join(".agent_tutorial")).unwrap();
    std::fs::write(dir.path().join(".agent_tutorial/hooks.json"), hooks).unwrap();
    write_script(dir.path(), json!([{"content": "done"}]));
    dir
}

/// Runs one scripted ch04 turn; returns (stderr, whether the hook left `ran`).
fn run_ch04(dir: &std::path::Path, config: &std::path::Path, approve: &str) -> (String, bool) {
    let _ = std::fs::remove_file(dir.join("ran"));
    let assert = command("ch04", dir)
        .env("XDG_CONFIG_HOME", config)
        .args([
            "--approve",
            approve,
            "--prompt",
            "hi",
            "--script",
            "script.json",
        ])
        .assert()
        .success();
    let stderr = stderr_of(assert);
    (stderr, dir.join("ran").exists())
}

fn trust(
    dir: &std::path::Path,
    config: &std::path::Path,
    extra: &[&str],
) -> assert_cmd::assert::Assert {
    command("agent-tutorial", dir)
        .env("XDG_CONFIG_HOME", config)
        .arg("trust")
        .args(extra)
        .assert()
}

fn notice(dir: &std::path::Path, state: &str) -> String {
    format!(
        "hooks in .agent_tutorial/hooks.json {state} (2), so none will run; review and trust them with: agent-tutorial trust --workspace {}\n",
        dir.canonicalize().unwrap().display()
    )
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("{:x}", sha2::Sha256::digest(bytes))
}

#[test]
fn hooks_in_an_untrusted_workspace_do_not_run_whatever_the_approval_mode() {
    let dir = hooks_workspace(TOUCH_HOOKS);
    let config = tempfile::tempdir().unwrap();
    for approve in ["all", "none"] {
        let (stderr, ran) = run_ch04(dir.path(), config.path(), approve);
        assert_eq!(
            stderr,
            notice(dir.path(), "are not trusted"),
            "--approve {approve}"
        );
        assert!(!ran, "--approve {approve}: an untrusted hook ran");
    }
    // A run only reads trust; it never records any.
    assert_eq!(std::fs::read_dir(config.path()).unwrap().count(), 0);
}

#[test]
fn trust_lists_every_hook_and_they_run_until_one_byte_of_the_file_changes() {
    let dir = hooks_workspace(TOUCH_HOOKS);
    let config = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let trust_file = config.path().join("agent-tutorial/trusted.json");
    let out = stdout_of(
        trust(
            dir.path(),
            config.path(),
            &["--yes", "--workspace", root.to_str().unwrap()],
        )
        .success(),
    );
    assert_eq!(
        out,
        format!(
            "In {root}, this runs code or goes into the model's prompt (hooks run as you, with bash; schedules run as your prompts; skills are in every system prompt):\n\
             \n\
             hooks in .agent_tutorial/hooks.json (2, not trusted):\n\
             \x20 #0 UserPromptSubmit matcher: (any) timeout: 10s\n      touch ran #a\n\
             \x20 #1 PreToolUse matcher: bash timeout: 0.5s\n      echo \\e[2K (escaped: it holds control or invisible characters)\n\
             Trusted hooks until they change (recorded in {file}).\n",
            root = root.display(),
            file = trust_file.display(),
        )
    );
    let (stderr, ran) = run_ch04(dir.path(), config.path(), "none");
    assert_eq!((stderr.as_str(), ran), ("", true));

    let changed = TOUCH_HOOKS.replace("#a", "#b");
    std::fs::write(dir.path().join(".agent_tutorial/hooks.json"), &changed).unwrap();
    let (stderr, ran) = run_ch04(dir.path(), config.path(), "all");
    assert_eq!(
        (stderr, ran),
        (notice(dir.path(), "changed since they were trusted"), false)
    );

    trust(dir.path(), config.path(), &["--yes"]).success();
    let (stderr, ran) = run_ch04(dir.path(), config.path(), "none");
    assert_eq!((stderr.as_str(), ran), ("", true));
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trust_file).unwrap()).unwrap();
    assert_eq!(
        recorded,
        json!({"version": 2, "workspaces": {root.to_str().unwrap(): {"trusted": {"hooks": sha256_hex(changed.as_bytes())}}}})
    );
}

#[test]
fn revoked_trust_stops_the_hooks() {
    let dir = hooks_workspace(TOUCH_HOOKS);
    let config = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    trust(dir.path(), config.path(), &["--yes"]).success();
    let out = stdout_of(trust(dir.path(), config.path(), &["--revoke"]).success());
    assert_eq!(
        out,
        format!(
            "Revoked: hooks, schedules, skills and MCP servers in {} are no longer used.\n",
            root.display()
        )
    );
    let (stderr, ran) = run_ch04(dir.path(), config.path(), "all");
    assert_eq!(
        (stderr, ran),
        (notice(dir.path(), "are not trusted"), false)
    );
    let out = stdout_of(trust(dir.path(), config.path(), &["--revoke"]).success());
    assert_eq!(
        out,
        format!("{} was not trusted; nothing to revoke.\n", root.display())
    );
}

#[test]
fn trust_refuses_to_write_through_a_symlinked_trust_file() {
    let dir = hooks_workspace(TOUCH_HOOKS);
    let config = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("victim");
    std::fs::write(&target, "keep me").unwrap();
    std::fs::create_dir(config.path().join("agent-tutorial")).unwrap();
    let link = config.path().join("agent-tutorial/trusted.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let err = stderr_of(trust(dir.path(), config.path(), &["--yes"]).code(2));
    assert_eq!(
        err,
        format!(
            "error: {} is a symbolic link; refusing to follow it (replace it with a regular file)\n",
            link.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    // A run treats it the same way: a configuration error, the hook does not run.
    let assert = command("ch04", dir.path())
        .env("XDG_CONFIG_HOME", config.path())
        .args(["--prompt", "hi", "--script", "script.json"])
        .assert()
        .code(2);
    assert_eq!(stderr_of(assert), err);
    assert!(!dir.path().join("ran").exists());
}

#[test]
fn bad_hook_timeouts_are_a_configuration_error_naming_the_field_and_the_hook() {
    let config = tempfile::tempdir().unwrap();
    for (value, shown) in [
        ("1e300", "1e+300"),
        ("-1", "-1"),
        ("0", "0"),
        ("\"NaN\"", "\"NaN\""),
        ("7200", "7200"),
    ] {
        let dir = hooks_workspace(&format!(
            r#"[{{"event": "Stop", "command": "true"}}, {{"event": "Stop", "command": "true", "timeout_secs": {value}}}]"#
        ));
        let expected = format!(
            "error: .agent_tutorial/hooks.json: hook #1: `timeout_secs` must be a number of seconds above 0 and at most 3600 (got {shown})\n"
        );
        let assert = command("ch04", dir.path())
            .env("XDG_CONFIG_HOME", config.path())
            .args(["--trust-hooks", "--prompt", "hi", "--script", "script.json"])
            .assert()
            .code(2);
        assert_eq!(stderr_of(assert), expected, "timeout_secs {value}");
        // `trust` refuses such a file too, and records nothing.
        assert_eq!(
            stderr_of(trust(dir.path(), config.path(), &["--yes"]).code(2)),
            expected
        );
    }
    assert_eq!(std::fs::read_dir(config.path()).unwrap().count(), 0);
}

#[test]
fn a_hooks_file_over_one_mebibyte_is_a_configuration_error() {
    let padding = " ".repeat(1 << 20);
    let dir = hooks_workspace(&format!("[{padding}]"));
    let config = tempfile::tempdir().unwrap();
    let assert = command("ch04", dir.path())
        .env("XDG_CONFIG_HOME", config.path())
        .args(["--trust-hooks", "--prompt", "hi", "--script", "script.json"])
        .assert()
        .code(2);
    assert_eq!(
        stderr_of(assert),
        format!(
            "error: {}/.agent_tutorial/hooks.json is larger than 1048576 bytes\n",
            dir.path().canonicalize().unwrap().display()
        )
    );
}
