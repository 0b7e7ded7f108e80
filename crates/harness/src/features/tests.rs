use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::*;

/// Each capability is switched on by exactly one feature: the table lists every capability
/// once, so `installed`'s `has(..)` is the only one each needs.
#[test]
fn the_table_lists_every_capability_once() {
    let mut listed: Vec<Capability> = FEATURES.iter().map(|f| f.capability()).collect();
    listed.sort();
    let mut all = Capability::ALL.to_vec();
    all.sort();
    assert_eq!(listed, all);
}

/// The `.rs` files under `dir`, recursively.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// No source of the workspace tests a capability by name with `has(..)`: every question goes
/// through the feature table (the one `has` in `installed`) or a typed answer of [`Features`].
#[test]
fn no_source_tests_a_named_capability() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    // Not the whole root: a target directory inside it holds generated sources.
    for dir in ["crates", "chapters", "tests"] {
        sources(&root.join(dir), &mut files);
    }
    // Built here, so this file does not match itself.
    let named = ["Capability::", "C::", "crate::Capability::"].map(|path| format!("has({path}"));
    let mut found: BTreeMap<String, usize> = BTreeMap::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if named.iter().any(|pattern| line.contains(pattern.as_str())) {
                let path = file.strip_prefix(&root).unwrap_or(&file);
                *found
                    .entry(format!("{}:{}", path.display(), n + 1))
                    .or_default() += 1;
            }
        }
    }
    assert_eq!(found, BTreeMap::new());
}

/// What a front end is told follows the chapters: plain lines and a session-ending Ctrl-C
/// before recovery, a fixed prompt before chapter 10, hooks from chapter 4, a team from
/// chapter 15, its protocols from chapter 16, its board and autonomy from chapter 17 and
/// worktrees from chapter 18.
#[test]
fn the_answers_follow_the_capabilities() {
    let up_to = |last: Capability| -> Capabilities {
        let end = Capability::ALL.iter().position(|c| *c == last).unwrap();
        Capability::ALL[..=end].iter().copied().collect()
    };
    // Each chapter's answers are the ones before it with what its capability changes.
    let files = Features {
        interrupts: Interrupts::EndSession,
        input: Input::PlainLines,
        fallback: ModelFallback::NotUsed,
        prompt: PromptStyle::Fixed,
        shell_hooks: ShellHooks::Ignored,
        team: Team::Alone,
        protocols: agent_team::Protocols::Off,
        board: Board::None,
        autonomy: Autonomy::Off,
        worktrees: WorktreeUse::Off,
        mcp: McpUse::Off,
        stream_default: StreamDefault::Whole,
        slash_commands: SlashCommands::Off,
    };
    let dynamic_prompt = Features {
        prompt: PromptStyle::Dynamic,
        shell_hooks: ShellHooks::Loaded,
        ..files
    };
    let recovery = Features {
        interrupts: Interrupts::CancelTurn,
        input: Input::LineEditor,
        fallback: ModelFallback::Required,
        ..dynamic_prompt
    };
    let mailbox = Features {
        team: Team::Lead,
        ..recovery
    };
    let plan_gate = Features {
        protocols: agent_team::Protocols::On,
        ..mailbox
    };
    let autonomy = Features {
        board: Board::Shared,
        autonomy: Autonomy::On,
        ..plan_gate
    };
    let worktrees = Features {
        worktrees: WorktreeUse::On,
        ..autonomy
    };
    let mcp = Features {
        mcp: McpUse::On,
        ..worktrees
    };
    let full_harness = Features {
        stream_default: StreamDefault::Streamed,
        slash_commands: SlashCommands::On,
        ..mcp
    };
    let answers: Vec<Features> = [
        Capability::Files,
        Capability::DynamicPrompt,
        Capability::Recovery,
        Capability::Mailbox,
        Capability::PlanGate,
        Capability::Autonomy,
        Capability::Worktrees,
        Capability::Mcp,
        Capability::FullHarness,
    ]
    .into_iter()
    .map(|last| Features::of(up_to(last)))
    .collect();
    assert_eq!(
        answers,
        [
            files,
            dynamic_prompt,
            recovery,
            mailbox,
            plan_gate,
            autonomy,
            worktrees,
            mcp,
            full_harness
        ]
    );
}
