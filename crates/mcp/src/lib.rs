//! `agent-mcp`: chapter 19's client for MCP (Model Context Protocol) servers — tools from
//! other programs, trusted before they start, bounded while they run, gone when they end.
//!
//! - [`ConfigFile`]: `.mcp.json` read through the workspace boundary, bounded and strict, with
//!   the fingerprint the trust store keys on; [`ConfigFile::admit`] turns it into a
//!   [`TrustedConfig`] only when the user trusted that exact content.
//! - [`McpConnection`]: one server started by the workspace's process layer (own process
//!   group, scrubbed environment, the sandbox, stderr kept bounded and never printed), spoken
//!   to with rmcp's client over the child's stdin and stdout, every wait bounded, the whole
//!   tree killed on close, drop, crash or a refused start.
//! - [`McpTool`]: each of its tools as an [`agent_core::ToolHandler`] named
//!   `mcp__<alias>__<name>`, arguments validated against the server's full schema before any
//!   remote call, failures as `mcp_timeout`, `mcp_connection_lost` and `mcp_remote_error`.
//!
//! The registry changes only between model requests: the server's `tools/list_changed`
//! notification is only noted ([`McpConnection::tools_changed`]); the caller takes the new
//! list with [`McpConnection::refresh`] when no batch is running.
//!
//! How a harness uses it (the trust verdict comes from the trust store, keyed on
//! [`ConfigFile::fingerprint`] as `hooks.json`'s is):
//!
//! ```no_run
//! # async fn example(workspace: agent_workspace::Workspace, registry: agent_core::ToolRegistry,
//! #     verdict: agent_trust::Verdict) -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use agent_mcp::{ConfigFile, ConnectOptions, McpConnection};
//!
//! let Some(file) = ConfigFile::load(&workspace)? else { return Ok(()) };
//! let config = file.admit(verdict)?; // untrusted or changed: nothing starts
//! let options = ConnectOptions {
//!     reserved: registry.names().into_iter().collect(),
//!     ..ConnectOptions::default()
//! };
//! let connection = McpConnection::connect(&workspace, &config, "files", &options).await?;
//! for tool in connection.tools() {
//!     let (spec, mode) = (tool.spec().clone(), tool.schema_mode());
//!     registry.register_in(spec, Arc::new(tool), mode)?;
//! }
//! // ... model requests; between two of them:
//! if connection.tools_changed() { /* refresh, then swap this alias's tools */ }
//! connection.close().await?;
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod call;
mod child;
mod client;
pub mod config;
mod error;
mod listing;
pub mod names;
mod schema;
mod tool;

pub use child::{ENV_ALLOWED, MAX_LINE_BYTES, STDERR_CAP};
pub use client::{ConnectOptions, McpConnection, State};
pub use config::{ConfigError, ConfigFile, McpConfig, NotTrusted, ServerConfig, TrustedConfig};
pub use error::{ConnectError, CwdProblem};
pub use listing::{MAX_DESCRIPTION, MAX_PAGES, MAX_REMOTE_NAME, MAX_SCHEMA_BYTES, MAX_TOOLS};
pub use tool::{MAX_ERROR_TEXT, McpTool};
