//! `.mcp.json`: which MCP servers a workspace asks for, in Claude Code's shape
//! (`{"mcpServers": {"alias": {"command", "args", "env", "cwd"}}}`) plus our own fields
//! (`startup_timeout_secs`, `tool_timeout_secs`, a per-tool `effect`).
//!
//! The file is written by whoever wrote the repository, so it is read like any other hostile
//! input: through the workspace boundary (a symlink out is refused), never from a FIFO or a
//! device, bounded in bytes and in every count, and strict (an unknown field is an error, not
//! a silently ignored typo). Parsing it starts nothing: a server starts only from a
//! [`TrustedConfig`], which exists only once the user trusted this exact content
//! ([`ConfigFile::admit`]).

use std::collections::BTreeMap;
use std::time::Duration;

use agent_core::tool::ToolEffect;
use agent_trust::Verdict;
use agent_workspace::{PathError, Workspace};
use serde::Deserialize;

use crate::names;

/// Where the file lives, relative to the workspace root (where Claude Code reads it too).
pub const CONFIG_PATH: &str = ".mcp.json";
/// The most bytes of `.mcp.json` read: a few servers take a few hundred bytes.
pub const MAX_CONFIG_BYTES: u64 = 256 * 1024;
/// The most servers one file may name.
pub const MAX_SERVERS: usize = 32;
/// The most arguments, and separately the most environment variables, of one server.
pub const MAX_ARGS: usize = 256;
/// The most per-tool entries of one server.
pub const MAX_TOOL_ENTRIES: usize = 256;
/// The handshake's default bound: `npx` may have to unpack a package first.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// A call's default bound.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);
/// The largest `startup_timeout_secs` accepted.
pub const MAX_STARTUP_TIMEOUT_SECS: u64 = 600;
/// The largest `tool_timeout_secs` accepted.
pub const MAX_TOOL_TIMEOUT_SECS: u64 = 3600;

/// Which of a server's two timeouts a message is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutField {
    /// `startup_timeout_secs`.
    Startup,
    /// `tool_timeout_secs`.
    Tool,
}

impl std::fmt::Display for TimeoutField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Startup => "startup_timeout_secs",
            Self::Tool => "tool_timeout_secs",
        })
    }
}

/// Why `.mcp.json` cannot be used. Nothing starts when it is refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The boundary refused the file: a symlink out of the workspace, a FIFO or a device, over
    /// [`MAX_CONFIG_BYTES`], or unreadable.
    #[error("cannot read {CONFIG_PATH}: {0}")]
    Read(#[source] PathError),
    /// Not UTF-8 JSON of the expected shape (an unknown field included).
    #[error("{CONFIG_PATH} is not valid: {0}")]
    Json(#[source] serde_json::Error),
    /// More servers than [`MAX_SERVERS`].
    #[error("{CONFIG_PATH} names {count} servers; at most {MAX_SERVERS} are allowed")]
    TooManyServers {
        /// How many it names.
        count: usize,
    },
    /// An alias that cannot be part of a tool name.
    #[error(
        "MCP server alias `{alias}` is invalid: use 1-{} characters from a-z, A-Z, 0-9, `_` and `-`, without `__`",
        names::MAX_ALIAS_LEN
    )]
    InvalidAlias {
        /// The alias as written.
        alias: String,
    },
    /// Two aliases that name their tools alike (`my-server` and `my_server`).
    #[error(
        "MCP server aliases `{first}` and `{second}` both name their tools `mcp__{normalized}__…`"
    )]
    AliasCollision {
        /// The first alias (in the file's sorted order).
        first: String,
        /// The second.
        second: String,
        /// What both become.
        normalized: String,
    },
    /// A transport other than stdio (`"type": "http"`): not supported.
    #[error("MCP server `{alias}`: transport `{kind}` is not supported (only `stdio`)")]
    UnsupportedTransport {
        /// The server.
        alias: String,
        /// The `type` it asked for.
        kind: String,
    },
    /// An empty `command`.
    #[error("MCP server `{alias}`: `command` is empty")]
    EmptyCommand {
        /// The server.
        alias: String,
    },
    /// A string with a NUL byte, which no process can receive.
    #[error("MCP server `{alias}`: {field} contains a NUL byte")]
    NulByte {
        /// The server.
        alias: String,
        /// Which field.
        field: &'static str,
    },
    /// More arguments, environment variables or tool entries than allowed.
    #[error("MCP server `{alias}`: `{field}` has {count} entries; at most {max} are allowed")]
    TooMany {
        /// The server.
        alias: String,
        /// Which field.
        field: &'static str,
        /// How many it has.
        count: usize,
        /// The bound.
        max: usize,
    },
    /// An environment variable the server may not be given: the model server's credentials
    /// (`OPENAI_*`), or a name no environment can hold.
    #[error("MCP server `{alias}`: environment variable `{name}` may not be set")]
    ForbiddenEnv {
        /// The server.
        alias: String,
        /// The variable.
        name: String,
    },
    /// A timeout of 0 or over its bound.
    #[error("MCP server `{alias}`: `{field}` must be between 1 and {max}, not {value}")]
    Timeout {
        /// The server.
        alias: String,
        /// Which timeout.
        field: TimeoutField,
        /// What was written.
        value: u64,
        /// The bound.
        max: u64,
    },
}

/// One server as the file describes it, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The program to start (looked up on `PATH` when it has no `/`).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables added to the scrubbed environment.
    pub env: BTreeMap<String, String>,
    /// The folder to start in, relative to the workspace root; `None`: the root. Resolved
    /// through the workspace boundary when the server starts.
    pub cwd: Option<String>,
    /// The bound on starting, the handshake and listing the tools.
    pub startup_timeout: Duration,
    /// The bound on each call.
    pub tool_timeout: Duration,
    /// Per remote tool name (as the server names it): the effect its calls have for the
    /// permission pipeline. A tool not named here is [`ToolEffect::External`].
    pub effects: BTreeMap<String, ToolEffect>,
}

impl ServerConfig {
    /// The effect calls to `tool` (the server's name for it) have.
    pub fn effect_of(&self, tool: &str) -> ToolEffect {
        self.effects
            .get(tool)
            .copied()
            .unwrap_or(ToolEffect::External)
    }
}

/// The servers of one `.mcp.json`, by alias, checked. Starts nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct McpConfig {
    servers: BTreeMap<String, ServerConfig>,
}

/// `.mcp.json` as read: what it says and the fingerprint the trust store keys on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    config: McpConfig,
    fingerprint: String,
}

/// A config whose exact content the user trusted: the only thing a server starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedConfig {
    config: McpConfig,
}

/// Why a config was not admitted: nothing starts. Its message says how to trust it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{CONFIG_PATH} is {}; no MCP server starts (run `agent-tutorial trust` to trust it)", describe(*.verdict))]
pub struct NotTrusted {
    /// What the trust store said ([`Verdict::Untrusted`] or [`Verdict::Changed`]).
    pub verdict: Verdict,
}

fn describe(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Trusted => "trusted",
        Verdict::Untrusted => "not trusted in this workspace",
        Verdict::Changed => "changed since it was trusted",
    }
}

impl McpConfig {
    /// Parses and checks the bytes of a `.mcp.json`.
    pub fn parse(bytes: &[u8]) -> Result<Self, ConfigError> {
        let raw: RawFile = serde_json::from_slice(bytes).map_err(ConfigError::Json)?;
        if raw.mcp_servers.len() > MAX_SERVERS {
            return Err(ConfigError::TooManyServers {
                count: raw.mcp_servers.len(),
            });
        }
        let mut servers = BTreeMap::new();
        let mut prefixes: BTreeMap<String, String> = BTreeMap::new();
        for (alias, raw) in raw.mcp_servers {
            let normalized =
                names::normalize_alias(&alias).ok_or_else(|| ConfigError::InvalidAlias {
                    alias: alias.clone(),
                })?;
            if let Some(first) = prefixes.get(&normalized) {
                return Err(ConfigError::AliasCollision {
                    first: first.clone(),
                    second: alias,
                    normalized,
                });
            }
            let server = raw.check(&alias)?;
            prefixes.insert(normalized, alias.clone());
            servers.insert(alias, server);
        }
        Ok(Self { servers })
    }

    /// The servers, by alias (sorted).
    pub fn servers(&self) -> &BTreeMap<String, ServerConfig> {
        &self.servers
    }
}

impl ConfigFile {
    /// Reads `.mcp.json` from the workspace root through the boundary; `None` when there is
    /// none.
    pub fn load(workspace: &Workspace) -> Result<Option<Self>, ConfigError> {
        let path = workspace.inside(CONFIG_PATH).map_err(ConfigError::Read)?;
        let bytes = match workspace.read_bytes(&path, MAX_CONFIG_BYTES) {
            Ok(bytes) => bytes,
            Err(err) if err.is_not_found() => return Ok(None),
            Err(err) => return Err(ConfigError::Read(err)),
        };
        Self::from_bytes(&bytes).map(Some)
    }

    /// The file's bytes, checked, with their fingerprint.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ConfigError> {
        Ok(Self {
            config: McpConfig::parse(bytes)?,
            fingerprint: agent_trust::sha256_hex(bytes),
        })
    }

    /// What the file says, for showing (`mcp list`); nothing starts from it.
    pub fn config(&self) -> &McpConfig {
        &self.config
    }

    /// The SHA-256 of the file's bytes, lower-case hex: what the trust store records and
    /// compares (as for `hooks.json`).
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The config, if `verdict` (the trust store's answer for [`Self::fingerprint`]) is
    /// [`Verdict::Trusted`]. The trust store has no kind for MCP servers yet: the harness
    /// adds one (`TrustKind::McpServers`, at [`CONFIG_PATH`]) and asks
    /// `trust.verdict(kind, file.fingerprint())`, telling `trust.refused(kind, verdict,
    /// servers)` when this refuses.
    pub fn admit(self, verdict: Verdict) -> Result<TrustedConfig, NotTrusted> {
        match verdict {
            Verdict::Trusted => Ok(TrustedConfig {
                config: self.config,
            }),
            Verdict::Untrusted | Verdict::Changed => Err(NotTrusted { verdict }),
        }
    }
}

impl TrustedConfig {
    /// The servers, by alias (sorted).
    pub fn servers(&self) -> &BTreeMap<String, ServerConfig> {
        self.config.servers()
    }

    /// One server.
    pub fn server(&self, alias: &str) -> Option<&ServerConfig> {
        self.config.servers.get(alias)
    }
}

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(rename = "mcpServers", default)]
    mcp_servers: BTreeMap<String, RawServer>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    /// Claude Code writes `"type": "stdio"` for a local server.
    #[serde(rename = "type")]
    kind: Option<String>,
    command: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<String>,
    startup_timeout_secs: Option<u64>,
    tool_timeout_secs: Option<u64>,
    #[serde(default)]
    tools: BTreeMap<String, RawTool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTool {
    effect: Option<ToolEffect>,
}

impl RawServer {
    fn check(self, alias: &str) -> Result<ServerConfig, ConfigError> {
        let alias_owned = || alias.to_string();
        if let Some(kind) = self.kind.filter(|kind| kind != "stdio") {
            return Err(ConfigError::UnsupportedTransport {
                alias: alias_owned(),
                kind,
            });
        }
        if self.command.is_empty() {
            return Err(ConfigError::EmptyCommand {
                alias: alias_owned(),
            });
        }
        for (field, count, max) in [
            ("args", self.args.len(), MAX_ARGS),
            ("env", self.env.len(), MAX_ARGS),
            ("tools", self.tools.len(), MAX_TOOL_ENTRIES),
        ] {
            if count > max {
                return Err(ConfigError::TooMany {
                    alias: alias_owned(),
                    field,
                    count,
                    max,
                });
            }
        }
        let nul = |field| ConfigError::NulByte {
            alias: alias_owned(),
            field,
        };
        if self.command.contains('\0') {
            return Err(nul("command"));
        }
        if self.args.iter().any(|a| a.contains('\0')) {
            return Err(nul("args"));
        }
        if self.cwd.as_deref().is_some_and(|cwd| cwd.contains('\0')) {
            return Err(nul("cwd"));
        }
        for (name, value) in &self.env {
            // The process layer would drop an `OPENAI_*` silently; refusing it says so.
            let storable = !name.is_empty() && !name.contains(['=', '\0']);
            if !storable || !agent_workspace::process::inherits(name) {
                return Err(ConfigError::ForbiddenEnv {
                    alias: alias_owned(),
                    name: name.clone(),
                });
            }
            if value.contains('\0') {
                return Err(nul("env"));
            }
        }
        let timeout = |field, value: Option<u64>, default: Duration, max| match value {
            None => Ok(default),
            Some(secs @ 1..) if secs <= max => Ok(Duration::from_secs(secs)),
            Some(value) => Err(ConfigError::Timeout {
                alias: alias_owned(),
                field,
                value,
                max,
            }),
        };
        Ok(ServerConfig {
            command: self.command,
            args: self.args,
            env: self.env,
            cwd: self.cwd,
            startup_timeout: timeout(
                TimeoutField::Startup,
                self.startup_timeout_secs,
                DEFAULT_STARTUP_TIMEOUT,
                MAX_STARTUP_TIMEOUT_SECS,
            )?,
            tool_timeout: timeout(
                TimeoutField::Tool,
                self.tool_timeout_secs,
                DEFAULT_TOOL_TIMEOUT,
                MAX_TOOL_TIMEOUT_SECS,
            )?,
            effects: self
                .tools
                .into_iter()
                .filter_map(|(name, tool)| tool.effect.map(|effect| (name, effect)))
                .collect(),
        })
    }
}
