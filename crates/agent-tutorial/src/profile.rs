//! Chapter profiles: one code base, each chapter switching capabilities on.
//!
//! The table below is the map of the tutorial and fits on one screen on purpose. Every
//! capability in it is one feature module of the harness (`agent_harness`'s feature table);
//! nothing is listed that the code does not switch. What the CLI needs to know of a chapter it
//! asks the harness as typed answers ([`agent_harness::Features`]), never by capability. (The loop and the tool registry are not capabilities: chapter 1
//! already runs its one tool through them, and every later chapter is the same loop.)

pub use agent_harness::{Capabilities, Capability};

/// Whether a chapter can be run yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// It runs, and its acceptance tests pass.
    Built,
    /// In the table so the map is whole; asking for it is an error saying so.
    Planned,
}

/// One chapter's profile.
///
/// ```
/// use agent_tutorial::{Capability, Profile, ProfileError};
///
/// let p07 = Profile::for_chapter(7).unwrap();
/// assert_eq!(p07.id(), "P07");
/// // Cumulative: chapter 7 has what chapters 1–6 added, and skills last.
/// let caps = p07.capabilities();
/// assert_eq!(caps.first(), Some(&Capability::Bash));
/// assert_eq!(caps.last(), Some(&Capability::Skills));
/// assert!(!caps.contains(&Capability::Compaction));
/// // Every chapter of the table is built (a planned one would be refused as
/// // `ProfileError::NotBuilt`); a number past the table is refused, saying so.
/// assert_eq!(Profile::planned().count(), 0);
/// assert_eq!(Profile::for_chapter(20).map(|p| p.id()), Ok("P20".to_string()));
/// assert_eq!(Profile::for_chapter(21), Err(ProfileError::Unknown(21)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// Its number: chapters count from 1, in the order the tutorial reads.
    pub chapter: u8,
    /// Whether it can be run.
    pub status: Status,
    /// What this chapter adds on top of the one before.
    pub adds: &'static [Capability],
    /// One line: what `agent-tutorial chapters` shows.
    pub title: &'static str,
}

const fn row(
    chapter: u8,
    status: Status,
    adds: &'static [Capability],
    title: &'static str,
) -> Profile {
    Profile {
        chapter,
        status,
        adds,
        title,
    }
}

use Capability as C;
use Status::{Built, Planned};

/// Every chapter of the tutorial, built or planned, in order.
#[rustfmt::skip]
const TABLE: &[Profile] = &[
    row(1,  Built,   &[C::Bash],                  "the loop: call the model, run tool calls, feed results back"),
    row(2,  Built,   &[C::Files],                 "a schema-checked tool registry and workspace-confined file tools"),
    row(3,  Built,   &[C::Policy],                "permission pipeline: allow / deny / ask / passthrough, approval, audit"),
    row(4,  Built,   &[C::Hooks],                 "lifecycle hooks"),
    row(5,  Built,   &[C::Todo],                  "todo_write and the stale-plan reminder"),
    row(6,  Built,   &[C::Subagent],              "subagents"),
    row(7,  Built,   &[C::Skills],                "skills"),
    row(8,  Built,   &[C::Artifacts, C::Compaction], "large-result artifacts and compaction"),
    row(9,  Built,   &[C::Memory],                "file memory, injected as its own message"),
    row(10, Built,   &[C::DynamicPrompt],         "the system prompt assembled at run time"),
    row(11, Built,   &[C::Recovery],              "recovery: truncation, prompt-too-long, 429/5xx, fallback model"),
    row(12, Built,   &[C::TaskGraph],             "tasks that outlive the conversation: a persistent DAG in .tasks/"),
    row(13, Built,   &[C::Background],            "background jobs: work that runs while the agent keeps talking"),
    row(14, Built,   &[C::Cron],                  "cron: prompts that run on a schedule"),
    row(15, Built,   &[C::Teammates, C::Mailbox], "teammates: persistent teammates that talk through durable mailboxes"),
    row(16, Built,   &[C::Protocols, C::PlanGate], "protocols: shutdown and plan approval, requests answered by id"),
    row(17, Built,   &[C::TaskBoard, C::Autonomy], "a shared task board: claims, leases and fencing tokens"),
    row(18, Built,   &[C::Worktrees],             "worktrees: every claimed task in its own git worktree, nothing lost on removal"),
    row(19, Built,   &[C::Mcp],                   "MCP servers: trusted before they start, bounded while they run, gone when they end"),
    row(20, Built,   &[C::FullHarness],           "the full harness: everything on one runner"),
];

/// Why a chapter number has no profile to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// Not a chapter of the table.
    #[error("there is no chapter {0}; chapters are numbered 1 to {max}", max = TABLE.len())]
    Unknown(u8),
    /// A chapter that is planned, not built.
    #[error(
        "chapter {0} is planned but not built yet; run `agent-tutorial chapters` to see what is"
    )]
    NotBuilt(u8),
}

impl Profile {
    /// The profile of a built chapter.
    pub fn for_chapter(chapter: u8) -> Result<Profile, ProfileError> {
        match TABLE.iter().find(|p| p.chapter == chapter) {
            Some(profile) if profile.status == Built => Ok(*profile),
            Some(_) => Err(ProfileError::NotBuilt(chapter)),
            None => Err(ProfileError::Unknown(chapter)),
        }
    }

    /// Every built chapter, in order.
    pub fn built() -> impl Iterator<Item = Profile> {
        TABLE.iter().filter(|p| p.status == Built).copied()
    }

    /// Chapters that are planned but not built yet.
    pub fn planned() -> impl Iterator<Item = Profile> {
        TABLE.iter().filter(|p| p.status == Planned).copied()
    }

    /// All capabilities, cumulative, in the order chapters added them.
    pub fn capabilities(&self) -> Vec<Capability> {
        TABLE
            .iter()
            .take_while(|p| p.chapter <= self.chapter)
            .flat_map(|p| p.adds.iter().copied())
            .collect()
    }

    /// The same capabilities as a set, for the harness.
    pub fn capability_set(&self) -> Capabilities {
        self.capabilities().into_iter().collect()
    }

    /// What the harness answers for this chapter's capabilities: how Ctrl-C, input, the
    /// prompt and hooks behave.
    pub fn features(&self) -> agent_harness::Features {
        agent_harness::Features::of(self.capability_set())
    }

    /// `P01`, `P02`, …
    pub fn id(&self) -> String {
        format!("P{:02}", self.chapter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_cumulative() {
        let p2 = Profile::for_chapter(2).unwrap();
        assert_eq!(p2.capabilities(), vec![C::Bash, C::Files]);
        assert_eq!(
            Profile::for_chapter(1).unwrap().capabilities(),
            vec![C::Bash]
        );
    }

    #[test]
    fn unknown_chapters_are_errors_and_every_row_is_built() {
        assert_eq!(Profile::for_chapter(0), Err(ProfileError::Unknown(0)));
        assert_eq!(Profile::for_chapter(21), Err(ProfileError::Unknown(21)));
        // The last chapter is built: the table has no planned row left.
        assert_eq!(Profile::for_chapter(20).map(|p| p.status), Ok(Built));
        assert_eq!(Profile::planned().count(), 0);
    }

    #[test]
    fn the_table_is_in_chapter_order_and_every_capability_is_added_once() {
        let chapters: Vec<u8> = TABLE.iter().map(|p| p.chapter).collect();
        assert_eq!(chapters, (1..=TABLE.len() as u8).collect::<Vec<_>>());
        let mut all: Vec<Capability> = TABLE.iter().flat_map(|p| p.adds.iter().copied()).collect();
        let count = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), count);
    }
}
