//! `agent-recovery` (chapter 11): what the harness does when a model call fails or is cut off.
//!
//! - [`policy`]: the retry parameters in one place ([`RetryPolicy`]) and the pure decision of
//!   how long to wait before the next attempt, `Retry-After` included.
//! - [`model`]: [`RecoveringModel`] (on the workspace's [`agent_workspace::Clock`]), a [`agent_core::ModelClient`] around the real one that
//!   retries transient failures, switches to a fallback model after repeated overloads, and
//!   ([`truncation`]) repairs replies cut off at the completion limit.
//!
//! "Prompt too long" is not handled here: the loop owns the history, so it compacts once and
//! retries (`agent_core::AgentRunner`'s overflow processor); this model only tells the user.

#![warn(missing_docs)]

pub mod model;
pub mod policy;
pub mod truncation;

pub use model::{Fallback, RecoveringModel};
pub use policy::{Decision, Jitter, MAX_TOKENS_CEILING, RetryPolicy};
pub use truncation::CONTINUE_PROMPT;
