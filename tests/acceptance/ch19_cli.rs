//! Chapter 19 from the command line: an untrusted `.mcp.json` starts nothing, `trust` lists
//! and records its servers, `mcp list` shows them, and a run ends every server it started.

use std::path::Path;

use serde_json::json;

use crate::ch19::{config_bytes, test_server};
use crate::support::{command, stderr_of, stdout_of, workspace, write_script};

/// The processes whose environment holds `MCP_TEST_PIDFILE=<pidfile>`: the servers of one
/// test, seen from outside whatever PID namespace the sandbox gave them.
fn servers_of(pidfile: &Path) -> Vec<u32> {
    let marker = format!("MCP_TEST_PIDFILE={}", pidfile.display());
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ
            .split(|b| *b == 0)
            .any(|var| var == marker.as_bytes())
        {
            found.push(pid);
        }
    }
    found
}

/// A config to write into a workspace for the CLI runs.
fn write_config(dir: &Path) {
    std::fs::write(dir.join(".mcp.json"), config_bytes(&dir.join("server.pid"))).unwrap();
}

fn config_home() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// The CLI: an untrusted `.mcp.json` starts nothing and says once how to trust it; `mcp
/// list` shows it untrusted; after `trust --yes` a run starts the server (its tool is called)
/// and ends it, and `mcp list` shows the server's tools.
#[test]
fn the_cli_starts_a_server_only_once_its_config_is_trusted() {
    let dir = workspace();
    let home = config_home();
    write_config(dir.path());
    let pidfile = dir.path().join("server.pid");
    let script = write_script(
        dir.path(),
        json!([
            {"content": "Nothing to do."},
            {"content": "[]"}
        ]),
    );
    let run = |script: &Path| {
        command("ch19", dir.path())
            .env("XDG_CONFIG_HOME", home.path())
            .args(["--prompt", "hi", "--script"])
            .arg(script)
            .assert()
            .success()
    };
    let stderr = stderr_of(run(&script));
    let root = dir.path().canonicalize().unwrap().display().to_string();
    assert_eq!(
        stderr.replace(&root, "<workspace>"),
        "MCP servers in .mcp.json are not trusted (1), so none will start; review and trust them with: agent-tutorial trust --workspace <workspace>\n[lead] [memory] selected: (none)\n[lead] [memory] extracted: (none)\n"
    );
    assert!(!pidfile.exists(), "an untrusted server started");
    let list = |home: &Path| {
        stdout_of(
            command("agent-tutorial", dir.path())
                .env("XDG_CONFIG_HOME", home)
                .args(["mcp", "list"])
                .assert()
                .success(),
        )
        .replace(&test_server().display().to_string(), "<server>")
        .replace(&root, "<workspace>")
    };
    assert_eq!(
        list(home.path()),
        "\
.mcp.json (1 servers): not trusted: no server starts (review and trust it with `agent-tutorial trust`)
  srv: <server>
      env: MCP_TEST_PIDFILE
      state: not started
"
    );
    assert!(!pidfile.exists(), "mcp list started an untrusted server");

    let trusted = stdout_of(
        command("agent-tutorial", dir.path())
            .env("XDG_CONFIG_HOME", home.path())
            .args(["trust", "--yes"])
            .assert()
            .success(),
    );
    let store = home.path().join("agent-tutorial/trusted.json");
    assert_eq!(
        trusted
            .replace(&test_server().display().to_string(), "<server>")
            .replace(&root, "<workspace>")
            .replace(&store.display().to_string(), "<store>"),
        "\
In <workspace>, this runs code or goes into the model's prompt (hooks run as you, with bash; schedules run as your prompts; skills are in every system prompt):

MCP servers in .mcp.json (1, not trusted):
  srv: <server>
      env: MCP_TEST_PIDFILE
Trusted MCP servers until they change (recorded in <store>).
"
    );
    let listed = list(home.path());
    assert_eq!(
        listed,
        "\
.mcp.json (1 servers): trusted
  srv: <server>
      env: MCP_TEST_PIDFILE
      state: connected, 12 tools
        mcp__srv__echo: Answers with its text.
        mcp__srv__sleep: Sleeps `ms` milliseconds.
        mcp__srv__fail: A result marked isError.
        mcp__srv__refuse: A JSON-RPC error.
        mcp__srv__crash: Exits with status 3.
        mcp__srv__spawn_grandchild: Starts `sleep 300` in its own process group.
        mcp__srv__junk_stdout: Prints a non-JSON line.
        mcp__srv__big: Answers `bytes` bytes of text on one line.
        mcp__srv__pid: Its process id.
        mcp__srv__cwd: Its working folder.
        mcp__srv__env: Its environment's names.
        mcp__srv__switch_tools: Changes to the second tool set.
"
    );
    assert_eq!(
        servers_of(&pidfile),
        [0u32; 0],
        "mcp list left its server running"
    );
    std::fs::remove_file(&pidfile).unwrap();

    let script = write_script(
        dir.path(),
        json!([
            {"tool_calls": [{"id": "c1", "name": "mcp__srv__echo", "arguments": {"text": "trusted now"}}]},
            {"content": "It echoed."},
            {"content": "[]"}
        ]),
    );
    let output = run(&script).get_output().clone();
    assert_eq!(
        (
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap()
        ),
        (
            "[lead] It echoed.\n".to_string(),
            "[lead] [memory] selected: (none)\n[lead] [tool] mcp__srv__echo {\"text\":\"trusted now\"}\n[lead] [result] ok: 1 line, 11 bytes\n[lead] [memory] extracted: (none)\n".to_string()
        )
    );
    assert!(pidfile.exists(), "the trusted server did not start");
    assert_eq!(
        servers_of(&pidfile),
        [0u32; 0],
        "the server outlived the run"
    );
}
