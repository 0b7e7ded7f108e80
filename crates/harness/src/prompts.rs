//! The system prompts the composition root builds: the fixed one of chapters 1–9 (and of a
//! subagent), and chapter 10's provider that renders it before every request.

use std::sync::Arc;

use agent_core::{FixedPrompt, ToolRegistry};
use agent_memory::MemorySession;
use agent_prompting::{DynamicPromptProvider, DynamicPromptRenderer};
use agent_skills::SkillCatalog;
use agent_tasks::TaskStore;
use agent_tools::Workspace;

use crate::{AgentSpec, BuildError, Capabilities, Capability};

/// The system prompt of the chapters before the dynamic prompt (chapter 10), as Markdown so a
/// reader edits text, not code.
pub const FIXED_SYSTEM_PROMPT: &str = include_str!("../prompts/fixed_system.md");
/// The skills paragraph appended to the fixed prompt in chapters 7–9.
pub const SKILLS_SECTION: &str = include_str!("../prompts/skills_section.md");
/// The identity section of chapter 10's dynamic prompt.
pub const IDENTITY: &str = include_str!("../prompts/identity.md");
/// The system prompt of a subagent (chapter 6).
pub const SUBAGENT_SYSTEM_PROMPT: &str = include_str!("../prompts/subagent_system.md");

/// The fixed system prompt of chapters 1–9; from chapter 7 on it ends with the skill catalog.
pub(crate) fn fixed_system_prompt(
    caps: Capabilities,
    workspace: &Workspace,
    skills: &SkillCatalog,
) -> Arc<FixedPrompt> {
    let mut text = FIXED_SYSTEM_PROMPT.trim_end().to_string();
    if caps.has(Capability::Skills) {
        text.push_str("\n\n");
        text.push_str(
            SKILLS_SECTION
                .trim_end()
                .replace("{catalog}", &skills.render())
                .as_str(),
        );
    }
    fixed_prompt(&text, workspace)
}

pub(crate) fn fixed_prompt(template: &str, workspace: &Workspace) -> Arc<FixedPrompt> {
    let text = template
        .trim_end()
        .replace("{workspace}", &workspace.root().display().to_string());
    Arc::new(FixedPrompt(text))
}

/// Chapter 10's provider: identity and context bound now, tools and memory read live, the
/// skill catalog as scanned now (omitted when there is no skill).
pub(crate) fn dynamic_prompt(
    spec: &AgentSpec,
    workspace: &Workspace,
    tools: &Arc<ToolRegistry>,
    skills: &SkillCatalog,
    memory: Option<&Arc<MemorySession>>,
    tasks: Option<&Arc<TaskStore>>,
) -> Result<DynamicPromptProvider, BuildError> {
    let mut provider = DynamicPromptProvider::new(
        Arc::new(DynamicPromptRenderer::new()),
        IDENTITY.trim(),
        spec.context.clone(),
        tools.clone(),
        workspace.root().display().to_string(),
    )
    .skills((!skills.is_empty()).then(|| skills.render()));
    if let Some(session) = memory {
        let session = session.clone();
        provider = provider.memory(Arc::new(move || session.render_selected()));
    }
    if let Some(store) = tasks {
        // Read from disk before every request: another process (or `agent-tutorial tasks`)
        // may have changed the list. A store that cannot be read leaves the section out.
        let store = store.clone();
        provider = provider.tasks(Arc::new(move || match store.snapshot() {
            Ok(snapshot) => agent_tasks::render::prompt_block(&snapshot.tasks),
            Err(err) => {
                tracing::warn!("tasks: cannot list open tasks for the prompt: {err}");
                None
            }
        }));
    }
    Ok(provider)
}
