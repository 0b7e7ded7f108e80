//! Why a server could not be connected (or its new tool list taken).
//!
//! Messages quote names the server chose (its tools): whoever prints one to a terminal
//! escapes it first, as with everything a repository or a server wrote.

use std::time::Duration;

use agent_workspace::PathError;

/// Why [`crate::McpConnection::connect`] or [`crate::McpConnection::refresh`] failed. Every
/// case leaves no process of the server running: the child is closed before this is
/// returned, and none of its tools is handed out.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The trusted config has no server of that alias.
    #[error("no MCP server `{alias}` in {}", crate::config::CONFIG_PATH)]
    UnknownAlias {
        /// The alias asked for.
        alias: String,
    },
    /// `cwd` is not a folder inside the workspace.
    #[error("MCP server `{alias}`: its `cwd` `{cwd}` cannot be used: {reason}")]
    Cwd {
        /// The server.
        alias: String,
        /// The `cwd` as configured.
        cwd: String,
        /// Why.
        reason: CwdProblem,
    },
    /// The program could not be started.
    #[error("MCP server `{alias}` could not be started: {source}")]
    Spawn {
        /// The server.
        alias: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// No handshake and tool list within `startup_timeout_secs`: a silent server, or one that
    /// prints something other than JSON-RPC on stdout.
    #[error("MCP server `{alias}` did not finish starting within {} s", timeout.as_secs())]
    StartupTimeout {
        /// The server.
        alias: String,
        /// The bound it missed.
        timeout: Duration,
        /// What it wrote on stderr (bounded, raw: escape before showing; not in the message).
        stderr: String,
    },
    /// The handshake failed (the server exited, or answered `initialize` with an error).
    #[error("MCP server `{alias}` failed its handshake: {reason}")]
    Handshake {
        /// The server.
        alias: String,
        /// rmcp's account of it.
        reason: String,
        /// What it wrote on stderr (bounded, raw: escape before showing; not in the message).
        stderr: String,
    },
    /// `tools/list` failed.
    #[error("MCP server `{alias}` could not list its tools: {reason}")]
    ListTools {
        /// The server.
        alias: String,
        /// rmcp's account of it.
        reason: String,
    },
    /// More tools, or more pages of them, than are taken from one server.
    #[error("MCP server `{alias}` lists more than {max} tools (or pages of them)")]
    TooManyTools {
        /// The server.
        alias: String,
        /// The bound.
        max: usize,
    },
    /// A tool whose name cannot become a tool name (empty, or absurdly long).
    #[error("MCP server `{alias}` has a tool with an unusable name `{tool}`")]
    ToolName {
        /// The server.
        alias: String,
        /// The name, cut to 64 characters.
        tool: String,
    },
    /// Two of the server's tools normalize to the same name (`lookup-one`, `lookup_one`).
    #[error("MCP server `{alias}`: its tools `{first}` and `{second}` would both be `{name}`")]
    Collision {
        /// The server.
        alias: String,
        /// The name both would have.
        name: String,
        /// The first tool (in the server's order).
        first: String,
        /// The second.
        second: String,
    },
    /// A tool's name is already taken (a built-in, or another server's tool).
    #[error("MCP server `{alias}`: its tool `{tool}` would be `{name}`, which is already taken")]
    Taken {
        /// The server.
        alias: String,
        /// The name.
        name: String,
        /// The server's name for the tool.
        tool: String,
    },
    /// A tool's input schema is refused (a `$ref`, too deep, too large, not an object).
    #[error("MCP server `{alias}`: the input schema of its tool `{tool}` is refused: {reason}")]
    Schema {
        /// The server.
        alias: String,
        /// The server's name for the tool.
        tool: String,
        /// Why.
        reason: String,
    },
    /// The connection already ended (crashed or closed): nothing to refresh.
    #[error("MCP server `{alias}` is not connected")]
    NotConnected {
        /// The server.
        alias: String,
    },
}

impl ConnectError {
    /// The same error with the server's stderr attached, where the variant keeps it.
    pub(crate) fn with_stderr(mut self, text: String) -> Self {
        if let Self::StartupTimeout { stderr, .. } | Self::Handshake { stderr, .. } = &mut self {
            *stderr = text;
        }
        self
    }
}

/// Why a configured `cwd` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CwdProblem {
    /// The boundary refused it (outside the workspace, through a missing folder, unreadable).
    #[error(transparent)]
    Path(#[from] PathError),
    /// Nothing is there.
    #[error("it does not exist")]
    Missing,
    /// Something other than a folder is there.
    #[error("it is not a folder")]
    NotAFolder,
}
