//! Chapter 9: file memory, selected before a turn and extracted after it.

use std::sync::Arc;

use agent_memory::{MemoryInjector, MemoryPlacement, MemorySession, MemoryStore};
use agent_prompting::{PromptSection, SectionBody};

use super::{Assembly, Feature, PromptStyle, StartSelection};
use crate::prompts::SectionSlot;
use crate::{BuildError, Capability};

/// The memory session and where its selection goes: its own message (chapter 9), the
/// prompt's `## memory` section or a stored reminder (chapter 10 on, `--memory-placement`).
/// One decision, made here: the block has exactly one owner per agent, so it cannot be sent
/// twice or not at all.
pub(crate) struct Memory;

impl Feature for Memory {
    fn capability(&self) -> Capability {
        Capability::Memory
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        // A fixed prompt (chapter 9) has no section to render the block in.
        let placement = match agent.features.prompt {
            PromptStyle::Dynamic => agent.deps.memory_placement,
            PromptStyle::Fixed => MemoryPlacement::OwnMessage,
        };
        let store = MemoryStore::open(&agent.deps.workspace);
        let session = MemorySession::new(store, agent.deps.model.clone(), placement)
            .events(agent.events.clone())
            // What it saves reaches every future prompt: a write, decided by the gate.
            .gate(agent.gate.clone());
        let selected = match agent.start {
            StartSelection::Empty => Vec::new(),
            StartSelection::KeywordsFor(prompt) => {
                session.select_by_keywords(prompt).unwrap_or_else(|err| {
                    // The preview then shows no memory, as a turn whose load failed would.
                    tracing::warn!("memory: cannot load memories: {err}");
                    Vec::new()
                })
            }
        };
        let session = Arc::new(session.with_selection(selected));
        match placement {
            // Last of the processors, so the memory message is never compacted.
            MemoryPlacement::OwnMessage => {
                let injector = Arc::new(MemoryInjector(session.clone()));
                agent.runner(move |r| r.processor(injector));
            }
            MemoryPlacement::Prompt => {
                let source = session.clone();
                agent.sections.push(PromptSection::new(
                    "memory",
                    SectionSlot::Memory.order(),
                    SectionBody::Live(Arc::new(move || source.render_selected())),
                ));
            }
            // The prompt never shows memory; `Agent` stores the block in the history.
            MemoryPlacement::Reminder => {}
        }
        agent.memory = Some(session);
        agent.memory_placement = placement;
        // A teammate reads the project's memory and saves none. What is worth keeping is
        // what the person said, and that is in the lead's turns, not in the lead's messages
        // a teammate works on; teammates run at once, so their extractions and
        // consolidations would race each other's and the lead's on one store; and every
        // teammate turn would cost two more model calls and, through the gate, questions to
        // the person about writes they never asked for.
        if matches!(
            agent.deps.team,
            crate::team_runtime::TeamSeat::Teammate { .. }
        ) {
            agent.memory_use = crate::agent::MemoryUse::ReadOnly;
        }
        Ok(())
    }
}
