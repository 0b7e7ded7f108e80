//! [`McpTool`]: one tool of a connected server, as an [`agent_core::ToolHandler`] the harness
//! registers, and how a call's result becomes a [`ToolOutput`].

use std::sync::Arc;

use agent_core::schema::SchemaMode;
use agent_core::tool::{
    FailureCode, OutputPart, PreparedCall, ToolFailure, ToolHandler, ToolOutput, ToolSpec,
};
use async_trait::async_trait;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

use crate::client::Shared;
use crate::schema::ArgumentSchema;

/// The longest message taken from a server into a failure the model reads; the rest is cut.
pub const MAX_ERROR_TEXT: usize = 2000;

/// One tool of a connected server: its spec (named `mcp__<alias>__<name>`, the effect from the
/// config) and the handler that validates the arguments against the server's full schema and
/// calls the server. Cheap to clone; it keeps the connection's shared state alive, not the
/// child: once the connection is closed or lost, a call fails with `mcp_connection_lost`.
#[derive(Clone)]
pub struct McpTool {
    pub(crate) shared: Arc<Shared>,
    pub(crate) remote: String,
    pub(crate) spec: ToolSpec,
    pub(crate) arguments: Arc<ArgumentSchema>,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.spec.name)
            .field("remote", &self.remote)
            .finish()
    }
}

impl McpTool {
    /// The spec to register: the server's own `inputSchema` as its parameters.
    pub fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// The server's name for the tool.
    pub fn remote_name(&self) -> &str {
        &self.remote
    }

    /// The mode to register the spec in (`ToolRegistry::register_in`): the one the schema was
    /// checked in when the server was connected, so registering cannot fail on it.
    pub fn schema_mode(&self) -> SchemaMode {
        self.shared.schema_mode
    }

    /// Checks `arguments` against the server's schema: the first mismatch, as the model reads
    /// it, or nothing.
    pub(crate) fn check_arguments(&self, arguments: &Value) -> Result<(), ToolFailure> {
        if !arguments.is_object() {
            return Err(ToolFailure::new(
                FailureCode::InvalidArguments,
                "the arguments must be a JSON object",
            ));
        }
        self.arguments.check(arguments).map_err(|mismatch| {
            ToolFailure::new(
                FailureCode::InvalidArguments,
                cut(&mismatch, MAX_ERROR_TEXT),
            )
        })
    }
}

#[async_trait]
impl ToolHandler for McpTool {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        self.call(call).await.map(ToolOutput::into_text)
    }

    async fn call(&self, call: &PreparedCall) -> Result<ToolOutput, ToolFailure> {
        // Before anything is sent: a call the schema refuses never reaches the server.
        self.check_arguments(&call.arguments)?;
        let arguments = match &call.arguments {
            Value::Object(map) => map.clone(),
            _ => serde_json::Map::new(),
        };
        let result = self.shared.call(&self.remote, arguments).await?;
        convert(&self.shared.alias, &self.remote, result)
    }
}

/// A `tools/call` result as the model reads it: its content blocks in order, one part each.
/// A result with `isError` is a failure carrying only the text the server wrote for the model
/// (its structured content, metadata and non-text blocks are dropped, and the text is cut).
pub(crate) fn convert(
    alias: &str,
    tool: &str,
    result: CallToolResult,
) -> Result<ToolOutput, ToolFailure> {
    if result.is_error == Some(true) {
        let text: Vec<String> = result
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(text) => Some(text.text.clone()),
                _ => None,
            })
            .collect();
        let said = if text.is_empty() {
            "(no message)".to_string()
        } else {
            text.join("\n")
        };
        return Err(ToolFailure::new(
            FailureCode::McpRemoteError,
            format!(
                "MCP tool `{tool}` of server `{alias}` reported an error: {}",
                cut(&said, MAX_ERROR_TEXT)
            ),
        ));
    }
    let mut parts: Vec<OutputPart> = result.content.iter().map(part).collect();
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        // A server that answers only with structured content (the spec asks for a text copy
        // too, not every server sends one): the JSON is the text.
        parts.push(OutputPart::Text(structured.to_string()));
    }
    Ok(ToolOutput::from_parts(parts))
}

/// One content block as text: text as it is, a text resource as its text, and a line naming
/// what a binary block was (the model cannot read base64 images through a text channel).
fn part(block: &ContentBlock) -> OutputPart {
    OutputPart::Text(match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!(
            "[image: {}, {} bytes of base64]",
            image.mime_type,
            image.data.len()
        ),
        ContentBlock::Audio(audio) => format!(
            "[audio: {}, {} bytes of base64]",
            audio.mime_type,
            audio.data.len()
        ),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[resource {uri}: {}, {} bytes of base64]",
                mime_type.as_deref().unwrap_or("binary"),
                blob.len()
            ),
            _ => "[a resource of a kind this client does not read]".to_string(),
        },
        ContentBlock::ResourceLink(link) => {
            format!("[resource link: {} ({})]", link.uri, link.name)
        }
        // A kind of block newer than this rmcp: named, not dropped silently.
        _ => "[content of a kind this client does not read]".to_string(),
    })
}

/// `text` cut to at most `max` characters, `…` marking a cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
}

#[cfg(test)]
mod tests {
    use agent_core::tool::{FailureCode, OutputPart, ToolFailure, ToolOutput};
    use rmcp::model::{CallToolResult, ContentBlock, Resource};
    use serde_json::json;

    use super::{MAX_ERROR_TEXT, convert};

    #[test]
    fn every_kind_of_block_becomes_one_text_part_in_order() {
        let result = CallToolResult::success(vec![
            ContentBlock::text("first"),
            ContentBlock::image("aGVsbG8=", "image/png"),
            ContentBlock::audio("AAAA", "audio/wav"),
            ContentBlock::embedded_text("file:///notes.txt", "embedded text"),
            ContentBlock::resource_link(Resource::new("file:///big.bin", "big.bin")),
        ]);
        let text = |t: &str| OutputPart::Text(t.to_string());
        assert_eq!(
            convert("srv", "t", result),
            Ok(ToolOutput::from_parts(vec![
                text("first"),
                text("[image: image/png, 8 bytes of base64]"),
                text("[audio: audio/wav, 4 bytes of base64]"),
                text("embedded text"),
                text("[resource link: file:///big.bin (big.bin)]"),
            ]))
        );
    }

    #[test]
    fn structured_content_alone_is_its_json() {
        let mut result = CallToolResult::success(vec![]);
        result.structured_content = Some(json!({"sum": 5}));
        assert_eq!(
            convert("srv", "t", result),
            Ok(ToolOutput::text(r#"{"sum":5}"#))
        );
    }

    #[test]
    fn an_error_result_keeps_only_its_text_cut_to_the_bound() {
        let mut result = CallToolResult::error(vec![
            ContentBlock::text("x".repeat(MAX_ERROR_TEXT + 10)),
            ContentBlock::image("aGVsbG8=", "image/png"),
        ]);
        result.structured_content = Some(json!({"secret": "private detail"}));
        assert_eq!(
            convert("srv", "t", result),
            Err(ToolFailure::new(
                FailureCode::McpRemoteError,
                format!(
                    "MCP tool `t` of server `srv` reported an error: {}…",
                    "x".repeat(MAX_ERROR_TEXT)
                )
            ))
        );
        assert_eq!(
            convert("srv", "t", CallToolResult::error(vec![])),
            Err(ToolFailure::new(
                FailureCode::McpRemoteError,
                "MCP tool `t` of server `srv` reported an error: (no message)"
            ))
        );
    }
}
