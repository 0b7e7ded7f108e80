//! `agent-tutorial`: the composition root and the CLI.
//!
//! - [`bootstrap`]: `build_agent(profile, deps)`, the one place that maps a chapter profile
//!   to wired components.
//! - [`cli`]: `agent-tutorial run | prompt | chapters` and the chapter binaries' `main`.
//! - [`profile`]: the chapter table (one screen).
//! - [`render`]: readable views of a request (used by `prompt` and the snapshot tests).

mod agent;
pub mod bootstrap;
pub mod cache_report;
pub mod cli;
pub mod memory_placement;
pub mod observer;
pub mod profile;
pub mod render;
pub mod spinner;

pub use bootstrap::{Agent, AgentDeps, BuildError, build_agent, build_preview_agent};
pub use memory_placement::MemoryPlacement;
pub use profile::{Capability, Profile, ProfileError, Status};
