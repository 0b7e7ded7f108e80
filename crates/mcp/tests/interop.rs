//! Against a server nobody here wrote: the reference server
//! `@modelcontextprotocol/server-everything` from npm, started with `node`. Tests are offline,
//! so they do not install it: `.ci/run` does (`npm install` of a pinned version into
//! `target/`) and names its entry script in `MCP_EVERYTHING_SERVER`. Without it the test passes with a note, except
//! under CI (`CI=true`), where a missing server is a failure.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use agent_core::tool::{PreparedCall, ToolHandler, ToolOutput};
use agent_mcp::{ConfigFile, ConnectOptions, McpConnection};
use agent_sandbox::{Mode, Network, Sandbox};
use agent_trust::Verdict;
use agent_workspace::Workspace;
use serde_json::{Value, json};

async fn call(connection: &McpConnection, name: &str, arguments: Value) -> ToolOutput {
    let tool = connection
        .tools()
        .into_iter()
        .find(|tool| tool.spec().name == name)
        .unwrap_or_else(|| panic!("no tool {name}"));
    let prepared = PreparedCall {
        call_id: "c".into(),
        name: name.into(),
        arguments,
        effect: tool.spec().effect,
        summary: Default::default(),
    };
    tool.call(&prepared).await.unwrap()
}

#[tokio::test]
async fn the_reference_server_lists_its_tools_and_answers_echo_and_get_sum() {
    let Some(script) = agent_test_support::mcp_everything_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let config = json!({"mcpServers": {"everything": {
        "command": "node",
        "args": [script],
        "startup_timeout_secs": 60,
        "tool_timeout_secs": 60
    }}});
    let config = ConfigFile::from_bytes(config.to_string().as_bytes())
        .unwrap()
        .admit(Verdict::Trusted)
        .unwrap();
    let options = ConnectOptions {
        sandbox: Some(Sandbox::new(Mode::Off, Network::Off)),
        ..ConnectOptions::default()
    };
    let connection = McpConnection::connect(&workspace, &config, "everything", &options)
        .await
        .unwrap();
    let names: Vec<String> = connection
        .tools()
        .iter()
        .map(|tool| tool.spec().name.clone())
        .collect();
    let expected = [
        "echo",
        "get_annotated_message",
        "get_env",
        "get_resource_links",
        "get_resource_reference",
        "get_structured_content",
        "get_sum",
        "get_tiny_image",
        "gzip_file_as_resource",
        "toggle_simulated_logging",
        "toggle_subscriber_updates",
        "trigger_long_running_operation",
        "simulate_research_query",
    ]
    .map(|name| format!("mcp__everything__{name}"));
    assert_eq!(names, expected);
    assert_eq!(
        call(
            &connection,
            "mcp__everything__echo",
            json!({"message": "hello"})
        )
        .await,
        ToolOutput::text("Echo: hello")
    );
    assert_eq!(
        call(
            &connection,
            "mcp__everything__get_sum",
            json!({"a": 2, "b": 3})
        )
        .await,
        ToolOutput::text("The sum of 2 and 3 is 5.")
    );
    connection.close().await.unwrap();
}
