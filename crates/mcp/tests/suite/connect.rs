//! Connecting: the tool list as the model sees it, and every start that is refused — with the
//! child gone afterwards.

use std::time::Instant;

use agent_core::tool::ToolEffect;
use agent_mcp::ConnectError;
use serde_json::json;

use super::{Fixture, GENEROUS, alive, eventually};

#[tokio::test]
async fn tools_are_named_for_the_model_with_their_configured_effects() {
    let fixture = Fixture::new();
    let config = fixture.config(None, json!({"tools": {"echo": {"effect": "read"}}}));
    let connection = fixture
        .connect_with(&config, &["bash", "read_file"])
        .await
        .unwrap();
    let names: Vec<(String, ToolEffect)> = connection
        .tools()
        .iter()
        .map(|tool| (tool.spec().name.clone(), tool.spec().effect))
        .collect();
    let external = |name: &str| (format!("mcp__srv__{name}"), ToolEffect::External);
    assert_eq!(
        names,
        [
            ("mcp__srv__echo".to_string(), ToolEffect::Read),
            external("sleep"),
            external("fail"),
            external("refuse"),
            external("crash"),
            external("spawn_grandchild"),
            external("junk_stdout"),
            external("big"),
            external("pid"),
            external("cwd"),
            external("env"),
            external("switch_tools"),
        ]
    );
    let echo = super::tool(&connection, "mcp__srv__echo");
    assert_eq!(echo.remote_name(), "echo");
    assert_eq!(echo.spec().description, "Answers with its text.");
    assert_eq!(
        echo.spec().parameters,
        json!({
            "type": "object",
            "properties": {"text": {"type": "string", "minLength": 1}},
            "required": ["text"],
            "additionalProperties": false
        })
    );
    connection.close().await.unwrap();
}

/// A refused start: the error, and the server's process gone.
async fn refused(fixture: &Fixture, mode: Option<&str>, reserved: &[&str]) -> String {
    let config = fixture.config(mode, json!({"startup_timeout_secs": 2}));
    let err = fixture.connect_with(&config, reserved).await.unwrap_err();
    let pid = fixture.server_pid();
    assert!(!alive(pid), "the refused server {pid} still runs");
    err.to_string()
}

#[tokio::test]
async fn two_tools_with_one_normalized_name_refuse_the_server() {
    let fixture = Fixture::new();
    assert_eq!(
        refused(&fixture, Some("collide"), &[]).await,
        "MCP server `srv`: its tools `lookup-one` and `lookup_one` would both be \
         `mcp__srv__lookup_one`"
    );
}

#[tokio::test]
async fn a_tool_named_like_a_registered_one_refuses_the_server() {
    let fixture = Fixture::new();
    assert_eq!(
        refused(&fixture, None, &["bash", "mcp__srv__pid"]).await,
        "MCP server `srv`: its tool `pid` would be `mcp__srv__pid`, which is already taken"
    );
}

#[tokio::test]
async fn an_external_reference_in_a_schema_refuses_the_server() {
    let fixture = Fixture::new();
    assert_eq!(
        refused(&fixture, Some("external-ref"), &[]).await,
        "MCP server `srv`: the input schema of its tool `fetch` is refused: $.x: `$ref` is not \
         supported; the schema must be self-contained"
    );
}

#[tokio::test]
async fn a_server_printing_junk_fails_within_the_startup_timeout() {
    let fixture = Fixture::new();
    let started = Instant::now();
    assert_eq!(
        refused(&fixture, Some("junk"), &[]).await,
        "MCP server `srv` did not finish starting within 2 s"
    );
    assert!(started.elapsed() < GENEROUS, "took {:?}", started.elapsed());
}

#[tokio::test]
async fn a_silent_server_fails_within_the_startup_timeout_with_its_stderr_kept() {
    let fixture = Fixture::new();
    let started = Instant::now();
    let config = fixture.config(Some("silent"), json!({"startup_timeout_secs": 2}));
    let err = fixture.connect_with(&config, &[]).await.unwrap_err();
    assert!(started.elapsed() < GENEROUS, "took {:?}", started.elapsed());
    let ConnectError::StartupTimeout {
        alias,
        timeout,
        stderr,
    } = err
    else {
        panic!("{err:?}");
    };
    assert_eq!(
        (alias.as_str(), timeout.as_secs(), stderr.as_str()),
        ("srv", 2, "silent server: waiting for nothing\n")
    );
    assert!(!alive(fixture.server_pid()));
}

#[tokio::test]
async fn a_server_that_exits_fails_the_handshake() {
    let fixture = Fixture::new();
    let config = fixture.config(Some("exit"), json!({}));
    let err = fixture.connect_with(&config, &[]).await.unwrap_err();
    assert!(
        matches!(&err, ConnectError::Handshake { alias, .. } if alias == "srv"),
        "{err:?}"
    );
    let pid = fixture.server_pid();
    assert!(eventually(|| !alive(pid)).await);
}

#[tokio::test]
async fn a_program_that_does_not_exist_is_a_spawn_error() {
    let fixture = Fixture::new();
    let config =
        super::trusted(&json!({"mcpServers": {"srv": {"command": "/nonexistent/server"}}}));
    assert_eq!(
        fixture
            .connect_with(&config, &[])
            .await
            .unwrap_err()
            .to_string(),
        "MCP server `srv` could not be started: No such file or directory (os error 2)"
    );
}

#[tokio::test]
async fn an_alias_not_in_the_config_starts_nothing() {
    let fixture = Fixture::new();
    let config = fixture.config(None, json!({}));
    let err = agent_mcp::McpConnection::connect(
        &fixture.workspace,
        &config,
        "other",
        &super::options(&[]),
    )
    .await
    .unwrap_err();
    assert_eq!(err.to_string(), "no MCP server `other` in .mcp.json");
    assert!(!fixture.path("server.pid").exists());
}

#[tokio::test]
async fn the_server_starts_in_its_configured_folder_inside_the_workspace() {
    let fixture = Fixture::new();
    std::fs::create_dir(fixture.path("sub")).unwrap();
    let config = fixture.config(None, json!({"cwd": "sub"}));
    let connection = fixture.connect_with(&config, &[]).await.unwrap();
    assert_eq!(
        super::text(&connection, "mcp__srv__cwd", json!({})).await,
        fixture.workspace.root().join("sub").display().to_string()
    );
    connection.close().await.unwrap();

    for (cwd, why) in [
        (
            "../elsewhere",
            "`../elsewhere` resolves outside the workspace",
        ),
        ("missing", "it does not exist"),
        ("calls.log", "it is not a folder"),
    ] {
        std::fs::write(fixture.path("calls.log"), "").unwrap();
        let config = fixture.config(None, json!({"cwd": cwd}));
        assert_eq!(
            fixture
                .connect_with(&config, &[])
                .await
                .unwrap_err()
                .to_string(),
            format!("MCP server `srv`: its `cwd` `{cwd}` cannot be used: {why}")
        );
    }
}
