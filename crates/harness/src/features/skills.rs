//! Chapter 7: the skill catalog in the system prompt and `load_skill`.

use std::sync::Arc;

use agent_prompting::{PromptSection, SectionBody};
use agent_skills::{LoadSkill, SkillCatalog};
use agent_tools::Workspace;

use super::{Assembly, Feature, ToolSlot, assembly::Tools};
use crate::prompts::{SKILLS_SECTION, SectionSlot};
use crate::{BuildError, Capability};

/// The workspace's trusted skills, scanned once, here: a skill added on disk needs a rebuild
/// (see docs/ch07.md). The agent and its subagents share the catalog.
pub(crate) struct Skills;

fn load_skill(tools: &mut Tools, catalog: &Arc<SkillCatalog>, workspace: &Workspace) {
    let handler = LoadSkill {
        catalog: catalog.clone(),
        workspace: workspace.clone(),
    };
    tools.add(ToolSlot::Skills, move |t| {
        t.tool(agent_skills::spec(), Arc::new(handler))
    });
}

impl Feature for Skills {
    fn capability(&self) -> Capability {
        Capability::Skills
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        let workspace = agent.deps.workspace.clone();
        let catalog = Arc::new(SkillCatalog::scan(&workspace).trusted(&*agent.deps.trust));
        load_skill(&mut agent.tools, &catalog, &workspace);
        // Chapters 7–9: a paragraph of the fixed prompt, even with no skill.
        agent.paragraphs.push(
            SKILLS_SECTION
                .trim_end()
                .replace("{catalog}", &catalog.render()),
        );
        // Chapter 10 on: a section, left out when there is no skill.
        if !catalog.is_empty() {
            agent.sections.push(PromptSection::new(
                "skills",
                SectionSlot::Skills.order(),
                SectionBody::Fixed(catalog.render()),
            ));
        }
        agent.for_children(move |child| load_skill(&mut child.tools, &catalog, &workspace));
        Ok(())
    }
}
