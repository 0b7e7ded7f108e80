//! `agent-test-support`: what the tests of every crate share (codex-rs `core_test_support`
//! style), so each crate stops carrying its own copy.
//!
//! - [`scripted`]: [`ScriptedModel`], a model that replays a script and can record every
//!   request it receives (request capture), and its file format; [`ScriptBook`], one script
//!   per agent of a session (chapter 15 on).
//! - [`call_tool`]: runs one tool call through a registry the way the loop does and returns
//!   the text the model would read.
//! - [`tool_call`], [`paired`]: small builders and checks for scripted conversations.
//! - [`git`], [`mcp_everything_server`]: real programs the tests drive (a hermetic `git`, the
//!   reference MCP server `.ci/run` installs).
//!
//! Tests take this crate as a dev-dependency. One crate uses it as a normal dependency:
//! `agent-tutorial`, whose `--script FILE` is a user-facing offline mode (the docs run on it),
//! so this crate itself depends on nothing test-only.

#![warn(missing_docs)]

mod book;
mod external;
pub mod scripted;
mod tools;

pub use book::ScriptBook;
pub use external::{MCP_EVERYTHING_SERVER, git, mcp_everything_server};
pub use scripted::{
    MAX_SCRIPT_BYTES, Recording, ScriptError, ScriptExhausted, ScriptStep, ScriptedModel,
};
pub use tools::{call_tool, paired, tool_call};
