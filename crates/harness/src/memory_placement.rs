//! Where chapter 10 on puts the selected memories: the trade-off between a prompt that shows
//! the live state and a request prefix that a provider's prompt cache can reuse.

/// Where the selected memory block goes (chapter 10 on; `--memory-placement`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MemoryPlacement {
    /// Chapter 10's design: the system prompt renders the block as its `## memory` section.
    /// When the selection changes, the very first message changes, and a provider's prompt
    /// cache can reuse nothing after the bytes before that section.
    #[default]
    Prompt,
    /// The system prompt stays static; each turn's block is stored in the conversation as a
    /// system message right before that turn's user message, where it then stays. A new
    /// selection is appended after the cached history instead of rewriting its start.
    Reminder,
}
