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
    List(PackedNames),
    Registry(RegistryStamp),
}

/// A copy of a tool list in two allocations instead of one per name: the names end to end,
/// and where each one ends.
#[derive(Debug, PartialEq, Eq)]
struct PackedNames {
    text: String,
    ends: Vec<usize>,
}

impl PackedNames {
    fn new(names: &[String]) -> Self {
        let mut text = String::with_capacity(names.iter().map(String::len).sum());
        let ends = names
            .iter()
            .map(|name| {
                text.push_str(name);
                text.len()
            })
            .collect();
        Self { text, ends }
    }

    /// Whether `names` is the same list, name by name (so `["ab"]` is not `["a", "b"]`).
    fn equals(&self, names: &[String]) -> bool {
        self.ends.len() == names.len()
            && self
                .ends
                .iter()
                .scan(0, |start, &end| {
                    let name = self.text.get(*start..end);
                    *start = end;
                    Some(name)
                })
                .zip(names)
                .all(|(cached, name)| cached == Some(name.as_str()))
    }
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
            (ToolsKey::List(cached), ToolNames::List(names)) => cached.equals(names),
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
        let key = |tools| Key {
            identity: canonical.identity.to_string(),
            context: canonical.context.to_string(),
            tools,
            workspace: canonical.workspace.to_string(),
            sections: present_sections(canonical.sections)
                .map(|(heading, body)| (heading.to_string(), body.to_string()))
                .collect(),
        };
        // A registry's names and the stamp stored with them are read under one registry lock,
        // so a tool registered meanwhile changes the stamp and misses on the next render.
        let (key, text) = match canonical.tools {
            ToolNames::List(names) => {
                let key = key(ToolsKey::List(PackedNames::new(names)));
                let text = assemble(&key, names);
                (key, text)
            }
            ToolNames::Registry(registry) => registry.with_stamped_names(|stamp, names| {
                let key = key(ToolsKey::Registry(stamp));
                let text = assemble(&key, names);
                (key, text)
            }),
        };
        tracing::info!(target: "prompt", "[assembled] sections: {}", Headings(&key));
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
/// The optional sections present in `key`, as (heading, body), in the order they are rendered.
fn optional_sections(key: &Key) -> impl Iterator<Item = (&str, &str)> + Clone {
    key.sections
        .iter()
        .map(|(heading, body)| (heading.as_str(), body.as_str()))
}

/// The headings of the sections `key` renders, comma-separated: written only when the
/// `[assembled]` line is logged, so a miss with logging off builds nothing for it.
struct Headings<'a>(&'a Key);

impl std::fmt::Display for Headings<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("identity, tools, workspace")?;
        optional_sections(self.0).try_for_each(|(heading, _)| write!(f, ", {heading}"))
    }
}

/// The prompt, written once into a buffer sized to it exactly: the sections joined by a blank
/// line, the tools one `- name` line each. A miss used to build every tool line, every section
/// and their joins as strings of their own (about 60 ns per tool, mostly allocation).
fn assemble<N: AsRef<str>>(key: &Key, names: &[N]) -> String {
    const NONE: &str = "(none)";
    let tools_len = if names.is_empty() {
        NONE.len()
    } else {
        // "- name" per tool, a newline between two.
        names.iter().map(|n| 2 + n.as_ref().len()).sum::<usize>() + names.len() - 1
    };
    let optional = optional_sections(key);
    let len = "## identity\n".len()
        + key.identity.len()
        + "\ncontext: ".len()
        + key.context.len()
        + "\n\n## tools\n".len()
        + tools_len
        + "\n\n## workspace\n".len()
        + key.workspace.len()
        + optional
            .clone()
            .map(|(heading, body)| "\n\n## ".len() + heading.len() + 1 + body.len())
            .sum::<usize>();

    let mut text = String::with_capacity(len);
    text.push_str("## identity\n");
    text.push_str(&key.identity);
    text.push_str("\ncontext: ");
    text.push_str(&key.context);
    text.push_str("\n\n## tools\n");
    if names.is_empty() {
        text.push_str(NONE);
    }
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str("- ");
        text.push_str(name.as_ref());
    }
    text.push_str("\n\n## workspace\n");
    text.push_str(&key.workspace);
    for (heading, body) in optional {
        text.push_str("\n\n## ");
        text.push_str(heading);
        text.push('\n');
        text.push_str(body);
    }
    debug_assert_eq!(text.len(), len, "the prompt's size was computed wrong");
    text
}
