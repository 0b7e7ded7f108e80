//! The child's life: a crash, a close, a drop, and a tool list that changes.

use std::collections::BTreeSet;

use agent_core::tool::{FailureCode, ToolFailure};
use agent_mcp::State;
use serde_json::json;

use super::{Fixture, alive, call, eventually, exists, text};

#[tokio::test]
async fn a_crash_loses_the_connection_and_reaps_the_server() {
    let fixture = Fixture::new();
    let connection = fixture.connect().await;
    let pid: u32 = text(&connection, "mcp__srv__pid", json!({}))
        .await
        .parse()
        .unwrap();
    let lost = ToolFailure::new(
        FailureCode::McpConnectionLost,
        "MCP server `srv` is gone (it exited or closed its output); its tools cannot be called \
         until it is connected again",
    );
    assert_eq!(
        call(&connection, "mcp__srv__crash", json!({})).await,
        Err(lost.clone())
    );
    assert!(eventually(|| connection.state() == State::Lost).await);
    // Reaped, not a zombie: nothing is left of it in /proc.
    assert!(
        eventually(|| !exists(pid)).await,
        "the crashed server {pid} was not reaped"
    );
    assert_eq!(
        call(&connection, "mcp__srv__echo", json!({"text": "x"})).await,
        Err(lost)
    );
    assert_eq!(
        connection
            .refresh(&BTreeSet::new())
            .await
            .unwrap_err()
            .to_string(),
        "MCP server `srv` is not connected"
    );
    connection.close().await.unwrap();
}

#[tokio::test]
async fn close_ends_every_process_of_the_server_grandchildren_included() {
    let fixture = Fixture::new();
    let connection = fixture.connect().await;
    let server: u32 = text(&connection, "mcp__srv__pid", json!({}))
        .await
        .parse()
        .unwrap();
    let grandchild: u32 = text(&connection, "mcp__srv__spawn_grandchild", json!({}))
        .await
        .parse()
        .unwrap();
    assert!(alive(grandchild));
    let echo = super::tool(&connection, "mcp__srv__echo");
    connection.close().await.unwrap();
    // `close` returns once the tree has ended: no wait here.
    assert!(!alive(server), "the server {server} still runs");
    assert!(!alive(grandchild), "the grandchild {grandchild} still runs");
    let prepared = agent_core::tool::PreparedCall {
        call_id: "c".into(),
        name: "mcp__srv__echo".into(),
        arguments: json!({"text": "x"}),
        effect: echo.spec().effect,
        summary: Default::default(),
    };
    use agent_core::tool::ToolHandler as _;
    assert_eq!(
        echo.call(&prepared).await,
        Err(ToolFailure::new(
            FailureCode::McpConnectionLost,
            "MCP server `srv` was disconnected; its tools cannot be called until it is connected \
             again"
        ))
    );
}

#[tokio::test]
async fn dropping_the_connection_kills_the_server() {
    let fixture = Fixture::new();
    let connection = fixture.connect().await;
    let server: u32 = text(&connection, "mcp__srv__pid", json!({}))
        .await
        .parse()
        .unwrap();
    let grandchild: u32 = text(&connection, "mcp__srv__spawn_grandchild", json!({}))
        .await
        .parse()
        .unwrap();
    drop(connection);
    assert!(eventually(|| !alive(server) && !alive(grandchild)).await);
}

#[tokio::test]
async fn a_changed_tool_list_is_noted_and_taken_on_refresh() {
    let fixture = Fixture::new();
    let connection = fixture.connect().await;
    assert!(!connection.tools_changed());
    assert_eq!(
        text(&connection, "mcp__srv__switch_tools", json!({})).await,
        "switched"
    );
    assert!(eventually(|| connection.tools_changed()).await);
    // Nothing changes until the caller refreshes (between model requests).
    assert_eq!(connection.tools().len(), 12);
    let refreshed = connection
        .refresh(&BTreeSet::from(["bash".to_string()]))
        .await
        .unwrap();
    let names = |tools: &[agent_mcp::McpTool]| -> Vec<String> {
        tools.iter().map(|tool| tool.spec().name.clone()).collect()
    };
    assert_eq!(names(&refreshed), ["mcp__srv__echo", "mcp__srv__added"]);
    assert_eq!(names(&connection.tools()), names(&refreshed));
    assert!(!connection.tools_changed());
    assert_eq!(
        text(&connection, "mcp__srv__added", json!({})).await,
        "added"
    );
    connection.close().await.unwrap();
}

#[tokio::test]
async fn a_refreshed_list_that_collides_closes_the_connection() {
    let fixture = Fixture::new();
    let connection = fixture.connect().await;
    let server: u32 = text(&connection, "mcp__srv__pid", json!({}))
        .await
        .parse()
        .unwrap();
    text(&connection, "mcp__srv__switch_tools", json!({})).await;
    let taken = BTreeSet::from(["mcp__srv__added".to_string()]);
    assert_eq!(
        connection.refresh(&taken).await.unwrap_err().to_string(),
        "MCP server `srv`: its tool `added` would be `mcp__srv__added`, which is already taken"
    );
    assert_eq!(connection.state(), State::Closed);
    assert!(!alive(server));
}
