//! What an agent can do: the capabilities the composition root switches on, one at a time.

use std::fmt;

/// One capability the composition root can switch on. Each is one feature module of the
/// harness, listed once in its feature table; which ones a chapter has is the chapter table's
/// business (`agent-tutorial`), not the harness's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Capability {
    /// The `bash` tool (chapter 1).
    Bash,
    /// `read_file`, `write_file`, `edit_file`, `glob` (chapter 2).
    Files,
    /// The permission pipeline (chapter 3).
    Policy,
    /// Lifecycle hooks (chapter 4).
    Hooks,
    /// `todo_write` and the stale-plan reminder (chapter 5).
    Todo,
    /// The `task` tool: subagents (chapter 6).
    Subagent,
    /// The skill catalog and `load_skill` (chapter 7).
    Skills,
    /// Large tool results to files (chapter 8).
    Artifacts,
    /// Snip, micro and summary compaction (chapter 8).
    Compaction,
    /// File memory: select before a turn, extract after it (chapter 9).
    Memory,
    /// The system prompt rendered before every request (chapter 10).
    DynamicPrompt,
    /// Retries, fallback model, cut-off replies (chapter 11).
    Recovery,
    /// The persistent task list (chapter 12).
    TaskGraph,
    /// Background jobs (chapter 13).
    Background,
    /// Scheduled prompts (chapter 14).
    Cron,
    /// Named teammates the lead starts, each an agent of the session (chapter 15).
    Teammates,
    /// The durable mailboxes the agents talk through (chapter 15).
    Mailbox,
    /// Shutdown and plan approval, as durable requests answered by id (chapter 16).
    Protocols,
    /// The plan gate: a teammate's changes wait for an approved plan (chapter 16).
    PlanGate,
    /// The shared task board: claims under renewed leases, fenced writes (chapter 17).
    TaskBoard,
    /// Idle teammates claim the board's ready tasks on their own (chapter 17).
    Autonomy,
    /// Each claimed task in its own git worktree: the lead's worktree tools, a teammate's
    /// calls routed to its task's worktree (chapter 18).
    Worktrees,
    /// MCP servers from the trusted `.mcp.json`, the lead's only: started with the session,
    /// `connect_mcp` / `disconnect_mcp`, their tools as `mcp__<alias>__<name>` (chapter 19).
    Mcp,
    /// Everything on one runner, with what a daily user expects of it: replies streamed by
    /// default, sessions that can be continued, slash commands at the prompt (chapter 20).
    FullHarness,
}

impl Capability {
    /// Every capability, in the order the chapters add them.
    pub const ALL: [Capability; 24] = [
        Self::Bash,
        Self::Files,
        Self::Policy,
        Self::Hooks,
        Self::Todo,
        Self::Subagent,
        Self::Skills,
        Self::Artifacts,
        Self::Compaction,
        Self::Memory,
        Self::DynamicPrompt,
        Self::Recovery,
        Self::TaskGraph,
        Self::Background,
        Self::Cron,
        Self::Teammates,
        Self::Mailbox,
        Self::Protocols,
        Self::PlanGate,
        Self::TaskBoard,
        Self::Autonomy,
        Self::Worktrees,
        Self::Mcp,
        Self::FullHarness,
    ];

    /// The snake_case name shown by `agent-tutorial chapters`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Bash => "bash",
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
            Self::TaskGraph => "task_graph",
            Self::Background => "background",
            Self::Cron => "cron",
            Self::Teammates => "teammates",
            Self::Mailbox => "mailbox",
            Self::Protocols => "protocols",
            Self::PlanGate => "plan_gate",
            Self::TaskBoard => "task_board",
            Self::Autonomy => "autonomy",
            Self::Worktrees => "worktrees",
            Self::Mcp => "mcp",
            Self::FullHarness => "full_harness",
        }
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of capabilities: what one agent is built with.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Capabilities(u32);

impl Capabilities {
    /// No capability: the plain loop with no tool.
    pub const fn none() -> Self {
        Self(0)
    }

    /// This set and `capability`.
    #[must_use]
    pub fn with(self, capability: Capability) -> Self {
        Self(self.0 | capability.bit())
    }

    /// This set without `capability` (a subagent's set leaves out `Subagent`).
    #[must_use]
    pub fn without(self, capability: Capability) -> Self {
        Self(self.0 & !capability.bit())
    }

    /// The capabilities in both sets (a teammate's: its fixed set, cut to what the lead has).
    #[must_use]
    pub fn intersection(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }

    /// Whether `capability` is in the set.
    pub fn has(self, capability: Capability) -> bool {
        self.0 & capability.bit() != 0
    }

    /// The capabilities in the set, in [`Capability::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Capability> {
        Capability::ALL.into_iter().filter(move |c| self.has(*c))
    }
}

impl FromIterator<Capability> for Capabilities {
    fn from_iter<I: IntoIterator<Item = Capability>>(iter: I) -> Self {
        iter.into_iter().fold(Self::none(), Self::with)
    }
}

impl fmt::Debug for Capabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_holds_what_was_added_in_table_order() {
        let set: Capabilities = [Capability::Cron, Capability::Bash].into_iter().collect();
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            [Capability::Bash, Capability::Cron]
        );
        assert_eq!(
            set.without(Capability::Cron).iter().collect::<Vec<_>>(),
            [Capability::Bash]
        );
        assert_eq!(format!("{set:?}"), "{Bash, Cron}");
    }

    #[test]
    fn an_intersection_holds_what_both_sets_hold() {
        let lead: Capabilities = [Capability::Bash, Capability::Cron, Capability::Teammates]
            .into_iter()
            .collect();
        let teammate: Capabilities = [Capability::Bash, Capability::Files].into_iter().collect();
        assert_eq!(
            teammate.intersection(lead).iter().collect::<Vec<_>>(),
            [Capability::Bash]
        );
    }

    #[test]
    fn every_capability_has_its_own_bit() {
        let all: Capabilities = Capability::ALL.into_iter().collect();
        assert_eq!(all.iter().count(), Capability::ALL.len());
    }
}
