//! `DynamicPromptProvider`: the zero-argument provider the runner asks before every request.
//!
//! Bound at build time to the renderer and the live objects. What it reads when:
//!
//! | input | read | a change shows up |
//! |---|---|---|
//! | identity, context | bound at build | never (rebuild) |
//! | tool names | live registry, every render | in the next request |
//! | workspace | bound at build | never (rebuild) |
//! | skill catalog | build-time scan | after a rebuild |
//! | selected memory | the [`MemoryBlock`] source, every render | in the next request |
//! | open tasks (ch. 12) | the [`TaskBlock`] source, every render | in the next request |
//!
//! The `## tasks` section is appended after the renderer's sections, outside its cache: the
//! tasks change between requests far more often than anything the renderer keys on, and
//! appending keeps every byte before it — and chapter 10's prompt when there is no open task —
//! exactly as it was.

use std::sync::Arc;

use agent_core::{AgentEvent, Events, PromptError, SystemPromptProvider, ToolRegistry};
use async_trait::async_trait;

use crate::context::PromptContext;
use crate::renderer::{CheckedInputs, DynamicPromptRenderer, ToolNames};

/// Where the `## memory` section comes from: asked on every render. This crate does not know
/// how memories are stored or selected; the composition root hands it a source (in this
/// harness, a closure over the memory session).
pub trait MemoryBlock: Send + Sync {
    /// The `<relevant_memories>` block, or `None` when nothing is selected.
    fn selected_block(&self) -> Option<String>;
}

impl<F> MemoryBlock for F
where
    F: Fn() -> Option<String> + Send + Sync,
{
    fn selected_block(&self) -> Option<String> {
        self()
    }
}

/// Where the `## tasks` section comes from (chapter 12): asked on every render, like
/// [`MemoryBlock`]; this crate knows nothing of how tasks are stored.
pub trait TaskBlock: Send + Sync {
    /// The open tasks, one line each, or `None` when nothing is open (the section is left out).
    fn open_tasks(&self) -> Option<String>;
}

impl<F> TaskBlock for F
where
    F: Fn() -> Option<String> + Send + Sync,
{
    fn open_tasks(&self) -> Option<String> {
        self()
    }
}

pub struct DynamicPromptProvider {
    renderer: Arc<DynamicPromptRenderer>,
    identity: String,
    context: PromptContext,
    tools: Arc<ToolRegistry>,
    workspace: String,
    skills: Option<String>,
    memory: Option<Arc<dyn MemoryBlock>>,
    tasks: Option<Arc<dyn TaskBlock>>,
    events: Events,
}

impl std::fmt::Debug for DynamicPromptProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicPromptProvider")
            .field("identity", &self.identity)
            .field("context", &self.context.stable_json())
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

impl DynamicPromptProvider {
    pub fn new(
        renderer: Arc<DynamicPromptRenderer>,
        identity: impl Into<String>,
        context: PromptContext,
        tools: Arc<ToolRegistry>,
        workspace: impl Into<String>,
    ) -> Self {
        Self {
            renderer,
            identity: identity.into(),
            context,
            tools,
            workspace: workspace.into(),
            skills: None,
            memory: None,
            tasks: None,
            events: Events::default(),
        }
    }

    /// The skill catalog as scanned at build time.
    pub fn skills(mut self, catalog: Option<String>) -> Self {
        self.skills = catalog;
        self
    }

    /// The source of the selected-memory block the prompt renders.
    pub fn memory(mut self, source: Arc<dyn MemoryBlock>) -> Self {
        self.memory = Some(source);
        self
    }

    /// The source of the open-task list the prompt ends with (chapter 12).
    pub fn tasks(mut self, source: Arc<dyn TaskBlock>) -> Self {
        self.tasks = Some(source);
        self
    }

    /// Where each rendered prompt is told, as [`AgentEvent::PromptAssembled`].
    pub fn events(mut self, events: Events) -> Self {
        self.events = events;
        self
    }

    pub fn renderer(&self) -> &Arc<DynamicPromptRenderer> {
        &self.renderer
    }

    /// Renders the prompt from the current state. The context was validated when it became a
    /// [`PromptContext`] and the registry is compared by its stamp, so a render that finds
    /// nothing changed costs a few comparisons and one copy of the text (the
    /// [`SystemPromptProvider`] contract hands out an owned `String`).
    pub fn render(&self) -> Result<String, PromptError> {
        self.render_with(ToolNames::Registry(&self.tools))
    }

    /// Renders the prompt for a request that offers no tools: its tools section says
    /// `(none)`, so the model is never told about tools it cannot call.
    pub fn render_without_tools(&self) -> Result<String, PromptError> {
        self.render_with(ToolNames::List(&[]))
    }

    fn render_with(&self, tools: ToolNames<'_>) -> Result<String, PromptError> {
        let memory = self.memory.as_ref().and_then(|m| m.selected_block());
        let inputs = CheckedInputs {
            identity: &self.identity,
            context: &self.context,
            tools,
            workspace: &self.workspace,
            skills: self.skills.as_deref(),
            memory: memory.as_deref(),
        };
        let rendered = self
            .renderer
            .render_checked(&inputs)
            .map_err(|e| PromptError::new("cannot render the system prompt", e))?;
        let mut text = rendered.text.to_string();
        let tasks = self.tasks.as_ref().and_then(|t| t.open_tasks());
        if let Some(tasks) = tasks
            .as_deref()
            .map(str::trim_end)
            .filter(|t| !t.is_empty())
        {
            text.push_str("\n\n## tasks\n");
            text.push_str(tasks);
        }
        self.events.emit(AgentEvent::PromptAssembled {
            bytes: text.len(),
            cache: rendered.cache,
        });
        Ok(text)
    }
}

#[async_trait]
impl SystemPromptProvider for DynamicPromptProvider {
    async fn system_prompt(&self) -> Result<String, PromptError> {
        self.render()
    }

    async fn system_prompt_without_tools(&self) -> Result<String, PromptError> {
        self.render_without_tools()
    }
}
