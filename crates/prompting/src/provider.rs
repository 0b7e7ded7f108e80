//! `DynamicPromptProvider`: the zero-argument provider the runner asks before every request.
//!
//! Bound at build time to the renderer and the live objects. What it reads when:
//!
//! | input | read | a change shows up |
//! |---|---|---|
//! | identity, context | bound at build | never (rebuild) |
//! | tool names | live registry, every render | in the next request |
//! | workspace | bound at build | never (rebuild) |
//! | a [`SectionBody::Fixed`] section (the skill catalog) | bound at build | after a rebuild |
//! | a [`SectionBody::Live`] section (selected memory, open tasks) | its source, every render | in the next request |
//!
//! The optional sections are a list, each with its own [`SectionOrder`]: this crate knows no
//! feature by name. The composition root adds the skill catalog, the memory block and the open
//! tasks (chapter 12) as three sections, in that order, so each only ever appends to the text
//! before it.

use std::sync::Arc;

use agent_core::{AgentEvent, Events, PromptError, SystemPromptProvider, ToolRegistry};
use async_trait::async_trait;

use crate::context::PromptContext;
use crate::renderer::{CheckedInputs, DynamicPromptRenderer, SectionText, ToolNames};

/// Where an optional section goes among the others: lower first; sections of equal order keep
/// the order they were added in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SectionOrder(u16);

impl SectionOrder {
    /// The order `rank`.
    pub const fn new(rank: u16) -> Self {
        Self(rank)
    }
}

/// Where a live section's text comes from: asked on every render. This crate does not know
/// how memories or tasks are stored; the composition root hands it a source (a closure is
/// one).
pub trait SectionSource: Send + Sync {
    /// The section's text now, or `None` to leave the section out of this render.
    fn text(&self) -> Option<String>;
}

impl<F> SectionSource for F
where
    F: Fn() -> Option<String> + Send + Sync,
{
    fn text(&self) -> Option<String> {
        self()
    }
}

/// A section's text: fixed when the provider is built, or read before every render.
#[derive(Clone)]
pub enum SectionBody {
    /// Bound at build time (the skill catalog as scanned).
    Fixed(String),
    /// Read from its source on every render (the selected memories, the open tasks).
    Live(Arc<dyn SectionSource>),
}

impl std::fmt::Debug for SectionBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Fixed(text) => f.debug_tuple("Fixed").field(text).finish(),
            Self::Live(_) => f.write_str("Live(..)"),
        }
    }
}

/// One optional section of the prompt, rendered after `## workspace` as `## {heading}` and its
/// text; a blank or absent text leaves it out.
#[derive(Debug, Clone)]
pub struct PromptSection {
    heading: String,
    order: SectionOrder,
    body: SectionBody,
}

impl PromptSection {
    /// A section titled `heading` at `order` whose text is `body`.
    pub fn new(heading: impl Into<String>, order: SectionOrder, body: SectionBody) -> Self {
        Self {
            heading: heading.into(),
            order,
            body,
        }
    }

    /// The heading after `## `.
    pub fn heading(&self) -> &str {
        &self.heading
    }

    /// Where the section goes among the others.
    pub fn order(&self) -> SectionOrder {
        self.order
    }

    /// The section's text for this render, or `None` when a live source has none.
    fn text(&self) -> Option<std::borrow::Cow<'_, str>> {
        match &self.body {
            SectionBody::Fixed(text) => Some(text.as_str().into()),
            SectionBody::Live(source) => source.text().map(Into::into),
        }
    }
}

/// The system prompt of chapter 10 on, rendered from the live state before every request.
///
/// ```
/// use std::sync::Arc;
///
/// use agent_core::ToolRegistry;
/// use agent_prompting::{
///     DynamicPromptProvider, DynamicPromptRenderer, PromptContext, PromptSection, SectionBody,
///     SectionOrder,
/// };
///
/// let open_tasks = || Some("- #1 [pending] Write the parser (ready)".to_string());
/// let provider = DynamicPromptProvider::new(
///     Arc::new(DynamicPromptRenderer::new()),
///     "Be brief.",
///     PromptContext::from_value(serde_json::json!({"chapter": 12}))?,
///     Arc::new(ToolRegistry::builder().build()?),
///     "/work/project",
/// )
/// // Added in any order: each section's order places it.
/// .section(PromptSection::new("tasks", SectionOrder::new(2), SectionBody::Live(Arc::new(open_tasks))))
/// .section(PromptSection::new("skills", SectionOrder::new(0), SectionBody::Fixed("- **lint**: Run clippy".into())));
/// assert_eq!(
///     provider.render()?,
///     "## identity\nBe brief.\ncontext: {\"chapter\":12}\n\n## tools\n(none)\n\n## workspace\n/work/project\n\n## skills\n- **lint**: Run clippy\n\n## tasks\n- #1 [pending] Write the parser (ready)"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct DynamicPromptProvider {
    renderer: Arc<DynamicPromptRenderer>,
    identity: String,
    context: PromptContext,
    tools: Arc<ToolRegistry>,
    workspace: String,
    /// Sorted by order; equal orders in the order added.
    sections: Vec<PromptSection>,
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
    /// A provider for `identity`, `context` and `workspace` (bound now) and the live registry
    /// `tools`, with no optional section yet.
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
            sections: Vec::new(),
            events: Events::default(),
        }
    }

    /// Adds `section`, placed by its order after every section of lower or equal order.
    pub fn section(mut self, section: PromptSection) -> Self {
        let at = self
            .sections
            .partition_point(|s| s.order() <= section.order());
        self.sections.insert(at, section);
        self
    }

    /// Adds every section of `sections` (see [`section`](Self::section)).
    pub fn sections(self, sections: impl IntoIterator<Item = PromptSection>) -> Self {
        sections.into_iter().fold(self, Self::section)
    }

    /// Where each rendered prompt is told, as [`AgentEvent::PromptAssembled`].
    pub fn events(mut self, events: Events) -> Self {
        self.events = events;
        self
    }

    /// The renderer, for its cache counter.
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
        let texts: Vec<_> = self.sections.iter().map(PromptSection::text).collect();
        let sections: Vec<SectionText<'_>> = self
            .sections
            .iter()
            .zip(&texts)
            .filter_map(|(section, text)| {
                Some(SectionText {
                    heading: section.heading(),
                    body: text.as_deref()?,
                })
            })
            .collect();
        let inputs = CheckedInputs {
            identity: &self.identity,
            context: &self.context,
            tools,
            workspace: &self.workspace,
            sections: &sections,
        };
        let rendered = self
            .renderer
            .render_checked(&inputs)
            .map_err(|e| PromptError::new("cannot render the system prompt", e))?;
        self.events.emit(AgentEvent::PromptAssembled {
            bytes: rendered.text.len(),
            cache: rendered.cache,
        });
        Ok(rendered.text.to_string())
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
