//! The tool registry: specs and handlers registered apart, checked once, prepared per call.
//!
//! The registry is *live*: it sits behind an `Arc` and a tool can be registered after the
//! agent is built (chapter 10 shows that the next request's prompt picks it up), or removed
//! again (chapter 19: an MCP server disconnected or gone). Reads take a short `std` lock and
//! never hold it across an `.await`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use serde_json::Value;

use crate::message::ToolCall;
use crate::names::NameRule;
use crate::schema;
use crate::schema::{SchemaError, SchemaMode};
use crate::tool::{FailureCode, PreparedCall, ToolFailure, ToolHandler, ToolOutput, ToolSpec};

/// A registration that cannot be accepted. These are programming errors in the composition
/// root, reported when the agent is built rather than when the model first calls the tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// The name breaks the tool-name rule.
    #[error("tool name `{0}` is invalid: use 1-64 characters from A-Z, a-z, 0-9 and _")]
    InvalidName(String),
    /// Two specs share a name.
    #[error("tool `{0}` is registered twice")]
    Duplicate(String),
    /// A spec without a handler.
    #[error("tool `{0}` has a spec but no handler")]
    MissingHandler(String),
    /// A handler without a spec.
    #[error("a handler is registered for `{0}` but no spec names it")]
    HandlerWithoutSpec(String),
    /// The schema cannot be taken in the mode it was registered in.
    #[error("tool `{name}` has an unusable schema: {reason}")]
    InvalidSchema {
        /// The tool.
        name: String,
        /// Why.
        reason: SchemaError,
    },
}

#[derive(Clone)]
struct Entry {
    spec: ToolSpec,
    handler: Arc<dyn ToolHandler>,
}

/// Collects specs and handlers; [`ToolRegistryBuilder::build`] checks that they pair up.
#[derive(Default)]
pub struct ToolRegistryBuilder {
    specs: Vec<(ToolSpec, SchemaMode)>,
    handlers: BTreeMap<String, Arc<dyn ToolHandler>>,
}

impl std::fmt::Debug for ToolRegistryBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistryBuilder")
            .field(
                "specs",
                &self.specs.iter().map(|(s, _)| &s.name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl ToolRegistryBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the spec the model will see. Order of `spec` calls is the order tools are sent in.
    pub fn spec(mut self, spec: ToolSpec) -> Self {
        self.specs.push((spec, SchemaMode::Strict));
        self
    }

    /// Adds the handler that runs calls to `name`.
    pub fn handler(mut self, name: impl Into<String>, handler: Arc<dyn ToolHandler>) -> Self {
        self.handlers.insert(name.into(), handler);
        self
    }

    /// Spec and handler in one step, for the common case of one handler per tool.
    pub fn tool(self, spec: ToolSpec, handler: Arc<dyn ToolHandler>) -> Self {
        let name = spec.name.clone();
        self.spec(spec).handler(name, handler)
    }

    /// A tool whose schema was written elsewhere (an MCP server's), taken in `mode`: with
    /// [`SchemaMode::Sanitize`] the model is sent the reduced schema.
    pub fn foreign_tool(
        mut self,
        spec: ToolSpec,
        handler: Arc<dyn ToolHandler>,
        mode: SchemaMode,
    ) -> Self {
        let name = spec.name.clone();
        self.specs.push((spec, mode));
        self.handler(name, handler)
    }

    /// Checks every registration (names, schemas, spec and handler paired) and builds.
    pub fn build(mut self) -> Result<ToolRegistry, RegistryError> {
        let mut entries: Vec<Entry> = Vec::with_capacity(self.specs.len());
        for (spec, mode) in self.specs {
            let handler = self
                .handlers
                .remove(&spec.name)
                .ok_or_else(|| RegistryError::MissingHandler(spec.name.clone()))?;
            let spec = check_entry(&entries, spec, mode)?;
            entries.push(Entry { spec, handler });
        }
        if let Some(name) = self.handlers.into_keys().next() {
            return Err(RegistryError::HandlerWithoutSpec(name));
        }
        Ok(ToolRegistry::with_entries(entries))
    }
}

/// Checks a registration and returns the spec to keep (its schema adopted in `mode`).
fn check_entry(
    existing: &[Entry],
    mut spec: ToolSpec,
    mode: SchemaMode,
) -> Result<ToolSpec, RegistryError> {
    if !NameRule::Tool.accepts(&spec.name) {
        return Err(RegistryError::InvalidName(spec.name.clone()));
    }
    if existing.iter().any(|e| e.spec.name == spec.name) {
        return Err(RegistryError::Duplicate(spec.name.clone()));
    }
    spec.parameters =
        schema::adopt(&spec.parameters, mode).map_err(|reason| RegistryError::InvalidSchema {
            name: spec.name.clone(),
            reason,
        })?;
    Ok(spec)
}

/// The entries and how many times they changed.
struct Entries {
    list: Vec<Entry>,
    /// Counts every mutation (a registration or a removal), so a stamp names one state even
    /// when a removal and a registration leave as many entries as before.
    generation: u64,
}

/// The tools an agent can call, in registration order.
pub struct ToolRegistry {
    entries: RwLock<Entries>,
    /// Unique per registry in this process, so a [`RegistryStamp`] of one registry never
    /// equals one of another (not even one later allocated at the same address).
    id: u64,
}

/// Names one state of one registry's tool list: two equal stamps mean the same registry with
/// the same names in the same order, so a cache keyed on the names can compare this instead
/// (O(1), nothing copied).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RegistryStamp {
    registry: u64,
    /// How many mutations the list had seen: every `register` and `remove` adds one.
    generation: u64,
}

static NEXT_REGISTRY_ID: AtomicU64 = AtomicU64::new(0);

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .finish()
    }
}

impl ToolRegistry {
    /// A builder for a new registry.
    pub fn builder() -> ToolRegistryBuilder {
        ToolRegistryBuilder::new()
    }

    /// An empty registry (chapter 10's prompt then says `(none)`).
    pub fn empty() -> Self {
        Self::with_entries(Vec::new())
    }

    fn with_entries(entries: Vec<Entry>) -> Self {
        Self {
            entries: RwLock::new(Entries {
                list: entries,
                generation: 0,
            }),
            id: NEXT_REGISTRY_ID.fetch_add(1, Ordering::Relaxed),
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Entries> {
        // A panic while holding this lock cannot leave the Vec half-written (a push and a
        // `retain` of entries whose drop cannot panic are the only mutations), so a poisoned
        // lock is still safe to read.
        self.entries.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers one more tool on a live registry. It appears in the next request.
    pub fn register(
        &self,
        spec: ToolSpec,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<(), RegistryError> {
        self.register_in(spec, handler, SchemaMode::Strict)
    }

    /// [`Self::register`] for a tool whose schema was written elsewhere, taken in `mode`
    /// (an MCP server connected after the agent was built).
    pub fn register_in(
        &self,
        spec: ToolSpec,
        handler: Arc<dyn ToolHandler>,
        mode: SchemaMode,
    ) -> Result<(), RegistryError> {
        let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
        let spec = check_entry(&entries.list, spec, mode)?;
        entries.list.push(Entry { spec, handler });
        entries.generation += 1;
        Ok(())
    }

    /// Removes the tools named in `names` from a live registry (an MCP server disconnected
    /// or gone, chapter 19); the others keep their order. They are gone from the next
    /// request; a call already prepared still runs its handler, which must then fail by
    /// itself. Returns how many were removed.
    pub fn remove(&self, names: &[String]) -> usize {
        let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
        let before = entries.list.len();
        entries.list.retain(|e| !names.contains(&e.spec.name));
        let removed = before - entries.list.len();
        if removed > 0 {
            entries.generation += 1;
        }
        removed
    }

    /// The specs, in registration order (what a request offers).
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.read().list.iter().map(|e| e.spec.clone()).collect()
    }

    /// The names, in registration order.
    pub fn names(&self) -> Vec<String> {
        self.read()
            .list
            .iter()
            .map(|e| e.spec.name.clone())
            .collect()
    }

    /// The current state of the tool list, without copying it.
    pub fn stamp(&self) -> RegistryStamp {
        self.stamp_of(&self.read())
    }

    /// The names and the stamp they belong to, read under one lock so they always agree.
    pub fn stamped_names(&self) -> (RegistryStamp, Vec<String>) {
        let entries = self.read();
        let names = entries.list.iter().map(|e| e.spec.name.clone()).collect();
        (self.stamp_of(&entries), names)
    }

    /// The stamp and the names, borrowed under one read lock and handed to `f`: no name is
    /// copied (a prompt renderer's miss assembles straight from them; the lock is held while
    /// `f` runs, so `f` must not register a tool).
    pub fn with_stamped_names<R>(&self, f: impl FnOnce(RegistryStamp, &[&str]) -> R) -> R {
        let entries = self.read();
        let names: Vec<&str> = entries.list.iter().map(|e| e.spec.name.as_str()).collect();
        f(self.stamp_of(&entries), &names)
    }

    fn stamp_of(&self, entries: &Entries) -> RegistryStamp {
        RegistryStamp {
            registry: self.id,
            generation: entries.generation,
        }
    }

    /// The spec of `name`, if registered.
    pub fn spec(&self, name: &str) -> Option<ToolSpec> {
        self.read()
            .list
            .iter()
            .find(|e| e.spec.name == name)
            .map(|e| e.spec.clone())
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.read().list.is_empty()
    }

    /// Turns a raw call from the model into a [`PreparedCall`], or the failure to report.
    pub fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolFailure> {
        let entry = self.entry(&call.name).ok_or_else(|| {
            ToolFailure::new(
                FailureCode::UnknownTool,
                format!(
                    "no tool named `{}`; available: {}",
                    call.name,
                    self.names().join(", ")
                ),
            )
        })?;
        // Some servers send "" for a call without arguments; treat it as `{}`.
        let raw = &call.arguments;
        let text = if raw.trim().is_empty() { "{}" } else { raw };
        let arguments: Value = serde_json::from_str(text).map_err(|err| {
            ToolFailure::new(
                FailureCode::InvalidJson,
                format!("arguments are not valid JSON ({err})"),
            )
        })?;
        validate(&entry, &call.id, arguments)
    }

    /// A copy of the entry for `name`, taken out of the lock.
    fn entry(&self, name: &str) -> Option<Entry> {
        self.read()
            .list
            .iter()
            .find(|e| e.spec.name == name)
            .cloned()
    }

    /// Validates already-parsed arguments (used again after a hook rewrites the input).
    pub fn revalidate(&self, call: &PreparedCall) -> Result<PreparedCall, ToolFailure> {
        let entry = self.entry(&call.name).ok_or_else(|| {
            ToolFailure::new(
                FailureCode::UnknownTool,
                format!("no tool named `{}`", call.name),
            )
        })?;
        validate(&entry, &call.call_id, call.arguments.clone())
    }

    /// Runs a prepared call and returns the tool-result text the model reads (the output's
    /// [`ToolOutput::into_text`]).
    pub async fn execute(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        self.execute_output(call).await.map(ToolOutput::into_text)
    }

    /// Runs a prepared call ([`ToolHandler::call`]) and returns its output as parts. The
    /// handler is cloned out of the lock first, so a slow tool never blocks registration.
    pub async fn execute_output(&self, call: &PreparedCall) -> Result<ToolOutput, ToolFailure> {
        let handler = self.entry(&call.name).map(|e| e.handler).ok_or_else(|| {
            ToolFailure::new(
                FailureCode::UnknownTool,
                format!("no tool named `{}`", call.name),
            )
        })?;
        handler.call(call).await
    }
}

/// Checks `arguments` against the entry's schema and lets its handler describe the call.
fn validate(entry: &Entry, call_id: &str, arguments: Value) -> Result<PreparedCall, ToolFailure> {
    schema::validate(&entry.spec.parameters, &arguments)
        .map_err(|reason| ToolFailure::new(FailureCode::InvalidArguments, reason.to_string()))?;
    Ok(PreparedCall {
        call_id: call_id.to_string(),
        name: entry.spec.name.clone(),
        summary: entry.handler.describe(&arguments),
        arguments,
        effect: entry.spec.effect,
    })
}
