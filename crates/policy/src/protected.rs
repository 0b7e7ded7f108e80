//! Writes that change what runs next time always ask.
//!
//! `.git/` (a `core.fsmonitor` or hook line runs on the user's next `git status`), the
//! harness's state (`.agent_tutorial/` with `hooks.json` and the schedules, `.memory/`,
//! `.tasks/`: text in every future prompt), skills (`skills/`: the catalog in every prompt)
//! and, from chapter 19, `.mcp.json` (servers started next run). A write there asks whatever
//! else allowed it, and the question is marked so that no remembered "always" answers it
//! (see [`crate::Protection`]).
//!
//! A write that names no workspace file (`task_create`, `schedule_cron`) writes the harness's
//! own state, so it is protected too. A command is checked by its text: bash can touch any
//! of these, and a command that names one is asked as protected (commands ask anyway; the
//! check is about the mark, not a sandbox — see the OS sandbox for that).

use std::path::{Component, Path};

use agent_core::{Behavior, PreparedCall, ToolEffect, Verdict};
use agent_workspace::Workspace;

use crate::pipeline::{PermissionRule, RuleError};

/// Folders (any depth for `.git`, the top for the rest) and files whose change is protected.
pub const PROTECTED_TOP_FOLDERS: [&str; 4] = [".agent_tutorial", ".memory", ".tasks", "skills"];
/// Files protected wherever they are.
pub const PROTECTED_FILES: [&str; 2] = ["hooks.json", ".mcp.json"];

/// The rule.
#[derive(Debug, Clone)]
pub struct ProtectedPaths(pub Workspace);

impl ProtectedPaths {
    /// The rule's name, as verdicts and the audit log name it.
    pub const NAME: &'static str = "protected_paths_ask";
}

/// Why `path` (workspace-relative, as resolved) is protected, if it is.
fn protected_reason(path: &Path) -> Option<String> {
    let names: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_string_lossy().to_lowercase()),
            _ => None,
        })
        .collect();
    // Case-folded: on a case-insensitive file system `.GIT/config` is `.git/config`.
    if names.iter().any(|n| n == ".git") {
        return Some("`.git/` runs what it holds on the next git command".into());
    }
    if let Some(top) = names.first()
        && let Some(folder) = PROTECTED_TOP_FOLDERS.iter().find(|f| *f == top)
    {
        return Some(format!(
            "`{folder}/` is the harness's state or the prompt's skills"
        ));
    }
    if let Some(file) = names
        .last()
        .and_then(|last| PROTECTED_FILES.iter().find(|f| *f == last))
    {
        return Some(format!("`{file}` decides what runs next time"));
    }
    None
}

impl ProtectedPaths {
    fn path_reason(&self, raw: &str) -> Option<String> {
        match self.0.inside(raw) {
            Ok(inside) => protected_reason(inside.path()),
            // Unresolvable: judged by its words (the boundary rule denies what escapes).
            Err(_) => protected_reason(Path::new(raw)),
        }
    }

    /// The protected name a command mentions, if any.
    fn command_reason(command: &str) -> Option<String> {
        let lower = command.to_lowercase();
        [".git"]
            .iter()
            .chain(PROTECTED_TOP_FOLDERS.iter())
            .chain(PROTECTED_FILES.iter())
            .find(|name| lower.contains(*name))
            .map(|name| format!("the command names `{name}`, which decides what runs next time"))
    }
}

impl PermissionRule for ProtectedPaths {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn evaluate(&self, call: &PreparedCall) -> Result<Verdict, RuleError> {
        let reason = match call.effect {
            ToolEffect::Write if call.summary.paths.is_empty() => Some(format!(
                "`{}` writes the harness's state, which reaches every future prompt",
                call.name
            )),
            ToolEffect::Write => call
                .summary
                .paths
                .iter()
                .find_map(|path| self.path_reason(path)),
            ToolEffect::Execute => Self::command_reason(&call.summary.text),
            _ => None,
        };
        Ok(match reason {
            Some(reason) => Verdict::new(
                Behavior::Ask,
                Self::NAME,
                format!("{reason}, so this always asks"),
            ),
            None => Verdict::passthrough(Self::NAME),
        })
    }
}

/// Tools whose calls put text into every future system prompt (chapter 12's `task_create`
/// and `task_update`): asked like a write, so `--approve none` refuses them. The composition
/// root names them (it knows which tools persist), from the tools' own name constants.
#[derive(Debug, Clone)]
pub struct PromptWrites {
    tools: Vec<String>,
}

impl PromptWrites {
    /// The rule's name, as verdicts and the audit log name it.
    pub const NAME: &'static str = "prompt_writes_ask";

    /// Asks before every call of the tools named `tools`.
    pub fn new<'a>(tools: impl IntoIterator<Item = &'a str>) -> Self {
        Self {
            tools: tools.into_iter().map(str::to_string).collect(),
        }
    }
}

impl PermissionRule for PromptWrites {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn evaluate(&self, call: &PreparedCall) -> Result<Verdict, RuleError> {
        Ok(if self.tools.contains(&call.name) {
            Verdict::new(
                Behavior::Ask,
                Self::NAME,
                format!(
                    "`{}` puts text into every future prompt, so it asks like a write",
                    call.name
                ),
            )
        } else {
            Verdict::passthrough(Self::NAME)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_places_are_found_however_the_path_is_spelled() {
        let cases = [
            (".git/config", true),
            ("sub/.git/hooks/pre-commit", true),
            (".GIT/config", true),
            (".agent_tutorial/hooks.json", true),
            (".memory/MEMORY.md", true),
            (".tasks/1.json", true),
            ("skills/x/SKILL.md", true),
            (".mcp.json", true),
            ("docs/skills.md", false),
            ("src/main.rs", false),
            ("notes/.gitignore", false),
        ];
        let found: Vec<(&str, bool)> = cases
            .iter()
            .map(|(p, _)| (*p, protected_reason(Path::new(p)).is_some()))
            .collect();
        assert_eq!(found, cases);
    }
}
