//! Chapter 19: MCP servers, the lead's only. The first request; a server connected by the
//! model offers its tools from the next request on and a call's result reaches the model;
//! disconnecting withdraws them, as a crash does; a changed tool list is taken again; only
//! the lead has MCP; the session's end leaves no server process (the CLI and trust:
//! `ch19_cli.rs`). Every server here is the real test server of `agent-mcp`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_core::{Message, ModelReply, ModelRequest};
use agent_harness::board_seat::BoardSeat;
use agent_harness::mcp_hub::McpHub;
use agent_mcp::ConfigFile;
use agent_sandbox::{Mode as SandboxMode, Network, Sandbox};
use agent_tools::Workspace;
use agent_trust::Verdict;
use agent_worktree::Worktrees;
use serde_json::json;

use crate::support::{call, tool_round, workspace};
use crate::team_support::builder;

/// The test server's tools as the lead is offered them, in the order it lists them.
pub const SERVER_TOOLS: [&str; 12] = [
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
];

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
pub(crate) fn config_bytes(pidfile: &Path) -> Vec<u8> {
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

/// The lead's hub over a trusted `.mcp.json` of one server `srv` (the test server of
/// `agent-mcp`, writing its pid to `server.pid`), unconfined: a test binary is no sandbox
/// helper. Chapter 20's tests use it too.
pub(crate) fn hub(dir: &Path) -> Arc<McpHub> {
    let config = ConfigFile::from_bytes(&config_bytes(&dir.join("server.pid")))
        .unwrap()
        .admit(Verdict::Trusted)
        .unwrap();
    Arc::new(
        McpHub::new(Workspace::new(dir).unwrap(), Some(config))
            .sandbox(Sandbox::new(SandboxMode::Off, Network::Off)),
    )
}

/// A hub with no `.mcp.json`: the lead has `connect_mcp` and `disconnect_mcp` and no server.
pub(crate) fn empty_hub(dir: &Path) -> Arc<McpHub> {
    Arc::new(McpHub::new(Workspace::new(dir).unwrap(), None))
}

/// The test workspace made a repository, its worktrees and its board seat (chapters 17–18).
pub(crate) fn repository(dir: &Path) -> (Worktrees, BoardSeat) {
    let (trees, board) = crate::ch18::repository(dir);
    (trees, BoardSeat::new(board))
}

fn tool_names(request: &ModelRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name.clone()).collect()
}

/// Whether `/proc/<pid>` exists at all (a zombie included): gone means reaped.
fn exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
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
    let empty = empty_hub(dir.path());
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
    assert_eq!(mcp, SERVER_TOOLS);
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

/// The lead's model for the `tools/list_changed` test: it asks the server to switch its tool
/// set, then calls `echo` (in both sets) until `mcp__srv__added` is offered, then calls that.
#[derive(Default)]
struct Switcher {
    requests: std::sync::Mutex<Vec<ModelRequest>>,
}

#[async_trait::async_trait]
impl agent_core::ModelClient for Switcher {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, agent_core::ModelError> {
        self.requests.lock().unwrap().push(request.clone());
        let offered = tool_names(request).contains(&"mcp__srv__added".to_string());
        Ok(match request.messages.last().unwrap().as_ref() {
            Message::User { content } if content.starts_with("Existing memories:") => {
                ModelReply::text("[]")
            }
            Message::User { .. } => {
                tool_round(vec![call("s", "mcp__srv__switch_tools", json!({}))])
            }
            Message::Tool { content, .. } if content == "added" => ModelReply::text("Done."),
            Message::Tool { .. } if offered => {
                tool_round(vec![call("a", "mcp__srv__added", json!({}))])
            }
            _ => tool_round(vec![call(
                "e",
                "mcp__srv__echo",
                json!({"text": "waiting"}),
            )]),
        })
    }
}

/// A server that announces a new tool list (`tools/list_changed`) is listed again between
/// two requests: the old set's tools leave, the new one's join, and a call to a new tool works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_tool_list_is_taken_again_between_requests() {
    let dir = workspace();
    let (trees, board) = repository(dir.path());
    let hub = hub(dir.path());
    assert_eq!(hub.start().await.len(), 0);
    let model = Arc::new(Switcher::default());
    let mut t = builder(19, dir.path(), vec![], vec![])
        .board(board)
        .worktrees(trees)
        .mcp(hub.clone())
        .lead_model(model.clone())
        .build();
    t.run("Switch the server's tools and call the new one.")
        .await;
    let requests = model.requests.lock().unwrap().clone();
    let mcp = |request: &ModelRequest| -> Vec<String> {
        tool_names(request)
            .into_iter()
            .filter(|name| name.starts_with("mcp__"))
            .collect()
    };
    assert_eq!(mcp(&requests[0]).len(), 12);
    // The request that saw `added` answered it, and nothing of the old set was offered with it.
    let answered = requests
        .iter()
        .find(|r| {
            matches!(r.messages.last().unwrap().as_ref(), Message::Tool { content, .. } if content == "added")
        })
        .unwrap();
    assert_eq!(mcp(answered), ["mcp__srv__echo", "mcp__srv__added"]);
}
