//! Calls: results, validation before anything is sent, and the three MCP failures.

use agent_core::tool::{FailureCode, ToolFailure, ToolOutput};
use serde_json::json;

use super::{Fixture, call, text};

#[tokio::test]
async fn a_call_returns_the_servers_content() {
    let fixture = Fixture::new();
    let connection = fixture.connect().await;
    assert_eq!(
        call(&connection, "mcp__srv__echo", json!({"text": "hello"})).await,
        Ok(ToolOutput::text("hello"))
    );
    assert_eq!(fixture.calls(), "call echo\n");
    connection.close().await.unwrap();
}

#[tokio::test]
async fn invalid_arguments_never_reach_the_server() {
    let fixture = Fixture::new();
    let connection = fixture.connect().await;
    let cases = [
        (json!({"text": 5}), "/text: want string, but got number"),
        (json!({"text": ""}), "/text: length must be >=1, but got 0"),
        (json!({}), "/: missing properties 'text'"),
        (
            json!({"text": "a", "extra": 1}),
            "/: additionalProperties 'extra' not allowed",
        ),
        (
            json!(["not", "an", "object"]),
            "the arguments must be a JSON object",
        ),
    ];
    for (arguments, message) in cases {
        assert_eq!(
            call(&connection, "mcp__srv__echo", arguments.clone()).await,
            Err(ToolFailure::new(FailureCode::InvalidArguments, message)),
            "{arguments}"
        );
    }
    assert_eq!(fixture.calls(), "", "a refused call reached the server");
    connection.close().await.unwrap();
}

#[tokio::test]
async fn a_call_over_the_tool_timeout_fails_and_the_connection_goes_on() {
    let fixture = Fixture::new();
    let config = fixture.config(None, json!({"tool_timeout_secs": 1}));
    let connection = fixture.connect_with(&config, &[]).await.unwrap();
    assert_eq!(
        call(&connection, "mcp__srv__sleep", json!({"ms": 600_000})).await,
        Err(ToolFailure::new(
            FailureCode::McpTimeout,
            "MCP server `srv` did not answer `sleep` within 1 s"
        ))
    );
    assert_eq!(
        text(&connection, "mcp__srv__echo", json!({"text": "still here"})).await,
        "still here"
    );
    assert_eq!(connection.state(), agent_mcp::State::Connected);
    connection.close().await.unwrap();
}

#[tokio::test]
async fn an_is_error_result_is_a_remote_error_without_its_private_detail() {
    let fixture = Fixture::new();
    let connection = fixture.connect().await;
    assert_eq!(
        call(&connection, "mcp__srv__fail", json!({})).await,
        Err(ToolFailure::new(
            FailureCode::McpRemoteError,
            "MCP tool `fail` of server `srv` reported an error: it failed"
        ))
    );
    assert_eq!(
        call(&connection, "mcp__srv__refuse", json!({})).await,
        Err(ToolFailure::new(
            FailureCode::McpRemoteError,
            "MCP server `srv` refused `refuse`: not today (JSON-RPC error -32000)"
        ))
    );
    connection.close().await.unwrap();
}

#[tokio::test]
async fn junk_on_stdout_mid_session_does_not_hang_the_call() {
    let fixture = Fixture::new();
    let config = fixture.config(None, json!({"tool_timeout_secs": 5}));
    let connection = fixture.connect_with(&config, &[]).await.unwrap();
    assert_eq!(
        call(&connection, "mcp__srv__junk_stdout", json!({})).await,
        Ok(ToolOutput::text("after junk"))
    );
    assert_eq!(
        text(&connection, "mcp__srv__echo", json!({"text": "ok"})).await,
        "ok"
    );
    connection.close().await.unwrap();
}

#[tokio::test]
async fn an_answer_over_the_line_bound_is_dropped_and_the_call_times_out() {
    let fixture = Fixture::new();
    let config = fixture.config(None, json!({"tool_timeout_secs": 2}));
    let connection = fixture.connect_with(&config, &[]).await.unwrap();
    let just_fits = agent_mcp::MAX_LINE_BYTES / 2;
    assert_eq!(
        text(&connection, "mcp__srv__big", json!({"bytes": just_fits}))
            .await
            .len(),
        just_fits
    );
    assert_eq!(
        call(
            &connection,
            "mcp__srv__big",
            json!({"bytes": agent_mcp::MAX_LINE_BYTES})
        )
        .await,
        Err(ToolFailure::new(
            FailureCode::McpTimeout,
            "MCP server `srv` did not answer `big` within 2 s"
        ))
    );
    assert_eq!(
        text(&connection, "mcp__srv__echo", json!({"text": "ok"})).await,
        "ok"
    );
    connection.close().await.unwrap();
}

#[tokio::test]
async fn calls_run_side_by_side() {
    let fixture = Fixture::new();
    let connection = fixture.connect().await;
    let slow = call(&connection, "mcp__srv__sleep", json!({"ms": 600_000}));
    let quick = text(&connection, "mcp__srv__echo", json!({"text": "first"}));
    tokio::select! {
        _ = slow => panic!("the slow call ended first"),
        quick = quick => assert_eq!(quick, "first"),
    }
    connection.close().await.unwrap();
}
