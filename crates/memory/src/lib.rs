//! `agent-memory` (chapter 9): what the agent remembers between sessions.
//!
//! - [`store`]: `MemoryStore`, the `.memory/` folder — one Markdown file per record, the
//!   `MEMORY.md` index as the single source of truth, atomic locked writes that lose nothing.
//! - [`session`]: `MemorySession`, which selects records before a turn, hands them to the
//!   request, and extracts and consolidates after it. [`MemoryPlacement`] says where the
//!   selection goes: the session's own system message (chapter 9), the dynamic system prompt
//!   or a reminder stored in the conversation (chapter 10). Its model calls go through `agent_core::side_call`.
//! - [`block`]: the `<relevant_memories>` block, a fragment whose records cannot close it or
//!   open a prompt section.
//! - [`keywords`]: the deterministic fallback selector (CJK-aware).
//! - [`consent`]: what is saved reaches every future prompt, so the agent's permission gate
//!   decides it like a write.

mod archive;
pub mod block;
pub mod consent;
mod fsio;
mod index;
pub mod keywords;
pub mod record;
pub mod session;
pub mod store;

pub use archive::ARCHIVE_DIR;
pub use block::render_block;
pub use consent::MEMORY_WRITE;
pub use index::INDEX_FILE;
pub use record::{MemoryRecord, MemoryType, RecordError, last_wins};
pub use session::{CONSOLIDATE_AT, MAX_SELECTED, MemoryInjector, MemoryPlacement, MemorySession};
pub use store::{
    Fault, Loaded, MAX_BYTES, MAX_LINES, MEMORY_DIR, MemoryError, MemoryStore, Skipped,
};
