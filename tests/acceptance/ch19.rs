//! Chapter 19: MCP servers, the lead's only. The first request; a server connected by the
//! model offers its tools from the next request on and a call's result reaches the model;
//! disconnecting withdraws them; an untrusted `.mcp.json` starts nothing; the session's end
//! leaves no server process. Every server here is the real test server of `agent-mcp`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_board::{BoardConfig, SqliteBoard};
use agent_core::{Message, ModelReply, ModelRequest};
use agent_harness::board_seat::BoardSeat;
use agent_harness::mcp_hub::McpHub;
use agent_mcp::ConfigFile;
use agent_sandbox::{Mode as SandboxMode, Network, Sandbox};
use agent_tools::Workspace;
use agent_trust::Verdict;
use agent_workspace::ManualClock;
use agent_worktree::{Git, Worktrees};
use serde_json::json;

use crate::support::{call, command, stderr_of, stdout_of, tool_round, workspace, write_script};
use crate::team_support::builder;

/// The test server (`crates/mcp/examples/mcp-test-server.rs`), built next to this package's
/// binaries; built here once if `cargo test -p agent-mcp` has not built it yet.
pub fn test_server() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let bin_dir = Path::new(env!("CARGO_BIN_EXE_agent-tutorial"))
                .parent()
                .unwrap();
            let server = bin_dir.join("examples").join("mcp-test-server");
            if !server.is_file() {
                let status = std::process::Command::new(env!("CARGO"))
                    .args([
                        "build",
                        "-q",
                        "-p",
                        "agent-mcp",
                        "--example",
                        "mcp-test-server",
                    ])
                    .current_dir(env!("CARGO_MANIFEST_DIR"))
                    .status()
                    .unwrap();
                assert!(status.success(), "building the MCP test server failed");
            }
            server
        })
        .clone()
}

/// `.mcp.json`'s bytes: one server `srv`, the test server writing its pid to `pidfile`.
fn config_bytes(pidfile: &Path) -> Vec<u8> {
    serde_json::to_vec_pretty(&json!({
        "mcpServers": {
            "srv": {
                "command": test_server(),
                "env": {"MCP_TEST_PIDFILE": pidfile},
                "startup_timeout_secs": 60
            }
        }
    }))
    .unwrap()
}

/// The lead's hub over a trusted config of `srv`, unconfined (a test binary is no sandbox
/// helper).
fn hub(dir: &Path) -> Arc<McpHub> {
    let config = ConfigFile::from_bytes(&config_bytes(&dir.join("server.pid")))
        .unwrap()
        .admit(Verdict::Trusted)
        .unwrap();
    Arc::new(
        McpHub::new(Workspace::new(dir).unwrap(), Some(config))
            .sandbox(Sandbox::new(SandboxMode::Off, Network::Off)),
    )
}

/// Runs git in `dir` with a fixed identity and none of the machine's configuration.
fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// The test workspace made a repository, its worktrees and its board (chapters 17–18).
fn repository(dir: &Path) -> (Worktrees, BoardSeat) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "first"]);
    let ws = Workspace::new(dir).unwrap();
    let trees = Worktrees::new(
        Git::with_sandbox(&ws, Sandbox::new(SandboxMode::Off, Network::Off)),
        Arc::new(ManualClock::new(std::time::UNIX_EPOCH)),
    );
    let board = Arc::new(SqliteBoard::open(&ws, BoardConfig::default()).unwrap());
    (trees, BoardSeat::new(board))
}

fn tool_names(request: &ModelRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name.clone()).collect()
}

/// Whether `/proc/<pid>` exists at all (a zombie included): gone means reaped.
fn exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

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

fn pid_in(path: &Path) -> u32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// No `.mcp.json`: the lead's first request has `connect_mcp` and `disconnect_mcp` after
/// every chapter 18 tool, and nothing else changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p19_first_request_in_full() {
    let dir = workspace();
    let (trees, board) = repository(dir.path());
    let empty = Arc::new(McpHub::new(Workspace::new(dir.path()).unwrap(), None));
    let mut t = builder(
        19,
        dir.path(),
        vec![ModelReply::text("No MCP servers."), ModelReply::text("[]")],
        vec![],
    )
    .board(board)
    .worktrees(trees)
    .mcp(empty)
    .build();
    t.run("Which MCP servers are there?").await;
    let root = dir.path().canonicalize().unwrap().display().to_string();
    let text = agent_tutorial::render::full(&t.requests("lead")[0]).replace(&root, "<workspace>");
    insta::assert_snapshot!(text);
}

/// The model connects `srv`: its tools are not in the request that asked (nor usable in that
/// batch), they are in the next one, a call's result reaches the model, and disconnecting
/// takes them out of the request after; the server's process is gone by then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connected_servers_tools_join_the_next_request_and_leave_after_disconnect() {
    let dir = workspace();
    let (trees, board) = repository(dir.path());
    let mut t = builder(
        19,
        dir.path(),
        vec![
            tool_round(vec![
                call("c1", "connect_mcp", json!({"alias": "srv"})),
                call("c2", "mcp__srv__echo", json!({"text": "too early"})),
            ]),
            tool_round(vec![call(
                "c3",
                "mcp__srv__echo",
                json!({"text": "hello from MCP"}),
            )]),
            tool_round(vec![call("c4", "disconnect_mcp", json!({"alias": "srv"}))]),
            ModelReply::text("Done."),
            ModelReply::text("[]"),
        ],
        vec![],
    )
    .board(board)
    .worktrees(trees)
    .mcp(hub(dir.path()))
    .build();
    t.run("Echo something through the MCP server.").await;
    let requests = t.requests("lead");
    let before = tool_names(&requests[0]);
    let mcp: Vec<String> = tool_names(&requests[1])
        .into_iter()
        .filter(|name| !before.contains(name))
        .collect();
    assert_eq!(
        mcp,
        [
            "mcp__srv__echo",
            "mcp__srv__sleep",
            "mcp__srv__fail",
            "mcp__srv__refuse",
            "mcp__srv__crash",
            "mcp__srv__spawn_grandchild",
            "mcp__srv__junk_stdout",
            "mcp__srv__big",
            "mcp__srv__pid",
            "mcp__srv__cwd",
            "mcp__srv__env",
            "mcp__srv__switch_tools",
        ]
    );
    let results = |request: &ModelRequest| -> Vec<String> {
        request
            .messages
            .iter()
            .filter_map(|m| match m.as_ref() {
                Message::Tool { content, .. } => Some(content.clone()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        results(&requests[1]),
        [
            "Connected MCP server `srv`: 12 tools (mcp__srv__echo, mcp__srv__sleep, mcp__srv__fail, mcp__srv__refuse, mcp__srv__crash, mcp__srv__spawn_grandchild, mcp__srv__junk_stdout, mcp__srv__big, mcp__srv__pid, mcp__srv__cwd, mcp__srv__env, mcp__srv__switch_tools). They are offered from your next request on.".to_string(),
            format!(
                "Error [unknown_tool]: no tool named `mcp__srv__echo`; available: {}",
                before.join(", ")
            ),
        ]
    );
    assert_eq!(results(&requests[2])[2], "hello from MCP");
    assert_eq!(
        results(&requests[3])[3],
        "Disconnected MCP server `srv`; its 12 tools are gone from your next request on."
    );
    assert_eq!(tool_names(&requests[3]), before);
    assert!(!exists(pid_in(&dir.path().join("server.pid"))));
}

/// Servers of the trusted config start with the session (their tools in the first request)
/// and the session's end leaves no process of them, not even a zombie.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_start_with_the_session_and_end_with_it() {
    let dir = workspace();
    let (trees, board) = repository(dir.path());
    let hub = hub(dir.path());
    assert_eq!(hub.start().await.len(), 0);
    let pid = pid_in(&dir.path().join("server.pid"));
    assert!(exists(pid));
    let mut t = builder(
        19,
        dir.path(),
        vec![
            tool_round(vec![call("c1", "mcp__srv__pid", json!({}))]),
            ModelReply::text("Done."),
            ModelReply::text("[]"),
        ],
        vec![],
    )
    .board(board)
    .worktrees(trees)
    .mcp(hub.clone())
    .build();
    t.run("Which pid has the server?").await;
    let requests = t.requests("lead");
    let last = requests[1].messages.last().unwrap();
    assert_eq!(last.as_ref(), &Message::tool_result("c1", pid.to_string()));
    assert!(!exists(pid), "the server outlived the session");
    assert_eq!(hub.tools().await, Default::default());
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

/// MCP is the lead's: built as a teammate with the same hub, an agent of chapter 19 has no
/// MCP tool (and its session would close nothing of it).
#[test]
fn only_the_lead_gets_the_mcp_tools() {
    let dir = workspace();
    let names = |id: agent_core::AgentId| {
        let ws = Workspace::new(dir.path()).unwrap();
        let mut deps = agent_tutorial::AgentDeps::new(
            Arc::new(agent_test_support::ScriptedModel::new([])),
            ws.clone(),
        );
        deps.id = id;
        deps.mcp = Some(Arc::new(McpHub::new(ws, None)));
        let agent =
            agent_tutorial::build_agent(agent_tutorial::Profile::for_chapter(19).unwrap(), deps)
                .unwrap();
        agent
            .tools()
            .names()
            .into_iter()
            .filter(|name| name.ends_with("_mcp"))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(agent_core::AgentId::lead()),
        ["connect_mcp", "disconnect_mcp"]
    );
    assert_eq!(
        names(agent_core::AgentId::new("writer").unwrap()),
        Vec::<String>::new()
    );
}

/// A server that crashes mid-call: the call fails as `mcp_connection_lost`, the loop goes on,
/// its tools are withdrawn before the next request and its process is reaped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_servers_tools_are_withdrawn_before_the_next_request() {
    let dir = workspace();
    let (trees, board) = repository(dir.path());
    let hub = hub(dir.path());
    assert_eq!(hub.start().await.len(), 0);
    let pid = pid_in(&dir.path().join("server.pid"));
    let mut t = builder(
        19,
        dir.path(),
        vec![
            tool_round(vec![call("c1", "mcp__srv__crash", json!({}))]),
            ModelReply::text("It crashed."),
            ModelReply::text("[]"),
        ],
        vec![],
    )
    .board(board)
    .worktrees(trees)
    .mcp(hub.clone())
    .build();
    t.run("Crash the server.").await;
    let requests = t.requests("lead");
    assert_eq!(
        requests[1].messages.last().unwrap().as_ref(),
        &Message::tool_result(
            "c1",
            "Error [mcp_connection_lost]: MCP server `srv` is gone (it exited or closed its output); its tools cannot be called until it is connected again"
        )
    );
    let mcp_tools = |request: &ModelRequest| {
        tool_names(request)
            .into_iter()
            .filter(|name| name.starts_with("mcp__"))
            .count()
    };
    assert_eq!((mcp_tools(&requests[0]), mcp_tools(&requests[1])), (12, 0));
    assert!(!exists(pid), "the crashed server was not reaped");
}
