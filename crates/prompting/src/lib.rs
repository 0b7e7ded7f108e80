//! `agent-prompting` (chapter 10): the system prompt is assembled at run time.
//!
//! Chapters 1–9 send a prompt fixed when the agent is built. From chapter 10 the runner asks a
//! [`DynamicPromptProvider`] before *every* model request; it renders identity, context, the
//! live tool list and the workspace, then a list of optional [`PromptSection`]s (the harness
//! gives the skill catalog, the selected memories and the open tasks), each placed by its own
//! [`SectionOrder`], with a [`DynamicPromptRenderer`], which caches the last result per
//! instance.
//!
//! That cache saves re-assembling a string. It is **not** the provider's prompt cache: that
//! one keys on the bytes sent, and any change in an earlier section — a new tool, a different
//! memory selection — misses it from that point on, whatever this cache says.

#![warn(missing_docs)]

pub mod context;
pub mod provider;
pub mod renderer;

pub use context::{ContextError, PromptContext, stable_json};
pub use provider::{
    DynamicPromptProvider, PromptSection, SectionBody, SectionOrder, SectionSource,
};
pub use renderer::{
    CheckedInputs, DynamicPromptRenderer, PromptInputs, RenderError, Rendered, SectionText,
    ToolNames,
};
