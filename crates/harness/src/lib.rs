//! `agent-harness`: the composition root as a library, and the session that drives agents.
//!
//! - [`bootstrap`]: [`build_agent`] turns an [`AgentSpec`] (a set of [`Capabilities`]) into a
//!   wired [`Agent`]; a second agent is one more call. Each capability is one feature module
//!   that installs itself; [`Features`] answers what a front end needs to know of a set.
//! - [`Agent`]: the runner, the conversation so far, and the per-turn memory lifecycle.
//! - [`board_seat`]: chapter 17's task board as the agents of a session share it (renewal,
//!   fencing).
//! - [`mcp_hub`]: chapter 19's MCP servers, the lead's, joined to its registry between
//!   requests.
//! - [`session`]: the [`Session`] that owns agents and drives them with one `select!` loop
//!   over submissions, inboxes, the cron timer and running turns.

#![warn(missing_docs)]

mod agent;
pub mod board_seat;
pub mod bootstrap;
mod capability;
mod features;
mod history_log;
pub mod mcp_hub;
mod prompts;
mod routing;
pub mod session;
pub mod team_runtime;
#[cfg(feature = "test-util")]
pub mod test_util;

pub use agent::Answered;
pub use agent_memory::MemoryPlacement;
pub use bootstrap::{Agent, AgentDeps, AgentSpec, BuildError, build_agent, build_preview_agent};
pub use capability::{Capabilities, Capability};
pub use features::{
    Autonomy, Board, Features, Input, McpUse, ModelFallback, PromptStyle, ShellHooks,
    SlashCommands, StreamDefault, Team, WorktreeUse,
};
pub use history_log::HistoryLog;
pub use prompts::{FIXED_SYSTEM_PROMPT, IDENTITY, SKILLS_SECTION, SUBAGENT_SYSTEM_PROMPT};
pub use session::{Session, SessionEvent, SessionHandle};
