//! `DynamicPromptRenderer`: five sections in a fixed order, with a one-entry cache.
//!
//! ```text
//! ## identity\n<identity>\ncontext: <stable JSON>
//! ## tools\n- <name>…            ("(none)" when no tool is registered)
//! ## workspace\n<absolute path>
//! ## skills\n<catalog>            (only when there is a skill)
//! ## memory\n<relevant_memories>  (only when something is selected)
//! ```
//!
//! Optional sections are only ever appended, so the text before them — and the provider's
//! prompt cache for it — does not move when they come and go.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use serde::Serialize;

use crate::context::{ContextError, PromptContext};

/// Why a prompt could not be rendered. Nothing is cached or counted when this is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    #[error("the identity is empty")]
    EmptyIdentity,
    #[error("the workspace path is empty")]
    EmptyWorkspace,
    /// The context error is the `source`, not repeated here, so a `{:#}` chain reads once.
    #[error("invalid prompt context")]
    Context(#[from] ContextError),
}

/// Everything a prompt is rendered from. The context may be any `Serialize` value (including
/// a `serde_json::Value` or a [`PromptContext`]); it is checked on every render.
#[derive(Debug, Clone, Copy)]
pub struct PromptInputs<'a, C: Serialize + ?Sized> {
    pub identity: &'a str,
    pub context: &'a C,
    pub tools: &'a [String],
    pub workspace: &'a str,
    /// The skill catalog; `None` or empty omits the section.
    pub skills: Option<&'a str>,
    /// The `<relevant_memories>` block; `None` or empty omits the section.
    pub memory: Option<&'a str>,
}

/// The cache key: all six inputs in canonical form. Compared whole (not hashed), so a key
/// collision cannot serve one prompt for another.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    identity: String,
    context: String,
    tools: Vec<String>,
    workspace: String,
    skills: Option<String>,
    memory: Option<String>,
}

/// Renders system prompts. The cache lives in the instance: two agents never share one.
#[derive(Debug, Default)]
pub struct DynamicPromptRenderer {
    cache: Mutex<Option<(Key, String)>>,
    hits: AtomicUsize,
}

fn non_empty(text: Option<&str>) -> Option<String> {
    text.map(str::trim_end)
        .filter(|t| !t.trim().is_empty())
        .map(str::to_string)
}

impl DynamicPromptRenderer {
    pub fn new() -> Self {
        Self::default()
    }

    /// How many renders were served from the cache.
    pub fn cache_hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    pub fn render<C: Serialize + ?Sized>(
        &self,
        inputs: &PromptInputs<'_, C>,
    ) -> Result<String, RenderError> {
        // Validate everything first: a rejected call must leave the cache and counter as they were.
        let identity = inputs.identity.trim();
        if identity.is_empty() {
            return Err(RenderError::EmptyIdentity);
        }
        let workspace = inputs.workspace.trim();
        if workspace.is_empty() {
            return Err(RenderError::EmptyWorkspace);
        }
        let context = PromptContext::from_serialize(inputs.context)?;
        let key = Key {
            identity: identity.to_string(),
            context: context.stable_json().to_string(),
            tools: inputs.tools.to_vec(),
            workspace: workspace.to_string(),
            skills: non_empty(inputs.skills),
            memory: non_empty(inputs.memory),
        };

        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((cached_key, text)) = cache.as_ref()
            && *cached_key == key
        {
            self.hits.fetch_add(1, Ordering::SeqCst);
            tracing::info!(target: "prompt", "[cache hit]");
            return Ok(text.clone());
        }
        let (text, names) = assemble(&key);
        tracing::info!(target: "prompt", "[assembled] sections: {}", names.join(", "));
        *cache = Some((key, text.clone()));
        Ok(text)
    }
}

fn assemble(key: &Key) -> (String, Vec<&'static str>) {
    let tools = if key.tools.is_empty() {
        "(none)".to_string()
    } else {
        key.tools
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
    if let Some(skills) = &key.skills {
        sections.push(("skills", format!("## skills\n{skills}")));
    }
    if let Some(memory) = &key.memory {
        sections.push(("memory", format!("## memory\n{memory}")));
    }
    let names = sections.iter().map(|(name, _)| *name).collect();
    let text = sections
        .into_iter()
        .map(|(_, s)| s)
        .collect::<Vec<_>>()
        .join("\n\n");
    (text, names)
}
