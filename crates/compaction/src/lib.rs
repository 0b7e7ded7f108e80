//! `agent-compaction` (chapter 8): keeping requests small as the history grows.
//!
//! - [`artifacts`]: a tool result over 30,000 bytes goes to `.agent_tutorial/artifacts/`; the
//!   history keeps a `<persisted-tool-result>` preview with the path.
//! - [`compactor`]: before each request, on what a request is built from, *snip* (keep the first user
//!   message and the newest groups), *micro* (stub old tool results) and, over a byte budget,
//!   *summary* (ask the model for a structured summary of the older part).
//! - [`groups`]: the units all of this keeps or drops whole.
//! - [`overflow`]: [`OverflowSnip`], what the one retry after "prompt too long" sends.
//! - [`transcript`]: the session's append-only transcript, saved before a summary.

#![warn(missing_docs)]

pub mod artifacts;
pub mod compactor;
pub mod groups;
pub mod overflow;
pub mod transcript;

pub use artifacts::{ArtifactConfig, ArtifactStore};
pub use compactor::{
    CompactOnDemand, CompactionConfig, Compactor, Summary, SummaryError, micro, snip,
};
pub use overflow::OverflowSnip;
pub use transcript::{TRANSCRIPT_DIR, TranscriptError};
