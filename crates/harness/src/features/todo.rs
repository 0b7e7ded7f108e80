//! Chapter 5: `todo_write` and the stale-plan reminder.

use std::sync::Arc;

use agent_core::Events;
use agent_tools::todo::{self, TodoList, TodoReminder, TodoWrite};

use super::{Assembly, ChildAssembly, Feature, ToolSlot, assembly::Tools};
use crate::{BuildError, Capability};

/// A plan of its own for the agent and for every subagent, each with its reminder.
pub(crate) struct Todo;

/// Adds a fresh plan's tool to `tools` and returns the reminder that watches it.
fn plan(tools: &mut Tools, events: &Events) -> TodoReminder {
    let list = Arc::new(TodoList::new(events.clone()));
    tools.add(ToolSlot::Todo, move |t| {
        t.tool(todo::spec(), Arc::new(TodoWrite(list)))
    });
    TodoReminder::new(events.clone())
}

impl Feature for Todo {
    fn capability(&self) -> Capability {
        Capability::Todo
    }

    fn install(&self, agent: &mut Assembly<'_>) -> Result<(), BuildError> {
        let reminder = Arc::new(plan(&mut agent.tools, &agent.events));
        agent.runner(move |r| r.processor(reminder));
        agent.for_children(|child: &mut ChildAssembly| {
            let reminder = Arc::new(plan(&mut child.tools, &child.events));
            child.runner(move |r| r.processor(reminder));
        });
        Ok(())
    }
}
