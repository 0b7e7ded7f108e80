//! What the tests share: a workspace in a temporary folder, the test server's path, configs
//! and calls.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod calls;
mod config;
mod connect;
mod lifecycle;
mod registry;
mod sandbox;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_core::tool::{PreparedCall, ToolFailure, ToolHandler, ToolOutput};
use agent_mcp::{ConfigFile, ConnectError, ConnectOptions, McpConnection, McpTool, TrustedConfig};
use agent_sandbox::{Mode, Network, Sandbox};
use agent_trust::Verdict;
use agent_workspace::Workspace;
use serde_json::{Value, json};

/// How long a test waits for something that only a hang would stop (a process to be gone, a
/// notification to arrive): far beyond what it takes on a loaded machine.
pub const GENEROUS: Duration = Duration::from_secs(20);

/// The test server, built by `cargo test` as an example of this package, beside the test
/// binary's folder (`target/<profile>/deps/all-…` → `target/<profile>/examples/`).
pub fn server_program() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().unwrap().parent().unwrap();
    let program = profile.join("examples").join("mcp-test-server");
    assert!(
        program.is_file(),
        "{} is missing: run the tests with `cargo test -p agent-mcp` (which builds the examples)",
        program.display()
    );
    program
}

/// A workspace in a fresh temporary folder.
pub struct Fixture {
    /// Kept for its lifetime: the folder is removed when the fixture is dropped.
    _dir: tempfile::TempDir,
    pub workspace: Workspace,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        Self {
            _dir: dir,
            workspace,
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.workspace.root().join(name)
    }

    /// A trusted config with one server `srv`: the test server in `mode` (none: the normal
    /// tools), its calls logged to `calls.log` and its pid written to `server.pid`, and the
    /// `extra` fields merged in.
    pub fn config(&self, mode: Option<&str>, extra: Value) -> TrustedConfig {
        let mut server = json!({
            "command": server_program(),
            "args": mode.into_iter().collect::<Vec<_>>(),
            "env": {
                "MCP_TEST_LOG": self.path("calls.log"),
                "MCP_TEST_PIDFILE": self.path("server.pid"),
            },
        });
        if let (Some(server), Value::Object(extra)) = (server.as_object_mut(), extra) {
            server.extend(extra);
        }
        trusted(&json!({"mcpServers": {"srv": server}}))
    }

    /// What the server logged: one `call <name>` line per call that reached it.
    pub fn calls(&self) -> String {
        std::fs::read_to_string(self.path("calls.log")).unwrap_or_default()
    }

    /// The pid the server wrote when it started.
    pub fn server_pid(&self) -> u32 {
        std::fs::read_to_string(self.path("server.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    pub async fn connect_with(
        &self,
        config: &TrustedConfig,
        reserved: &[&str],
    ) -> Result<McpConnection, ConnectError> {
        McpConnection::connect(&self.workspace, config, "srv", &options(reserved)).await
    }

    /// The normal test server, connected.
    pub async fn connect(&self) -> McpConnection {
        let config = self.config(None, json!({}));
        self.connect_with(&config, &[]).await.unwrap()
    }
}

/// A config from JSON, trusted.
pub fn trusted(json: &Value) -> TrustedConfig {
    ConfigFile::from_bytes(json.to_string().as_bytes())
        .unwrap()
        .admit(Verdict::Trusted)
        .unwrap()
}

/// Unconfined (no sandbox helper in a test binary), without the fallback's warning: the kill
/// then goes through the process group and the marker sweep, the harder path.
pub fn options(reserved: &[&str]) -> ConnectOptions {
    ConnectOptions {
        reserved: reserved
            .iter()
            .map(|name| name.to_string())
            .collect::<BTreeSet<_>>(),
        sandbox: Some(Sandbox::new(Mode::Off, Network::Off)),
        ..ConnectOptions::default()
    }
}

/// The tool `name` (the model's name for it) of the connection.
pub fn tool(connection: &McpConnection, name: &str) -> McpTool {
    connection
        .tools()
        .into_iter()
        .find(|tool| tool.spec().name == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

/// Calls a tool the way the registry does (with a prepared call).
pub async fn call(
    connection: &McpConnection,
    name: &str,
    arguments: Value,
) -> Result<ToolOutput, ToolFailure> {
    let tool = tool(connection, name);
    let prepared = PreparedCall {
        call_id: "call_1".into(),
        name: name.into(),
        arguments,
        effect: tool.spec().effect,
        summary: Default::default(),
    };
    tool.call(&prepared).await
}

/// The text of a call that must succeed.
pub async fn text(connection: &McpConnection, name: &str, arguments: Value) -> String {
    call(connection, name, arguments).await.unwrap().into_text()
}

/// Whether a process runs (exists and is not a zombie).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Whether `/proc/<pid>` exists at all (a zombie included): gone means reaped.
pub fn exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Polls `done` until it holds or [`GENEROUS`] passes; says whether it held.
pub async fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + GENEROUS;
    while tokio::time::Instant::now() < deadline {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    done()
}
