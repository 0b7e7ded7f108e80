//! Chapter profiles: one code base, each chapter switching capabilities on.
//!
//! The whole table fits on one screen on purpose: it is the map of the tutorial.

use std::fmt;

/// A capability a chapter switches on. Profiles are cumulative: chapter N has everything of
/// chapters 1..=N.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Capability {
    Loop,
    Bash,
    ToolRegistry,
    Files,
    Policy,
    Hooks,
    Todo,
    Subagent,
    Skills,
    Artifacts,
    Compaction,
    Memory,
    DynamicPrompt,
    Recovery,
}

impl Capability {
    pub fn name(self) -> &'static str {
        match self {
            Self::Loop => "loop",
            Self::Bash => "bash",
            Self::ToolRegistry => "tool_registry",
            Self::Files => "files",
            Self::Policy => "policy",
            Self::Hooks => "hooks",
            Self::Todo => "todo",
            Self::Subagent => "subagent",
            Self::Skills => "skills",
            Self::Artifacts => "artifacts",
            Self::Compaction => "compaction",
            Self::Memory => "memory",
            Self::DynamicPrompt => "dynamic_prompt",
            Self::Recovery => "recovery",
        }
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One chapter's profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    pub chapter: u8,
    pub title: &'static str,
    /// What this chapter adds on top of the one before.
    pub adds: &'static [Capability],
}

use Capability as C;

/// Every chapter of the tutorial, built or planned, in order.
const TABLE: &[(Profile, bool)] = &[
    (
        Profile {
            chapter: 1,
            title: "the loop: call the model, run tool calls, feed results back",
            adds: &[C::Loop, C::Bash],
        },
        true,
    ),
    (
        Profile {
            chapter: 2,
            title: "a schema-checked tool registry and workspace-confined file tools",
            adds: &[C::ToolRegistry, C::Files],
        },
        true,
    ),
    (
        Profile {
            chapter: 3,
            title: "permission pipeline: allow / deny / ask / passthrough, approval, audit",
            adds: &[C::Policy],
        },
        true,
    ),
    (
        Profile {
            chapter: 4,
            title: "lifecycle hooks",
            adds: &[C::Hooks],
        },
        true,
    ),
    (
        Profile {
            chapter: 5,
            title: "todo_write and the stale-plan reminder",
            adds: &[C::Todo],
        },
        true,
    ),
    (
        Profile {
            chapter: 6,
            title: "subagents",
            adds: &[C::Subagent],
        },
        true,
    ),
    (
        Profile {
            chapter: 7,
            title: "skills",
            adds: &[C::Skills],
        },
        true,
    ),
    (
        Profile {
            chapter: 8,
            title: "large-result artifacts and compaction",
            adds: &[C::Artifacts, C::Compaction],
        },
        true,
    ),
    (
        Profile {
            chapter: 9,
            title: "file memory, injected as its own message",
            adds: &[C::Memory],
        },
        true,
    ),
    (
        Profile {
            chapter: 10,
            title: "the system prompt assembled at run time",
            adds: &[C::DynamicPrompt],
        },
        true,
    ),
    (
        Profile {
            chapter: 11,
            title: "recovery: truncation, prompt-too-long, 429/5xx, fallback model",
            adds: &[C::Recovery],
        },
        false,
    ),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    #[error("there is no chapter {0}; chapters are numbered 1 to {max}", max = TABLE.len())]
    Unknown(u8),
    #[error(
        "chapter {0} is planned but not built yet; run `agent-tutorial chapters` to see what is"
    )]
    NotBuilt(u8),
}

impl Profile {
    /// The profile of a built chapter.
    pub fn for_chapter(chapter: u8) -> Result<Profile, ProfileError> {
        match TABLE.iter().find(|(p, _)| p.chapter == chapter) {
            Some((profile, true)) => Ok(*profile),
            Some((_, false)) => Err(ProfileError::NotBuilt(chapter)),
            None => Err(ProfileError::Unknown(chapter)),
        }
    }

    /// Every built chapter, in order.
    pub fn built() -> impl Iterator<Item = Profile> {
        TABLE.iter().filter(|(_, built)| *built).map(|(p, _)| *p)
    }

    /// Chapters that are planned but not built yet.
    pub fn planned() -> impl Iterator<Item = Profile> {
        TABLE.iter().filter(|(_, built)| !*built).map(|(p, _)| *p)
    }

    /// Whether this profile has `capability`, counting everything earlier chapters added.
    pub fn has(&self, capability: Capability) -> bool {
        TABLE
            .iter()
            .take_while(|(p, _)| p.chapter <= self.chapter)
            .any(|(p, _)| p.adds.contains(&capability))
    }

    /// All capabilities, cumulative, in the order chapters added them.
    pub fn capabilities(&self) -> Vec<Capability> {
        TABLE
            .iter()
            .take_while(|(p, _)| p.chapter <= self.chapter)
            .flat_map(|(p, _)| p.adds.iter().copied())
            .collect()
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
        assert_eq!(
            p2.capabilities(),
            vec![C::Loop, C::Bash, C::ToolRegistry, C::Files]
        );
        assert!(p2.has(C::Bash));
        assert!(!Profile::for_chapter(1).unwrap().has(C::Files));
    }

    #[test]
    fn unknown_and_unbuilt_chapters_are_errors() {
        assert_eq!(Profile::for_chapter(0), Err(ProfileError::Unknown(0)));
        assert_eq!(Profile::for_chapter(12), Err(ProfileError::Unknown(12)));
        assert_eq!(Profile::for_chapter(11), Err(ProfileError::NotBuilt(11)));
    }
}
