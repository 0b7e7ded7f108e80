//! Taking a server's tool list: every page (bounded), then every tool checked — its name made
//! into ours, no two alike and none taken, its schema one the checker and the registry accept
//! — before any is handed out. One bad tool refuses the list whole: exposing the rest would
//! hide from the model what the server meant to offer, and a collision would make a call
//! reach a tool other than the one the model chose.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use agent_core::tool::ToolSpec;
use rmcp::RoleClient;
use rmcp::model::{PaginatedRequestParams, Tool};
use rmcp::service::{Peer, ServiceError};
use serde_json::Value;

use crate::client::Shared;
use crate::error::ConnectError;
use crate::names;
use crate::schema::ArgumentSchema;
use crate::tool::{McpTool, cut};

/// The most tools taken from one server.
pub const MAX_TOOLS: usize = 256;
/// The most `tools/list` pages followed (a server could hand out cursors forever).
pub const MAX_PAGES: usize = 32;
/// The longest tool name a server may use (before normalizing).
pub const MAX_REMOTE_NAME: usize = 128;
/// The largest input schema taken, as compact JSON.
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;
/// The longest description kept (characters); the rest is cut.
pub const MAX_DESCRIPTION: usize = 4000;

/// Why listing failed, before the alias is known to the message.
pub(crate) enum ListProblem {
    Service(ServiceError),
    TooMany,
}

impl ListProblem {
    pub(crate) fn into_error(self, alias: &str) -> ConnectError {
        match self {
            Self::Service(err) => ConnectError::ListTools {
                alias: alias.to_string(),
                reason: cut(&err.to_string(), 500),
            },
            Self::TooMany => ConnectError::TooManyTools {
                alias: alias.to_string(),
                max: MAX_TOOLS,
            },
        }
    }
}

/// Every page of `tools/list`, within [`MAX_PAGES`] and [`MAX_TOOLS`].
pub(crate) async fn list_all(peer: &Peer<RoleClient>) -> Result<Vec<Tool>, ListProblem> {
    let mut tools = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let page = peer
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
            .await
            .map_err(ListProblem::Service)?;
        tools.extend(page.tools);
        if tools.len() > MAX_TOOLS {
            return Err(ListProblem::TooMany);
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(tools),
        }
    }
    Err(ListProblem::TooMany)
}

/// The listed tools as ours, or the first reason to refuse the whole list.
pub(crate) fn check(
    shared: &Arc<Shared>,
    listed: Vec<Tool>,
    reserved: &BTreeSet<String>,
) -> Result<Vec<McpTool>, ConnectError> {
    let alias = || shared.alias.clone();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut tools = Vec::with_capacity(listed.len());
    for tool in listed {
        let remote = tool.name.to_string();
        let name = (remote.len() <= MAX_REMOTE_NAME)
            .then(|| names::exposed(&shared.prefix, &remote))
            .flatten()
            .ok_or_else(|| ConnectError::ToolName {
                alias: alias(),
                tool: cut(&remote, 64),
            })?;
        if let Some(first) = seen.get(&name) {
            return Err(ConnectError::Collision {
                alias: alias(),
                name,
                first: first.clone(),
                second: remote,
            });
        }
        if reserved.contains(&name) {
            return Err(ConnectError::Taken {
                alias: alias(),
                name,
                tool: remote,
            });
        }
        let schema = Value::Object((*tool.input_schema).clone());
        let refused = |reason: String| ConnectError::Schema {
            alias: alias(),
            tool: remote.clone(),
            reason,
        };
        if schema.to_string().len() > MAX_SCHEMA_BYTES {
            return Err(refused(format!("it is over {MAX_SCHEMA_BYTES} bytes")));
        }
        // What the registry will do with it (a `$ref` refused, the depth bounded)...
        agent_core::schema::adopt(&schema, shared.schema_mode)
            .map_err(|err| refused(err.to_string()))?;
        // ...and what validates the arguments: the full JSON Schema, with no way to fetch an
        // external reference.
        let arguments = ArgumentSchema::compile(&schema).map_err(|why| refused(cut(&why, 300)))?;
        let description = tool
            .description
            .as_deref()
            .map(|text| cut(text, MAX_DESCRIPTION))
            .unwrap_or_default();
        let effect = shared.server.effect_of(&remote);
        seen.insert(name.clone(), remote.clone());
        tools.push(McpTool {
            shared: shared.clone(),
            spec: ToolSpec::new(name, description, effect, schema),
            remote,
            arguments: Arc::new(arguments),
        });
    }
    Ok(tools)
}
