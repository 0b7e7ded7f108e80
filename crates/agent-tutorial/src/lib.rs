//! `agent-tutorial`: the chapter table and the CLI.
//!
//! - [`profile`]: the chapter table (one screen): which capabilities each chapter has.
//! - [`agents`]: a chapter's agent, built by the harness (`agent_harness`).
//! - [`cli`]: `agent-tutorial run | prompt | chapters` and the chapter binaries' `main`.
//! - [`render`]: readable views of a request (used by `prompt` and the snapshot tests).

#![warn(missing_docs)]

pub mod agents;
pub mod cache_report;
pub mod cli;
pub mod observer;
pub mod profile;
pub mod record;
pub mod render;
pub mod spinner;

pub use agent_harness::bootstrap;
pub use agent_harness::{Agent, AgentDeps, BuildError, MemoryPlacement};
pub use agents::{build_agent, build_preview_agent};
pub use profile::{Capabilities, Capability, Profile, ProfileError, Status};
