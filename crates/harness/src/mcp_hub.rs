//! Chapter 19: the lead's MCP servers ([`McpHub`]) and its two tools, `connect_mcp` and
//! `disconnect_mcp`.
//!
//! A server's tools join the live registry only between two model requests: the tools
//! connect and disconnect servers, and [`McpHub::sync`] (a history processor, run before
//! every request) makes the registry match what is connected. A call in the middle of a
//! batch therefore never sees a tool the model was not offered, and a server that crashed is
//! withdrawn before the next request, its child already reaped by `agent-mcp`.
//!
//! Only a [`TrustedConfig`] starts anything: the front end admits `.mcp.json` through the
//! trust store first. The session closes every server when it ends ([`McpHub::close`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use agent_core::tool::{CallSummary, FailureCode, PreparedCall, ToolFailure, ToolHandler};
use agent_core::{HistoryProcessor, Message, ProcessError, ToolRegistry};
use agent_mcp::{ConnectError, ConnectOptions, McpConnection, State, TrustedConfig};
use agent_sandbox::Sandbox;
use agent_tools::Workspace;
use async_trait::async_trait;
use serde_json::Value;

mod tools;

pub(crate) use tools::register;
pub use tools::specs;

/// Connects a server of the trusted `.mcp.json`.
pub const CONNECT_MCP: &str = "connect_mcp";
/// Disconnects a connected server.
pub const DISCONNECT_MCP: &str = "disconnect_mcp";

/// One connected server and the number that tells it apart from an earlier connection of
/// the same alias.
struct Connected {
    id: u64,
    connection: McpConnection,
}

/// The servers the lead may use: the trusted config (if any), those connected now, and
/// which tools of which connection are in the registry.
pub struct McpHub {
    workspace: Workspace,
    config: Option<TrustedConfig>,
    sandbox: Option<Sandbox>,
    /// Held across a connect or a sync, so the two never interleave.
    connected: tokio::sync::Mutex<BTreeMap<String, Connected>>,
    /// Per alias: the connection whose tools are registered and their names. Only
    /// [`Self::sync`] and [`Self::close`] change the registry.
    registered: Mutex<BTreeMap<String, (u64, Vec<String>)>>,
    next_id: std::sync::atomic::AtomicU64,
    /// Aliases a call found gone (`mcp_connection_lost`): the next sync withdraws them even
    /// if the connection's own watcher has not noticed yet, so the request after the failed
    /// call never offers their tools.
    lost: Arc<Mutex<BTreeSet<(String, u64)>>>,
    /// Weak: the registry holds the tools, which hold the hub.
    registry: OnceLock<Weak<ToolRegistry>>,
}

impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHub")
            .field("workspace", &self.workspace)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Why a server of the config did not start with the session.
#[derive(Debug)]
pub struct StartFailure {
    /// The server's alias.
    pub alias: String,
    /// Why (its messages quote what the server chose: escape before printing).
    pub error: ConnectError,
}

impl McpHub {
    /// The servers of `config` in `workspace`; `None`: no trusted `.mcp.json`, nothing can
    /// be connected (the tools say so). Nothing starts yet.
    pub fn new(workspace: Workspace, config: Option<TrustedConfig>) -> Self {
        Self {
            workspace,
            config,
            sandbox: None,
            connected: tokio::sync::Mutex::new(BTreeMap::new()),
            registered: Mutex::new(BTreeMap::new()),
            next_id: std::sync::atomic::AtomicU64::new(0),
            lost: Arc::default(),
            registry: OnceLock::new(),
        }
    }

    /// Servers run in `sandbox` instead of the process's default one (tests run unconfined:
    /// a test binary is no sandbox helper).
    #[must_use]
    pub fn sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// Starts every server of the config (at session start). Their tools are registered
    /// before the first request; the servers that failed are returned, already gone.
    pub async fn start(&self) -> Vec<StartFailure> {
        let Some(config) = &self.config else {
            return Vec::new();
        };
        let mut failures = Vec::new();
        for alias in config.servers().keys() {
            if let Err(error) = self.connect(alias).await {
                failures.push(StartFailure {
                    alias: alias.clone(),
                    error,
                });
            }
        }
        failures
    }

    /// The registry the tools are registered in (the agent's, once built).
    pub(crate) fn bind(&self, registry: &Arc<ToolRegistry>) {
        let _ = self.registry.set(Arc::downgrade(registry));
    }

    fn registry(&self) -> Option<Arc<ToolRegistry>> {
        self.registry.get().and_then(Weak::upgrade)
    }

    fn lock_registered(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, (u64, Vec<String>)>> {
        self.registered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The servers connected now, each with its tools: (name, description), as the model
    /// is offered them (the server chose the descriptions: escape before printing).
    pub async fn tools(&self) -> BTreeMap<String, Vec<(String, String)>> {
        self.connected
            .lock()
            .await
            .iter()
            .filter(|(_, c)| c.connection.state() == State::Connected)
            .map(|(alias, c)| {
                let tools = c.connection.tools().into_iter().map(|tool| {
                    let spec = tool.spec();
                    (spec.name.clone(), spec.description.clone())
                });
                (alias.clone(), tools.collect())
            })
            .collect()
    }

    /// Connects `alias`: its tools are registered by the next [`Self::sync`]. Returns their
    /// names.
    async fn connect(&self, alias: &str) -> Result<Vec<String>, ConnectError> {
        let unknown = || ConnectError::UnknownAlias {
            alias: alias.to_string(),
        };
        let config = self.config.as_ref().ok_or_else(unknown)?;
        let mut connected = self.connected.lock().await;
        // Names taken: the registry's, but not this alias's own (an earlier connection that
        // ended, whose tools the next sync removes).
        let own: Vec<String> = self
            .lock_registered()
            .get(alias)
            .map(|(_, names)| names.clone())
            .unwrap_or_default();
        let mut reserved: BTreeSet<String> = self
            .registry()
            .map(|r| r.names())
            .unwrap_or_default()
            .into_iter()
            .filter(|name| !own.contains(name))
            .collect();
        // Other servers connected since the last sync.
        for (_, c) in connected.iter().filter(|(other, _)| *other != alias) {
            reserved.extend(names_of(&c.connection));
        }
        reserved.extend([CONNECT_MCP.to_string(), DISCONNECT_MCP.to_string()]);
        let options = ConnectOptions {
            reserved,
            sandbox: self.sandbox.clone(),
            ..ConnectOptions::default()
        };
        let connection = McpConnection::connect(&self.workspace, config, alias, &options).await?;
        let names = names_of(&connection);
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Some(old) = connected.insert(alias.to_string(), Connected { id, connection }) {
            let _ = old.connection.close().await;
        }
        Ok(names)
    }

    /// Disconnects `alias`: its child's whole tree ends now, its tools leave the registry at
    /// the next [`Self::sync`]. Returns how many tools it had; `None` if it was not
    /// connected.
    async fn disconnect(&self, alias: &str) -> Option<std::io::Result<usize>> {
        let removed = self.connected.lock().await.remove(alias)?;
        let count = names_of(&removed.connection).len();
        Some(removed.connection.close().await.map(|()| count))
    }

    /// Makes the registry match what is connected (run before every model request): a
    /// server gone by itself is withdrawn, one whose tool list changed is listed again, a
    /// new connection's tools are registered, a closed one's removed. A list that cannot be
    /// registered whole closes its server.
    pub async fn sync(&self) {
        let Some(registry) = self.registry() else {
            return;
        };
        let mut connected = self.connected.lock().await;
        // A server that went away, or that a call found gone: withdrawn, its tree reaped.
        let noted = std::mem::take(&mut *self.lost.lock().unwrap_or_else(PoisonError::into_inner));
        let lost: Vec<String> = connected
            .iter()
            .filter(|(alias, c)| {
                c.connection.state() != State::Connected
                    || noted.contains(&((*alias).clone(), c.id))
            })
            .map(|(alias, _)| alias.clone())
            .collect();
        for alias in lost {
            tracing::warn!(alias = %alias.escape_debug(), "MCP server is gone; its tools are withdrawn");
            if let Some(c) = connected.remove(&alias) {
                let _ = c.connection.close().await;
            }
        }
        // A server that announced a new tool list: listed again, under the same rules.
        let (mut refreshed, mut dropped) = (Vec::new(), Vec::new());
        for (alias, c) in connected.iter() {
            if !c.connection.tools_changed() {
                continue;
            }
            let own = names_of(&c.connection);
            let reserved: BTreeSet<String> = registry
                .names()
                .into_iter()
                .filter(|name| !own.contains(name))
                .collect();
            match c.connection.refresh(&reserved).await {
                Ok(_) => refreshed.push(alias.clone()),
                Err(err) => {
                    // Closed by agent-mcp already; withdrawn now.
                    tracing::warn!("MCP server's new tool list refused: {err}");
                    dropped.push(alias.clone());
                }
            }
        }
        for alias in dropped {
            connected.remove(&alias);
        }
        let refused = self.reconcile(&registry, &connected, &refreshed);
        for alias in refused {
            if let Some(c) = connected.remove(&alias) {
                let _ = c.connection.close().await;
            }
        }
    }

    /// The registry's side of [`Self::sync`], under the `registered` lock (never across an
    /// `.await`): stale tools removed, new ones registered. Returns the servers whose list
    /// could not be registered whole (their tools are removed again).
    fn reconcile(
        &self,
        registry: &ToolRegistry,
        connected: &BTreeMap<String, Connected>,
        refreshed: &[String],
    ) -> Vec<String> {
        let mut registered = self.lock_registered();
        // Refreshed lists are registered again, as a new connection's.
        for alias in refreshed {
            if let Some((id, _)) = registered.get_mut(alias) {
                *id = u64::MAX;
            }
        }
        let stale: Vec<String> = registered
            .iter()
            .filter(|(alias, (id, _))| connected.get(*alias).is_none_or(|c| c.id != *id))
            .map(|(alias, _)| alias.clone())
            .collect();
        for alias in stale {
            if let Some((_, names)) = registered.remove(&alias) {
                registry.remove(&names);
            }
        }
        let mut refused = Vec::new();
        for (alias, c) in connected.iter() {
            if registered.contains_key(alias) || c.connection.state() != State::Connected {
                continue;
            }
            let mut names = Vec::new();
            let mut failed = None;
            for tool in c.connection.tools() {
                let (spec, mode) = (tool.spec().clone(), tool.schema_mode());
                let name = spec.name.clone();
                let watched = Watched {
                    tool,
                    connection: (alias.clone(), c.id),
                    lost: self.lost.clone(),
                };
                match registry.register_in(spec, Arc::new(watched), mode) {
                    Ok(()) => names.push(name),
                    Err(err) => {
                        failed = Some(err);
                        break;
                    }
                }
            }
            match failed {
                None => {
                    registered.insert(alias.clone(), (c.id, names));
                }
                Some(err) => {
                    tracing::warn!("MCP server's tools could not be registered: {err}");
                    registry.remove(&names);
                    refused.push(alias.clone());
                }
            }
        }
        refused
    }

    /// Closes every server (the session ends): returns once no process of any is running;
    /// their tools leave the registry. A server that fails to close does not stop the others:
    /// each failure is returned (and logged), the rest are closed all the same.
    pub async fn close(&self) -> Vec<ServerNotClosed> {
        let all = std::mem::take(&mut *self.connected.lock().await);
        let mut failed = Vec::new();
        for (alias, c) in all {
            if let Err(error) = c.connection.close().await {
                tracing::warn!(alias = %alias.escape_debug(), "MCP server did not end: {error}");
                failed.push(ServerNotClosed { alias, error });
            }
        }
        let registered = std::mem::take(&mut *self.lock_registered());
        if let Some(registry) = self.registry() {
            for (_, names) in registered.into_values() {
                registry.remove(&names);
            }
        }
        failed
    }

    fn aliases(&self) -> String {
        match &self.config {
            Some(config) if !config.servers().is_empty() => config
                .servers()
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
            _ => "none (no trusted .mcp.json in this workspace)".to_string(),
        }
    }
}

/// A server whose close failed (its process may still run; the session went on).
#[derive(Debug, thiserror::Error)]
#[error(
    "MCP server `{}` did not close: {error}",
    agent_policy::escape_controls(alias)
)]
pub struct ServerNotClosed {
    /// The server's alias in `.mcp.json`.
    pub alias: String,
    /// Why.
    #[source]
    pub error: std::io::Error,
}

fn names_of(connection: &McpConnection) -> Vec<String> {
    connection
        .tools()
        .iter()
        .map(|tool| tool.spec().name.clone())
        .collect()
}

/// A server's tool as registered: the tool itself, and a note to the hub when a call finds
/// the server gone.
struct Watched {
    tool: agent_mcp::McpTool,
    /// The alias and the connection's number.
    connection: (String, u64),
    lost: Arc<Mutex<BTreeSet<(String, u64)>>>,
}

#[async_trait]
impl ToolHandler for Watched {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        self.call(call)
            .await
            .map(agent_core::tool::ToolOutput::into_text)
    }

    async fn call(&self, call: &PreparedCall) -> Result<agent_core::tool::ToolOutput, ToolFailure> {
        let result = self.tool.call(call).await;
        if let Err(failure) = &result
            && failure.code == FailureCode::McpConnectionLost
        {
            self.lost
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(self.connection.clone());
        }
        result
    }

    fn describe(&self, arguments: &Value) -> CallSummary {
        self.tool.describe(arguments)
    }
}

/// The processor that runs [`McpHub::sync`] before every request; it changes no message.
pub(crate) struct McpSync(pub(crate) Arc<McpHub>);

#[async_trait]
impl HistoryProcessor for McpSync {
    fn name(&self) -> &'static str {
        "mcp_tools"
    }

    async fn process(
        &self,
        messages: Vec<Arc<Message>>,
    ) -> Result<Vec<Arc<Message>>, ProcessError> {
        self.0.sync().await;
        Ok(messages)
    }
}
