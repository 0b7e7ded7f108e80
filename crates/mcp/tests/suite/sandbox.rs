//! The server inside the real sandbox, with the test server as its own helper (it calls
//! `enter_if_helper`): the handshake and calls go through the helper, it starts in its
//! configured folder, and a crash inside is seen outside.

use agent_core::tool::{FailureCode, ToolFailure};
use agent_mcp::{ConnectOptions, McpConnection, State};
use agent_sandbox::{Level, Mode, Network, Sandbox};
use serde_json::json;

use super::{Fixture, call, eventually, server_program, text};

#[tokio::test]
async fn the_server_runs_inside_the_sandbox() {
    let fixture = Fixture::new();
    let sandbox = Sandbox::new(Mode::WorkspaceWrite, Network::Off).with_helper(server_program());
    let level = sandbox.plan().level;
    let options = ConnectOptions {
        sandbox: Some(sandbox),
        ..ConnectOptions::default()
    };
    std::fs::create_dir(fixture.path("sub")).unwrap();
    let config = fixture.config(None, json!({"cwd": "sub"}));
    let connection = McpConnection::connect(&fixture.workspace, &config, "srv", &options)
        .await
        .unwrap();
    assert_eq!(
        text(&connection, "mcp__srv__echo", json!({"text": "inside"})).await,
        "inside"
    );
    assert_eq!(
        text(&connection, "mcp__srv__cwd", json!({})).await,
        fixture.path("sub").display().to_string()
    );
    if level == Level::Namespaces {
        // Its own PID namespace: the helper's init is 1, the server its child; the agent and
        // everything else on the machine are out of its sight.
        assert_eq!(text(&connection, "mcp__srv__pid", json!({})).await, "2");
    }
    assert_eq!(
        call(&connection, "mcp__srv__crash", json!({})).await,
        Err(ToolFailure::new(
            FailureCode::McpConnectionLost,
            "MCP server `srv` is gone (it exited or closed its output); its tools cannot be \
             called until it is connected again"
        ))
    );
    assert!(eventually(|| connection.state() == State::Lost).await);
    connection.close().await.unwrap();
}
