//! Chapter 19 against a server nobody here wrote: the reference MCP server
//! `@modelcontextprotocol/server-everything` from npm, driven by the chapter's binary with a
//! script — its tools in the request, `echo` and `get_sum` called, their results in the next
//! request. Tests are offline, so they do not install it: `.ci/run` does (a pinned version
//! into `target/`) and names its entry script in `MCP_EVERYTHING_SERVER`. Without it the test
//! passes with a note, except under CI (`CI=true`), where a missing server is a failure.

use serde_json::{Value, json};

use crate::support::{command, workspace};

#[test]
fn chapter_19_lists_the_reference_servers_tools_and_its_answers_reach_the_model() {
    let Some(server) = agent_test_support::mcp_everything_server() else {
        return;
    };
    let dir = workspace();
    let config = json!({"mcpServers": {"everything": {
        "command": "node",
        "args": [server],
        "startup_timeout_secs": 60,
        "tool_timeout_secs": 60
    }}});
    std::fs::write(dir.path().join(".mcp.json"), config.to_string()).unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        json!([
            {"tool_calls": [
                {"id": "e1", "name": "mcp__everything__echo", "arguments": {"message": "hello"}},
                {"id": "s1", "name": "mcp__everything__get_sum", "arguments": {"a": 2, "b": 3}}
            ]},
            {"content": "It echoed hello and 2 + 3 = 5."},
            {"content": "[]"}
        ])
        .to_string(),
    )
    .unwrap();
    let output = command("agent-tutorial", dir.path())
        .args([
            "run",
            "--chapter",
            "19",
            "--approve",
            "all",
            "--trust-workspace",
        ])
        .args([
            "--script",
            script.to_str().unwrap(),
            "--record",
            "requests.jsonl",
        ])
        .args(["--prompt", "Use the everything server"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        // A team's lead (chapter 15 on): every line says who said it.
        "[lead] It echoed hello and 2 + 3 = 5.\n"
    );
    let recorded = std::fs::read_to_string(dir.path().join("requests.jsonl")).unwrap();
    // The lead's own requests (memory's side calls offer no tools).
    let requests: Vec<Value> = recorded
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|request| request["tools"].is_array())
        .collect();
    assert_eq!(requests.len(), 2);
    // The server's tools, as the model is offered them in the first request (`--record` of a
    // scripted run keeps the requests as the harness built them).
    let offered: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .filter(|name| name.starts_with("mcp__"))
        .collect();
    assert_eq!(
        offered,
        vec![
            "mcp__everything__echo",
            "mcp__everything__get_annotated_message",
            "mcp__everything__get_env",
            "mcp__everything__get_resource_links",
            "mcp__everything__get_resource_reference",
            "mcp__everything__get_structured_content",
            "mcp__everything__get_sum",
            "mcp__everything__get_tiny_image",
            "mcp__everything__gzip_file_as_resource",
            "mcp__everything__toggle_simulated_logging",
            "mcp__everything__toggle_subscriber_updates",
            "mcp__everything__trigger_long_running_operation",
            "mcp__everything__simulate_research_query",
        ],
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Their answers, as the model reads them in the second.
    let results: Vec<&Value> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(
        results,
        [
            &json!({"role": "tool", "content": "Echo: hello", "tool_call_id": "e1"}),
            &json!({"role": "tool", "content": "The sum of 2 and 3 is 5.", "tool_call_id": "s1"}),
        ]
    );
}
