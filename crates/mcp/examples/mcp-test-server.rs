//! The MCP server the tests of `agent-mcp` start as a real child process (rmcp's server side
//! over stdin and stdout). Not a demonstration: every tool exists to make one failure happen.
//!
//! `mcp-test-server [MODE]`, MODE one of:
//! - (none): the tools below;
//! - `junk`: prints a line that is not JSON-RPC and never answers;
//! - `silent`: says nothing on stdout (one line on stderr);
//! - `exit`: exits at once;
//! - `collide`: two tools, `lookup-one` and `lookup_one`;
//! - `external-ref`: a tool whose schema `$ref`s an URL.
//!
//! Tools: `echo {text}`, `sleep {ms}`, `fail` (a result marked `isError`), `refuse` (a
//! JSON-RPC error), `crash` (exits with status 3), `spawn_grandchild` (starts `sleep 300` in
//! its own process group and answers its pid), `junk_stdout` (a non-JSON line on stdout, then
//! an answer), `big {bytes}`, `pid`, `cwd`, `env` (the names of its environment variables, sorted, one a line),
//! `switch_tools` (changes to the second tool set and sends `tools/list_changed`). The second
//! set: `echo` and `added`.
//!
//! With `MCP_TEST_LOG` set, every `tools/call` appends `call <name>` to that file, so a test
//! can count the calls that reached the server. With `MCP_TEST_PIDFILE` set, its pid is
//! written there first thing (in every mode), so a test can see it gone after a refused
//! start.

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    Implementation, InitializeResult, JsonObject, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt as _;

#[derive(Clone)]
struct TestServer {
    mode: Mode,
    switched: Arc<AtomicBool>,
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Normal,
    Collide,
    ExternalRef,
}

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn no_arguments() -> Arc<JsonObject> {
    schema(json!({"type": "object", "properties": {}}))
}

fn tool(name: &'static str, description: &'static str, input: Arc<JsonObject>) -> Tool {
    Tool::new(name, description, input)
}

impl TestServer {
    fn tools(&self) -> Vec<Tool> {
        let echo = tool(
            "echo",
            "Answers with its text.",
            schema(json!({
                "type": "object",
                "properties": {"text": {"type": "string", "minLength": 1}},
                "required": ["text"],
                "additionalProperties": false
            })),
        );
        match self.mode {
            Mode::Collide => {
                return vec![
                    tool("lookup-one", "First.", no_arguments()),
                    tool("lookup_one", "Second.", no_arguments()),
                ];
            }
            Mode::ExternalRef => {
                return vec![tool(
                    "fetch",
                    "A schema that points elsewhere.",
                    schema(json!({
                        "type": "object",
                        "properties": {"x": {"$ref": "https://example.com/schema.json"}}
                    })),
                )];
            }
            Mode::Normal => {}
        }
        if self.switched.load(Ordering::Acquire) {
            return vec![
                echo,
                tool("added", "Only in the second set.", no_arguments()),
            ];
        }
        vec![
            echo,
            tool(
                "sleep",
                "Sleeps `ms` milliseconds.",
                schema(json!({
                    "type": "object",
                    "properties": {"ms": {"type": "integer", "minimum": 0}},
                    "required": ["ms"]
                })),
            ),
            tool("fail", "A result marked isError.", no_arguments()),
            tool("refuse", "A JSON-RPC error.", no_arguments()),
            tool("crash", "Exits with status 3.", no_arguments()),
            tool(
                "spawn_grandchild",
                "Starts `sleep 300` in its own process group.",
                no_arguments(),
            ),
            tool("junk_stdout", "Prints a non-JSON line.", no_arguments()),
            tool(
                "big",
                "Answers `bytes` bytes of text on one line.",
                schema(json!({
                    "type": "object",
                    "properties": {"bytes": {"type": "integer", "minimum": 0}},
                    "required": ["bytes"]
                })),
            ),
            tool("pid", "Its process id.", no_arguments()),
            tool("cwd", "Its working folder.", no_arguments()),
            tool("env", "Its environment's names.", no_arguments()),
            tool(
                "switch_tools",
                "Changes to the second tool set.",
                no_arguments(),
            ),
        ]
    }

    async fn run(
        &self,
        name: &str,
        arguments: &JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let text = |text: String| Ok(CallToolResult::success(vec![ContentBlock::text(text)]));
        match name {
            "echo" => text(
                arguments
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            ),
            "sleep" => {
                let ms = arguments.get("ms").and_then(Value::as_u64).unwrap_or(0);
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                text(format!("slept {ms} ms"))
            }
            "fail" => {
                let mut result = CallToolResult::error(vec![ContentBlock::text("it failed")]);
                result.structured_content = Some(json!({"secret": "private detail"}));
                Ok(result)
            }
            "refuse" => Err(ErrorData::new(
                ErrorCode(-32000),
                "not today",
                Some(json!({"trace": "private detail"})),
            )),
            "crash" => std::process::exit(3),
            "spawn_grandchild" => {
                use std::os::unix::process::CommandExt as _;
                let child = std::process::Command::new("sleep")
                    .arg("300")
                    .process_group(0)
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
                text(child.id().to_string())
            }
            "junk_stdout" => {
                let mut stdout = tokio::io::stdout();
                let _ = stdout.write_all(b"this line is not JSON-RPC\n").await;
                let _ = stdout.flush().await;
                text("after junk".into())
            }
            "big" => {
                let bytes = arguments.get("bytes").and_then(Value::as_u64).unwrap_or(0);
                text("x".repeat(usize::try_from(bytes).unwrap_or(0)))
            }
            "pid" => text(std::process::id().to_string()),
            "cwd" => text(
                std::env::current_dir()
                    .map(|dir| dir.display().to_string())
                    .unwrap_or_default(),
            ),
            "env" => {
                let mut names: Vec<String> = std::env::vars_os()
                    .map(|(name, _)| name.to_string_lossy().into_owned())
                    .collect();
                names.sort();
                text(names.join("\n"))
            }
            "switch_tools" => {
                self.switched.store(true, Ordering::Release);
                let _ = context.peer.notify_tool_list_changed().await;
                text("switched".into())
            }
            "added" => text("added".into()),
            other => Err(ErrorData::invalid_params(
                format!("no tool `{other}`"),
                None,
            )),
        }
    }
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("mcp-test-server", "0.1.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(log) = std::env::var_os("MCP_TEST_LOG") {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
                .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
            let _ = writeln!(file, "call {}", request.name);
        }
        let arguments = request.arguments.clone().unwrap_or_default();
        self.run(&request.name, &arguments, &context)
            .await
            .map(CallToolResponse::Complete)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // This program is also a sandbox helper, so a test can run it inside the real sandbox
    // (`HelperPath::At` this program) without the agent's binary.
    agent_sandbox::enter_if_helper();
    if let Some(path) = std::env::var_os("MCP_TEST_PIDFILE") {
        std::fs::write(path, std::process::id().to_string())?;
    }
    let mode = match std::env::args().nth(1).as_deref() {
        None => Mode::Normal,
        Some("collide") => Mode::Collide,
        Some("external-ref") => Mode::ExternalRef,
        Some("junk") => {
            println!("Server starting... (this is not JSON-RPC)");
            std::future::pending::<()>().await;
            return Ok(());
        }
        Some("silent") => {
            eprintln!("silent server: waiting for nothing");
            std::future::pending::<()>().await;
            return Ok(());
        }
        Some("exit") => std::process::exit(0),
        Some(other) => return Err(format!("unknown mode `{other}`").into()),
    };
    let server = TestServer {
        mode,
        switched: Arc::new(AtomicBool::new(false)),
    };
    server
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await?
        .waiting()
        .await?;
    Ok(())
}
