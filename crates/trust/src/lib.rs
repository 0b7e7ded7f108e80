//! `agent-trust`: a repository is untrusted input.
//!
//! What a workspace ships that runs code or shapes every prompt — shell hooks, durable
//! schedules, skills, and from chapter 19 MCP servers — is used only when the user trusted
//! that exact content for that workspace, the way Claude Code trusts a folder and `direnv
//! allow` trusts an `.envrc`. Each [`TrustKind`] has its own fingerprint (a SHA-256 of what
//! would run), recorded by `agent-tutorial trust` in a file outside every workspace
//! ([`TrustStore`]), where the repository cannot write it.
//!
//! What the harness itself writes on this machine (a schedule the agent added with
//! `schedule_cron`) does not need the user's trust again: the harness records the fingerprint
//! of what it wrote in the same store ([`WorkspaceTrust::record_written`]), and only when what
//! it changed was trusted already, so a planted schedule is never laundered by an agent that
//! adds one next to it. A file edited or planted by anyone else has a fingerprint nobody
//! recorded, and is not used until the user trusts it.

#![warn(missing_docs)]

mod error;
mod file;
mod store;

pub use error::StoreError;
pub use file::open_private_lock;
pub use store::{TRUST_FILE_VERSION, TrustStore, WorkspaceEntry, read_bounded};

use sha2::{Digest, Sha256};

/// What a workspace can ship that runs code or shapes the prompt. Each kind is trusted on its
/// own, so a new skill does not stop the hooks.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum TrustKind {
    /// `.agent_tutorial/hooks.json`: shell commands run around every turn and call.
    Hooks,
    /// `.agent_tutorial/crons.json`: prompts run as user turns on a schedule.
    Schedules,
    /// `skills/*/SKILL.md`: the catalog in the system prompt, the bodies `load_skill` returns.
    Skills,
    /// `.mcp.json`: MCP servers, programs started with the session (chapter 19).
    McpServers,
}

impl TrustKind {
    /// Every kind, in the order `trust` lists them.
    pub const ALL: [Self; 4] = [Self::Hooks, Self::Schedules, Self::Skills, Self::McpServers];

    /// What the kind is called in notices: "hooks", "schedules", "skills".
    pub fn noun(self) -> &'static str {
        match self {
            Self::Hooks => "hooks",
            Self::Schedules => "durable schedules",
            Self::Skills => "skills",
            Self::McpServers => "MCP servers",
        }
    }

    /// Where the kind lives in the workspace.
    pub fn location(self) -> &'static str {
        match self {
            Self::Hooks => ".agent_tutorial/hooks.json",
            Self::Schedules => ".agent_tutorial/crons.json",
            Self::Skills => "skills/",
            Self::McpServers => ".mcp.json",
        }
    }
}

/// What the trust store says about one kind's current content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The user trusted this exact content, or the harness wrote it.
    Trusted,
    /// Never trusted in this workspace.
    Untrusted,
    /// Trusted once, but the content differs now.
    Changed,
}

/// The trust of one workspace, as the parts that load hooks, schedules and skills see it.
pub trait WorkspaceTrust: Send + Sync {
    /// Whether `fingerprint` (see [`Fingerprint`]) is what was trusted for `kind`.
    fn verdict(&self, kind: TrustKind, fingerprint: &str) -> Verdict;
    /// The harness wrote content with `fingerprint` (only called when what it changed was
    /// trusted): it needs no new trust. Failing to record is not fatal; the user is asked
    /// to trust the content on the next run instead.
    fn record_written(&self, kind: TrustKind, fingerprint: &str);
    /// `count` items of `kind` were not loaded because of `verdict`: tell the user once,
    /// with how to trust them.
    fn refused(&self, kind: TrustKind, verdict: Verdict, count: usize);
}

/// Trusts everything: a library caller that brings its own workspace (tests, an embedding),
/// or `--trust-workspace` (CI, a repository you wrote). Records nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct TrustAll;

impl WorkspaceTrust for TrustAll {
    fn verdict(&self, _kind: TrustKind, _fingerprint: &str) -> Verdict {
        Verdict::Trusted
    }

    fn record_written(&self, _kind: TrustKind, _fingerprint: &str) {}

    fn refused(&self, _kind: TrustKind, _verdict: Verdict, _count: usize) {}
}

/// Trusts nothing and says nothing: the safe answer when there is no store to ask.
#[derive(Debug, Clone, Copy, Default)]
pub struct TrustNothing;

impl WorkspaceTrust for TrustNothing {
    fn verdict(&self, _kind: TrustKind, _fingerprint: &str) -> Verdict {
        Verdict::Untrusted
    }

    fn record_written(&self, _kind: TrustKind, _fingerprint: &str) {}

    fn refused(&self, _kind: TrustKind, _verdict: Verdict, _count: usize) {}
}

/// A SHA-256 over a sequence of parts, each length-prefixed, so two different sequences
/// never hash the same bytes (`["ab", "c"]` and `["a", "bc"]` differ).
#[derive(Debug, Clone, Default)]
pub struct Fingerprint(Sha256);

impl Fingerprint {
    /// A fingerprint of no parts yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one part.
    pub fn part(mut self, bytes: &[u8]) -> Self {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }

    /// Lower-case hex.
    pub fn finish(self) -> String {
        format!("{:x}", self.0.finalize())
    }
}

/// Lower-case hex SHA-256 of `bytes` (a whole file, as hooks are trusted).
pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_frame_their_parts() {
        let a = Fingerprint::new().part(b"ab").part(b"c").finish();
        let b = Fingerprint::new().part(b"a").part(b"bc").finish();
        assert_ne!(a, b);
        assert_eq!(a, Fingerprint::new().part(b"ab").part(b"c").finish());
        assert_eq!(a.len(), 64);
    }

    #[test]
    fn kinds_serialize_as_snake_case_names() {
        assert_eq!(
            serde_json::to_string(&TrustKind::ALL).unwrap(),
            r#"["hooks","schedules","skills","mcp_servers"]"#
        );
    }
}
