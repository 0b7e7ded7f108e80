//! `agent-hooks` (chapter 4): code outside the model taking part in the loop.
//!
//! Hooks are values registered at build time for one event (and, for tool events, optionally
//! one tool name); they run in registration order.
//!
//! - [`event`]: what a hook is told ([`HookEvent`], JSON on a shell hook's stdin).
//! - [`output`]: what it may answer, one struct per event ([`PreToolUseOutput`], …); a field
//!   of another event is an error naming it.
//! - [`registry`]: the [`Hook`] trait, [`FnHook`] for closures, and [`HookRegistry`], which
//!   plugs into the runner as `agent_core::TurnHooks`.
//! - [`shell`]: [`ShellHook`], a `bash -c` command run under the workspace's process rules.
//! - [`error`]: [`HookError`] (one hook's failure) and [`HookFailed`] (which hook, which event).

#![warn(missing_docs)]

pub mod error;
pub mod event;
pub mod output;
pub mod registry;
pub mod shell;

pub use error::{HookError, HookFailed};
pub use event::{HookEvent, HookEventKind};
pub use output::{
    EventOutput, HookOutput, PostToolUseOutput, PreToolUseOutput, StopOutput,
    UserPromptSubmitOutput,
};
pub use registry::{FnHook, Hook, HookRegistry};
pub use shell::ShellHook;
