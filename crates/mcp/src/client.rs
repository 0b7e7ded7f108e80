//! [`McpConnection`]: one running server, spoken to with rmcp's client over the child's stdin
//! and stdout.
//!
//! The child is started by the workspace's process layer (its own process group, a scrubbed
//! environment, the sandbox, stderr captured and bounded), never by rmcp's child-process
//! transport, whose `cancel()` leaves the server's own children running. Everything that
//! waits on the server is bounded: the start (handshake and tool list) by the startup timeout,
//! each call by the tool timeout. When the connection ends — closed, dropped, crashed, or
//! refused at the start — the child's whole tree is killed and the leader reaped.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use agent_core::schema::SchemaMode;
use agent_sandbox::Sandbox;
use agent_workspace::Workspace;
use agent_workspace::process::StdioChild;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, InitializeRequestParams};
use rmcp::service::{NotificationContext, Peer, RunningService, RunningServiceCancellationToken};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::sync::watch;

use crate::child::{MAX_LINE_BYTES, spawn};
use crate::config::{ServerConfig, TrustedConfig};
use crate::error::ConnectError;
use crate::listing;
use crate::tool::{McpTool, cut};

/// Where a connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Handshake done, tools listed, the server running.
    Connected,
    /// The server went away by itself (exited, crashed, closed its stdout); its tree was
    /// killed and the leader reaped.
    Lost,
    /// Closed by us.
    Closed,
}

/// How to connect: what the caller's registry holds already and how it will take schemas.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Tool names already taken (the built-ins, other servers' tools): a server with a tool of
    /// one of these names is refused whole.
    pub reserved: BTreeSet<String>,
    /// The sandbox the server runs in; `None`: the process's default.
    pub sandbox: Option<Sandbox>,
    /// How the caller will register the tools' schemas; each is checked in this mode at
    /// connect time, so a schema the registry would refuse refuses the whole server.
    pub schema_mode: SchemaMode,
}

impl Default for ConnectOptions {
    /// Nothing reserved, the default sandbox, and schemas passed through as the server wrote
    /// them: the model reads every constraint, our checker enforces the keywords it knows and
    /// the full JSON Schema validator the rest before the call is sent.
    fn default() -> Self {
        Self {
            reserved: BTreeSet::new(),
            sandbox: None,
            schema_mode: SchemaMode::PassThrough,
        }
    }
}

/// What a connection's tools and its watcher share.
pub(crate) struct Shared {
    pub(crate) alias: String,
    pub(crate) prefix: String,
    pub(crate) schema_mode: SchemaMode,
    pub(crate) server: ServerConfig,
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) state: watch::Sender<State>,
    changed: Arc<AtomicBool>,
    child: tokio::sync::Mutex<Option<StdioChild>>,
    service: Mutex<Option<RunningServiceCancellationToken>>,
    stderr: Mutex<String>,
}

/// One connected server and its current tools.
#[derive(Debug)]
pub struct McpConnection {
    shared: Arc<Shared>,
    tools: Mutex<Vec<McpTool>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("alias", &self.alias)
            .field("state", &*self.state.borrow())
            .finish()
    }
}

/// rmcp's side of the client: it only notes that the tool list changed. The list is taken
/// again when the caller asks ([`McpConnection::refresh`]), between model requests, never in
/// the middle of a batch.
struct Notes {
    changed: Arc<AtomicBool>,
}

impl ClientHandler for Notes {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.store(true, Ordering::Release);
    }

    fn get_info(&self) -> ClientConfig {
        InitializeRequestParams::new(
            ClientCapabilities::default(),
            Implementation::new("agent-tutorial", env!("CARGO_PKG_VERSION")),
        )
    }
}

impl McpConnection {
    /// Starts the server `alias` of a trusted config in `workspace`, does the handshake and
    /// lists its tools, all within its startup timeout. A tool list that cannot be taken whole
    /// (a name collision, a taken name, a refused schema, too many tools) refuses the server:
    /// the child is closed and nothing is returned.
    pub async fn connect(
        workspace: &Workspace,
        config: &TrustedConfig,
        alias: &str,
        options: &ConnectOptions,
    ) -> Result<Self, ConnectError> {
        let unknown = || ConnectError::UnknownAlias {
            alias: alias.to_string(),
        };
        let server = config.server(alias).ok_or_else(unknown)?.clone();
        let prefix = crate::names::normalize_alias(alias).ok_or_else(unknown)?;
        let mut child = spawn(workspace, alias, &server, options.sandbox.clone())?;
        let deadline = tokio::time::Instant::now() + server.startup_timeout;
        let changed = Arc::new(AtomicBool::new(false));
        let running = match handshake(&mut child, changed.clone(), deadline).await {
            Ok(running) => running,
            Err(reason) => {
                let stderr = child.stderr().render();
                let _ = child.close().await;
                let err = match reason {
                    Some(reason) => ConnectError::Handshake {
                        alias: alias.to_string(),
                        reason,
                        stderr: String::new(),
                    },
                    None => ConnectError::StartupTimeout {
                        alias: alias.to_string(),
                        timeout: server.startup_timeout,
                        stderr: String::new(),
                    },
                };
                return Err(err.with_stderr(stderr));
            }
        };
        let (state, _) = watch::channel(State::Connected);
        let shared = Arc::new(Shared {
            alias: alias.to_string(),
            prefix,
            schema_mode: options.schema_mode,
            server,
            peer: running.peer().clone(),
            state,
            changed,
            child: tokio::sync::Mutex::new(Some(child)),
            service: Mutex::new(Some(running.cancellation_token())),
            stderr: Mutex::new(String::new()),
        });
        let weak = Arc::downgrade(&shared);
        tokio::spawn(async move {
            // Ends when the transport closes (the server exited or closed its stdout) or the
            // service is cancelled (our close).
            let _ = running.waiting().await;
            if let Some(shared) = weak.upgrade() {
                shared.state.send_if_modified(|state| {
                    let lost = *state == State::Connected;
                    if lost {
                        *state = State::Lost;
                    }
                    lost
                });
                if let Err(err) = shared.reap().await {
                    tracing::warn!(alias = %shared.alias, "MCP server's tree did not end: {err}");
                }
            }
        });
        let connection = Self {
            shared,
            tools: Mutex::new(Vec::new()),
        };
        match connection.list(deadline, &options.reserved).await {
            Ok(tools) => {
                *connection.lock_tools() = tools;
                Ok(connection)
            }
            Err(err) => {
                let _ = connection.shared.shut(State::Closed).await;
                Err(err.with_stderr(connection.shared.stderr()))
            }
        }
    }

    /// The alias from the config.
    pub fn alias(&self) -> &str {
        &self.shared.alias
    }

    /// Where the connection is.
    pub fn state(&self) -> State {
        *self.shared.state.borrow()
    }

    /// The tools as last listed, in the server's order.
    pub fn tools(&self) -> Vec<McpTool> {
        self.lock_tools().clone()
    }

    /// Whether the server said its tool list changed (`notifications/tools/list_changed`)
    /// since the list was last taken. The caller refreshes between model requests.
    pub fn tools_changed(&self) -> bool {
        self.shared.changed.load(Ordering::Acquire)
    }

    /// What the server wrote on stderr so far, bounded (a marker says what was cut). Raw
    /// text: escape it before showing it.
    pub fn stderr(&self) -> String {
        self.shared.stderr()
    }

    /// Lists the tools again (after [`Self::tools_changed`]) within the startup timeout and
    /// returns the new list, which replaces the old. `reserved`: names taken by anything but
    /// this server. A list that cannot be taken whole closes the connection, as at connect.
    pub async fn refresh(&self, reserved: &BTreeSet<String>) -> Result<Vec<McpTool>, ConnectError> {
        if self.state() != State::Connected {
            return Err(ConnectError::NotConnected {
                alias: self.shared.alias.clone(),
            });
        }
        // Cleared before listing: a change announced while the list is taken shows again.
        self.shared.changed.store(false, Ordering::Release);
        let deadline = tokio::time::Instant::now() + self.shared.server.startup_timeout;
        match self.list(deadline, reserved).await {
            Ok(tools) => {
                *self.lock_tools() = tools.clone();
                Ok(tools)
            }
            Err(err) => {
                let _ = self.shared.shut(State::Closed).await;
                Err(err)
            }
        }
    }

    /// Ends the connection: the service stops and the child's whole tree is killed; returns
    /// once no process of it is running (an error if one outlived SIGKILL). The tools handed
    /// out fail with `mcp_connection_lost` from then on.
    pub async fn close(self) -> std::io::Result<()> {
        self.shared.shut(State::Closed).await
    }

    async fn list(
        &self,
        deadline: tokio::time::Instant,
        reserved: &BTreeSet<String>,
    ) -> Result<Vec<McpTool>, ConnectError> {
        let alias = &self.shared.alias;
        let listed = tokio::time::timeout_at(deadline, listing::list_all(&self.shared.peer))
            .await
            .map_err(|_| ConnectError::StartupTimeout {
                alias: alias.clone(),
                timeout: self.shared.server.startup_timeout,
                stderr: String::new(),
            })?
            .map_err(|problem| problem.into_error(alias))?;
        listing::check(&self.shared, listed, reserved)
    }

    fn lock_tools(&self) -> std::sync::MutexGuard<'_, Vec<McpTool>> {
        self.tools.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for McpConnection {
    fn drop(&mut self) {
        // Without `close`: the tree is killed now (the child's own drop), the leader reaped by
        // tokio's orphan reaper.
        self.shared.state.send_if_modified(|state| {
            let open = *state == State::Connected;
            if open {
                *state = State::Closed;
            }
            open
        });
        self.shared.cancel_service();
        // The child's own drop kills its tree; a close already under way holds the lock and
        // finishes the job itself.
        if let Ok(mut child) = self.shared.child.try_lock()
            && let Some(child) = child.take()
        {
            self.shared.keep_stderr(&child);
        }
    }
}

impl Shared {
    /// Moves to `state` (unless already ended), stops the service and ends the tree.
    async fn shut(&self, state: State) -> std::io::Result<()> {
        self.state.send_if_modified(|current| {
            let open = *current == State::Connected;
            if open {
                *current = state;
            }
            open
        });
        self.cancel_service();
        self.reap().await
    }

    fn cancel_service(&self) {
        let token = self
            .service
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(token) = token {
            token.cancel();
        }
    }

    /// Kills the child's whole tree and reaps the leader, once; a second caller waits until
    /// the first is done, so whoever returns knows the tree has ended.
    async fn reap(&self) -> std::io::Result<()> {
        let mut child = self.child.lock().await;
        let Some(taken) = child.take() else {
            return Ok(());
        };
        self.keep_stderr(&taken);
        taken.close().await.map(|_| ())
    }

    fn keep_stderr(&self, child: &StdioChild) {
        *self.stderr.lock().unwrap_or_else(PoisonError::into_inner) = child.stderr().render();
    }

    /// The live child's stderr, or what was kept when it ended.
    fn stderr(&self) -> String {
        if let Ok(child) = self.child.try_lock()
            && let Some(child) = child.as_ref()
        {
            return child.stderr().render();
        }
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// The handshake over the child's stdin and stdout, by `deadline`: the running client, or
/// why not (`None`: the deadline passed). rmcp waits forever for an answer to `initialize`
/// (a server printing anything but JSON-RPC never gives one), so the deadline is ours.
async fn handshake(
    child: &mut StdioChild,
    changed: Arc<AtomicBool>,
    deadline: tokio::time::Instant,
) -> Result<RunningService<RoleClient, Notes>, Option<String>> {
    let (Some(stdout), Some(stdin)) = (child.take_stdout(), child.take_stdin()) else {
        return Err(Some("the server's pipes were not available".into()));
    };
    let transport =
        AsyncRwTransport::new_client(stdout, stdin).with_max_line_length(MAX_LINE_BYTES);
    match tokio::time::timeout_at(deadline, Notes { changed }.serve(transport)).await {
        Ok(Ok(running)) => Ok(running),
        Ok(Err(err)) => Err(Some(cut(&err.to_string(), 500))),
        Err(_) => Err(None),
    }
}
