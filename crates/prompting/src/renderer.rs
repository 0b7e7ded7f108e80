//! `DynamicPromptRenderer`: three sections that are always there, then a list of optional
//! ones, with a one-entry cache.
//!
//! ```text
//! ## identity\n<identity>\ncontext: <stable JSON>
//! ## tools\n- <name>…            ("(none)" when no tool is registered)
//! ## workspace\n<absolute path>
//! ## <heading>\n<body>            (each optional section with a non-blank body, in list order:
//!                                  the harness gives skills, memory, tasks)
//! ```
//!
//! Optional sections are only ever appended, so the text before them — and the provider's
//! prompt cache for it — does not move when they come and go.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use agent_core::{CacheUse, RegistryStamp, ToolRegistry};
use serde::Serialize;

use crate::context::{ContextError, PromptContext};

/// Why a prompt could not be rendered. Nothing is cached or counted when this is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// The identity text is blank.
    #[error("the identity is empty")]
    EmptyIdentity,
    /// The workspace path is blank.
    #[error("the workspace path is empty")]
    EmptyWorkspace,
    /// The context error is the `source`, not repeated here, so a `{:#}` chain reads once.
    #[error("invalid prompt context")]
    Context(#[from] ContextError),
}

/// One optional section as it is rendered: `## {heading}\n{body}`. A blank body leaves the
/// section out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SectionText<'a> {
    /// The heading after `## ` (`skills`, `memory`, `tasks`).
    pub heading: &'a str,
    /// The section's text; trailing whitespace is trimmed.
    pub body: &'a str,
}

/// Everything a prompt is rendered from. The context may be any `Serialize` value (including
/// a `serde_json::Value` or a [`PromptContext`]); it is checked on every render.
#[derive(Debug, Clone, Copy)]
pub struct PromptInputs<'a, C: Serialize + ?Sized> {
    /// Who the agent is: the first lines of `## identity`.
    pub identity: &'a str,
    /// The `context:` line of `## identity`.
    pub context: &'a C,
    /// The tool names of `## tools`.
    pub tools: &'a [String],
    /// The absolute path of `## workspace`.
    pub workspace: &'a str,
    /// The optional sections after `## workspace`, in the order they are rendered.
    pub sections: &'a [SectionText<'a>],
}

/// The tool list a prompt is rendered from.
#[derive(Debug, Clone, Copy)]
pub enum ToolNames<'a> {
    /// Compared name by name with the cached list (no copy; O(tools)).
    List(&'a [String]),
    /// A live registry, compared by its [`RegistryStamp`] (O(1)); its names are copied only
    /// when the prompt is assembled.
    Registry(&'a ToolRegistry),
}

/// The inputs with the context already validated: what a provider that checked its context
/// once, when it was built, renders from on every request.
#[derive(Debug, Clone, Copy)]
pub struct CheckedInputs<'a> {
    /// Who the agent is: the first lines of `## identity`.
    pub identity: &'a str,
    /// The `context:` line of `## identity`, already validated.
    pub context: &'a PromptContext,
    /// The tool names of `## tools`.
    pub tools: ToolNames<'a>,
    /// The absolute path of `## workspace`.
    pub workspace: &'a str,
    /// The optional sections after `## workspace`, in the order they are rendered.
    pub sections: &'a [SectionText<'a>],
}

/// A rendered prompt, shared with the cache, and whether the cache served it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The prompt.
    pub text: Arc<str>,
    /// Whether the renderer's cache served it.
    pub cache: CacheUse,
}

/// How the cached tool list is identified.
#[derive(Debug, PartialEq, Eq)]
enum ToolsKey {
    List(Vec<String>),
    Registry(RegistryStamp),
}

/// The cache key: every input in canonical form. Compared whole (not hashed), so a key
/// collision cannot serve one prompt for another; a registry's stamp stands for its names
/// because equal stamps mean equal names.
#[derive(Debug)]
struct Key {
    identity: String,
    context: String,
    tools: ToolsKey,
    workspace: String,
    /// The present optional sections (heading, trimmed body), in order.
    sections: Vec<(String, String)>,
}

/// The inputs after trimming, borrowed: what a hit is compared on, so a hit allocates nothing.
struct Canonical<'a> {
    identity: &'a str,
    context: &'a str,
    tools: ToolNames<'a>,
    workspace: &'a str,
    sections: &'a [SectionText<'a>],
}

impl Key {
    fn matches(&self, inputs: &Canonical<'_>) -> bool {
        let tools = match (&self.tools, inputs.tools) {
            (ToolsKey::List(cached), ToolNames::List(names)) => cached.as_slice() == names,
            (ToolsKey::Registry(cached), ToolNames::Registry(registry)) => {
                *cached == registry.stamp()
            }
            _ => false,
        };
        tools
            && self.identity == inputs.identity
            && self.context == inputs.context
            && self.workspace == inputs.workspace
            && self
                .sections
                .iter()
                .map(|(heading, body)| (heading.as_str(), body.as_str()))
                .eq(present_sections(inputs.sections))
    }
}

#[derive(Debug)]
struct Entry {
    key: Key,
    text: Arc<str>,
}

/// Renders system prompts. The cache lives in the instance: two agents never share one.
#[derive(Debug, Default)]
pub struct DynamicPromptRenderer {
    cache: Mutex<Option<Entry>>,
    hits: AtomicUsize,
}

/// The sections with a non-blank body, as (heading, trimmed body): what is rendered and keyed.
fn present_sections<'a>(
    sections: &'a [SectionText<'a>],
) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
    sections.iter().filter_map(|s| {
        let body = s.body.trim_end();
        (!body.is_empty()).then_some((s.heading, body))
    })
}

fn required(text: &str, empty: RenderError) -> Result<&str, RenderError> {
    let text = text.trim();
    if text.is_empty() {
        Err(empty)
    } else {
        Ok(text)
    }
}

impl DynamicPromptRenderer {
    /// A renderer with an empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many renders were served from the cache.
    pub fn cache_hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// Renders from any `Serialize` context, checking it first (which costs a serialization
    /// per call; a caller that renders repeatedly validates once and uses
    /// [`Self::render_checked`]).
    pub fn render<C: Serialize + ?Sized>(
        &self,
        inputs: &PromptInputs<'_, C>,
    ) -> Result<String, RenderError> {
        // Validate everything first: a rejected call must leave the cache and counter as they
        // were. Identity and workspace are checked before the context, as they always were.
        required(inputs.identity, RenderError::EmptyIdentity)?;
        required(inputs.workspace, RenderError::EmptyWorkspace)?;
        let context = PromptContext::from_serialize(inputs.context)?;
        let rendered = self.render_checked(&CheckedInputs {
            identity: inputs.identity,
            context: &context,
            tools: ToolNames::List(inputs.tools),
            workspace: inputs.workspace,
            sections: inputs.sections,
        })?;
        Ok(rendered.text.to_string())
    }

    /// Renders from a validated context. A hit compares the borrowed inputs with the cached
    /// key (a registry by its stamp) and hands out the cached text: nothing is allocated.
    pub fn render_checked(&self, inputs: &CheckedInputs<'_>) -> Result<Rendered, RenderError> {
        let canonical = Canonical {
            identity: required(inputs.identity, RenderError::EmptyIdentity)?,
            context: inputs.context.stable_json(),
            tools: inputs.tools,
            workspace: required(inputs.workspace, RenderError::EmptyWorkspace)?,
            sections: inputs.sections,
        };

        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = cache.as_ref()
            && entry.key.matches(&canonical)
        {
            self.hits.fetch_add(1, Ordering::SeqCst);
            tracing::info!(target: "prompt", "[cache hit]");
            return Ok(Rendered {
                text: entry.text.clone(),
                cache: CacheUse::Hit,
            });
        }
        // The names and the stamp stored with them are read under one registry lock, so a
        // tool registered meanwhile changes the stamp and misses on the next render.
        let registry_names;
        let (tools, names): (ToolsKey, &[String]) = match canonical.tools {
            ToolNames::List(names) => (ToolsKey::List(names.to_vec()), names),
            ToolNames::Registry(registry) => {
                let (stamp, names) = registry.stamped_names();
                registry_names = names;
                (ToolsKey::Registry(stamp), &registry_names)
            }
        };
        let key = Key {
            identity: canonical.identity.to_string(),
            context: canonical.context.to_string(),
            tools,
            workspace: canonical.workspace.to_string(),
            sections: present_sections(canonical.sections)
                .map(|(heading, body)| (heading.to_string(), body.to_string()))
                .collect(),
        };
        let (text, sections) = assemble(&key, names);
        tracing::info!(target: "prompt", "[assembled] sections: {}", sections.join(", "));
        let text: Arc<str> = text.into();
        *cache = Some(Entry {
            key,
            text: text.clone(),
        });
        Ok(Rendered {
            text,
            cache: CacheUse::Miss,
        })
    }
}

fn assemble<'k>(key: &'k Key, names: &[String]) -> (String, Vec<&'k str>) {
    let tools = if names.is_empty() {
        "(none)".to_string()
    } else {
        names
            .iter()
            .map(|t| format!("- {t}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut sections = vec![
        (
            "identity",
            format!("## identity\n{}\ncontext: {}", key.identity, key.context),
        ),
        ("tools", format!("## tools\n{tools}")),
        ("workspace", format!("## workspace\n{}", key.workspace)),
    ];
    for (heading, body) in &key.sections {
        sections.push((heading.as_str(), format!("## {heading}\n{body}")));
    }
    let names = sections.iter().map(|(name, _)| *name).collect();
    let text = sections
        .into_iter()
        .map(|(_, s)| s)
        .collect::<Vec<_>>()
        .join("\n\n");
    (text, names)
}
