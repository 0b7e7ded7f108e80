//! The system prompts the composition root builds: the fixed one of chapters 1–9 (and of a
//! subagent), and chapter 10's provider that renders it before every request from the
//! sections the features add.

use std::sync::Arc;

use agent_core::{FixedPrompt, ToolRegistry};
use agent_prompting::{DynamicPromptProvider, DynamicPromptRenderer, PromptSection, SectionOrder};
use agent_tools::Workspace;

use crate::AgentSpec;

/// The system prompt of the chapters before the dynamic prompt (chapter 10), as Markdown so a
/// reader edits text, not code.
pub const FIXED_SYSTEM_PROMPT: &str = include_str!("../prompts/fixed_system.md");
/// The skills paragraph appended to the fixed prompt in chapters 7–9.
pub const SKILLS_SECTION: &str = include_str!("../prompts/skills_section.md");
/// The identity section of chapter 10's dynamic prompt.
pub const IDENTITY: &str = include_str!("../prompts/identity.md");
/// The system prompt of a subagent (chapter 6).
pub const SUBAGENT_SYSTEM_PROMPT: &str = include_str!("../prompts/subagent_system.md");

/// Where a feature's section goes in chapter 10's prompt, after identity, tools and
/// workspace: each section only ever appends to the text before it, so the most stable come
/// first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SectionSlot {
    /// The skill catalog (chapter 7), fixed at build.
    Skills,
    /// The selected memories (chapter 9), new each turn.
    Memory,
    /// The open tasks (chapter 12), read before every request.
    Tasks,
}

impl SectionSlot {
    /// The order the section carries.
    pub(crate) fn order(self) -> SectionOrder {
        SectionOrder::new(self as u16)
    }
}

/// The fixed system prompt of chapters 1–9, followed by the features' paragraphs (from
/// chapter 7 on, the skill catalog).
pub(crate) fn fixed_system_prompt(
    workspace: &Workspace,
    paragraphs: &[String],
) -> Arc<FixedPrompt> {
    let mut text = FIXED_SYSTEM_PROMPT.trim_end().to_string();
    for paragraph in paragraphs {
        text.push_str("\n\n");
        text.push_str(paragraph);
    }
    fixed_prompt(&text, workspace)
}

/// `template` with its `{workspace}` filled in.
pub(crate) fn fixed_prompt(template: &str, workspace: &Workspace) -> Arc<FixedPrompt> {
    let text = template
        .trim_end()
        .replace("{workspace}", &workspace.root().display().to_string());
    Arc::new(FixedPrompt(text))
}

/// Chapter 10's provider: identity and context bound now, tools read live, then the
/// features' sections, each placed by its own order.
pub(crate) fn dynamic_prompt(
    spec: &AgentSpec,
    workspace: &Workspace,
    tools: &Arc<ToolRegistry>,
    sections: Vec<PromptSection>,
) -> DynamicPromptProvider {
    DynamicPromptProvider::new(
        Arc::new(DynamicPromptRenderer::new()),
        IDENTITY.trim(),
        spec.context.clone(),
        tools.clone(),
        workspace.root().display().to_string(),
    )
    .sections(sections)
}
