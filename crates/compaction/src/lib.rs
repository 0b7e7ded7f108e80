//! `agent-compaction` (chapter 8): keeping requests small as the history grows.
//!
//! - [`artifacts`]: a tool result over 30,000 bytes goes to `.agent_tutorial/artifacts/`; the
//!   history keeps a `<persisted-tool-result>` preview with the path.
//! - [`compactor`]: before each request, on a copy of the history, *snip* (keep the first user
//!   message and the newest groups), *micro* (stub old tool results) and, over a byte budget,
//!   *summary* (ask the model for a structured summary of the older part).
//! - [`groups`]: the units all of this keeps or drops whole.

pub mod artifacts;
pub mod compactor;
pub mod groups;

pub use artifacts::{ArtifactConfig, ArtifactStore};
pub use compactor::{
    CompactionConfig, Compactor, OverflowSnip, Summary, SummaryError, TranscriptError, micro, snip,
};
