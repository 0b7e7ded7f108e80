//! `read_file`, `write_file`, `edit_file`: file tools confined to the workspace.

use agent_core::{
    PreparedCall, ToolEffect, ToolFailure, ToolHandler, ToolSpec, tool::parse_arguments,
};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use crate::output::Capture;
use crate::workspace::Workspace;

/// Bytes of a file `read_file` returns before it cuts the middle out.
pub const READ_CAP_BYTES: usize = 100_000;

pub fn read_spec() -> ToolSpec {
    ToolSpec::new(
        "read_file",
        "Read a text file in the workspace. `limit` caps the number of lines returned.",
        ToolEffect::Read,
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path relative to the workspace."},
                "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines."}
            },
            "required": ["path"]
        }),
    )
}

pub fn write_spec() -> ToolSpec {
    ToolSpec::new(
        "write_file",
        "Create or overwrite a file in the workspace with `content`. Parent directories are created.",
        ToolEffect::Write,
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path relative to the workspace."},
                "content": {"type": "string"}
            },
            "required": ["path", "content"]
        }),
    )
}

pub fn edit_spec() -> ToolSpec {
    ToolSpec::new(
        "edit_file",
        "Replace `old_text` with `new_text` in a file. `old_text` must occur exactly once; include surrounding lines to make it unique.",
        ToolEffect::Write,
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path relative to the workspace."},
                "old_text": {"type": "string", "minLength": 1},
                "new_text": {"type": "string"}
            },
            "required": ["path", "old_text", "new_text"]
        }),
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    path: String,
    limit: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    path: String,
    content: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    path: String,
    old_text: String,
    new_text: String,
}

fn io_failure(action: &str, path: &str, err: std::io::Error) -> ToolFailure {
    ToolFailure::execution(format!("cannot {action} `{path}`: {err}"))
}

/// `read_file`.
#[derive(Debug, Clone)]
pub struct ReadFile(pub Workspace);

#[async_trait]
impl ToolHandler for ReadFile {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: ReadArgs = parse_arguments(call)?;
        let path = self.0.resolve(&args.path)?;
        let bytes = tokio::fs::read(&path)
            .await
            .map_err(|err| io_failure("read", &args.path, err))?;
        let Some(limit) = args.limit else {
            return Ok(Capture::of(&bytes, READ_CAP_BYTES).render());
        };
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let shown: String = lines.iter().take(limit).copied().collect();
        let mut out = Capture::of(shown.as_bytes(), READ_CAP_BYTES).render();
        if lines.len() > limit {
            let more = lines.len() - limit;
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&format!("[... {more} more lines not shown ...]"));
        }
        Ok(out)
    }
}

/// `write_file`.
#[derive(Debug, Clone)]
pub struct WriteFile(pub Workspace);

#[async_trait]
impl ToolHandler for WriteFile {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: WriteArgs = parse_arguments(call)?;
        let path = self.0.resolve(&args.path)?;
        if let Some(parent) = path.parent() {
            tokio::fs::create_dir_all(parent)
                .await
                .map_err(|err| io_failure("create the folder of", &args.path, err))?;
        }
        tokio::fs::write(&path, args.content.as_bytes())
            .await
            .map_err(|err| io_failure("write", &args.path, err))?;
        Ok(format!(
            "Wrote {} bytes to {}",
            args.content.len(),
            self.0.relative(&path)
        ))
    }
}

/// `edit_file`.
#[derive(Debug, Clone)]
pub struct EditFile(pub Workspace);

#[async_trait]
impl ToolHandler for EditFile {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: EditArgs = parse_arguments(call)?;
        let path = self.0.resolve(&args.path)?;
        let text = tokio::fs::read_to_string(&path)
            .await
            .map_err(|err| io_failure("read", &args.path, err))?;
        let shown = self.0.relative(&path);
        match text.matches(&args.old_text).count() {
            0 => Err(ToolFailure::execution(format!(
                "old_text was not found in {shown}; read the file and copy the text exactly"
            ))),
            1 => {
                let updated = text.replacen(&args.old_text, &args.new_text, 1);
                tokio::fs::write(&path, updated.as_bytes())
                    .await
                    .map_err(|err| io_failure("write", &args.path, err))?;
                Ok(format!("Edited {shown}: replaced 1 occurrence"))
            }
            n => Err(ToolFailure::execution(format!(
                "old_text occurs {n} times in {shown}; include more surrounding text so it occurs exactly once"
            ))),
        }
    }
}
