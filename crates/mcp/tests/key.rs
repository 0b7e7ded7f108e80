//! The model server's key never reaches an MCP server, nor does any variable outside the
//! allow-list: the server's environment is exactly the allowed variables we have, the
//! config's `env` and the call marker.
//!
//! Its own test binary: it sets variables in this process's environment, which only a
//! process running nothing else at the same time may do.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::PathBuf;

use agent_core::tool::{PreparedCall, ToolHandler};
use agent_mcp::{ConfigFile, ConnectOptions, ENV_ALLOWED, McpConnection};
use agent_sandbox::{Mode, Network, Sandbox};
use agent_trust::Verdict;
use agent_workspace::Workspace;
use agent_workspace::process::CALL_MARKER;
use serde_json::json;

fn server_program() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join("mcp-test-server")
}

#[tokio::test]
async fn the_server_sees_only_the_allowed_variables_and_its_own() {
    // SAFETY: the only test of this binary, and no other thread of ours reads the
    // environment yet (the runtime's workers do not).
    unsafe {
        std::env::set_var("OPENAI_API_KEY", "sk-test-not-for-servers");
        std::env::set_var("OPENAI_BASE_URL", "http://127.0.0.1:9/v1");
        std::env::set_var("GITHUB_TOKEN", "ghp-not-for-servers");
        std::env::set_var("HOME", "/home/tester");
    }
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let config = json!({"mcpServers": {"srv": {
        "command": server_program(),
        "env": {"SERVER_SETTING": "1"}
    }}});
    let config = ConfigFile::from_bytes(config.to_string().as_bytes())
        .unwrap()
        .admit(Verdict::Trusted)
        .unwrap();
    let options = ConnectOptions {
        sandbox: Some(Sandbox::new(Mode::Off, Network::Off)),
        ..ConnectOptions::default()
    };
    let connection = McpConnection::connect(&workspace, &config, "srv", &options)
        .await
        .unwrap();
    let env = connection
        .tools()
        .into_iter()
        .find(|tool| tool.spec().name == "mcp__srv__env")
        .unwrap();
    let call = PreparedCall {
        call_id: "c".into(),
        name: "mcp__srv__env".into(),
        arguments: json!({}),
        effect: env.spec().effect,
        summary: Default::default(),
    };
    let seen = env.call(&call).await.unwrap().into_text();
    let mut expected: BTreeSet<String> = ENV_ALLOWED
        .iter()
        .filter(|name| std::env::var_os(name).is_some())
        .map(|name| name.to_string())
        .collect();
    expected.extend([CALL_MARKER.to_string(), "SERVER_SETTING".to_string()]);
    assert_eq!(seen, expected.into_iter().collect::<Vec<_>>().join("\n"));
    connection.close().await.unwrap();
}
