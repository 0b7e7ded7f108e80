//! `read_file`, `write_file`, `edit_file`: file tools confined to the workspace.

use agent_core::tool::{parse_arguments, string_argument};
use agent_core::{CallSummary, PreparedCall, ToolEffect, ToolFailure, ToolHandler, ToolSpec};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use agent_workspace::Existing;

use crate::output::Capture;
use crate::{Workspace, blocking};

/// The file tools show, and touch, their one `path`.
fn describe_path(arguments: &Value) -> CallSummary {
    CallSummary::path(string_argument(arguments, "path"))
}

/// Bytes of a file `read_file` returns before it cuts the middle out.
pub const READ_CAP_BYTES: usize = 100_000;

/// `read_file` as the model sees it.
pub fn read_spec() -> ToolSpec {
    ToolSpec::new(
        ReadFile::NAME,
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

/// `write_file` as the model sees it.
pub fn write_spec() -> ToolSpec {
    ToolSpec::new(
        WriteFile::NAME,
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

/// `edit_file` as the model sees it.
pub fn edit_spec() -> ToolSpec {
    ToolSpec::new(
        EditFile::NAME,
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

/// The most `edit_file` reads: it must hold the whole file to replace one match in it.
pub const EDIT_LIMIT_BYTES: u64 = 10 * 1024 * 1024;

/// `read_file`.
#[derive(Debug, Clone)]
pub struct ReadFile(pub Workspace);

impl ReadFile {
    /// The tool's name, as the model calls it.
    pub const NAME: &'static str = "read_file";
}

#[async_trait]
impl ToolHandler for ReadFile {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: ReadArgs = parse_arguments(call)?;
        let workspace = self.0.clone();
        blocking(move || read(&workspace, &args)).await
    }

    fn describe(&self, arguments: &Value) -> CallSummary {
        describe_path(arguments)
    }
}

/// Reads at most what it returns: the two ends of a large file, or its first lines; never the
/// whole file, and never anything but a regular file (a FIFO would block the call forever).
fn read(workspace: &Workspace, args: &ReadArgs) -> Result<String, ToolFailure> {
    let path = workspace.inside(&args.path)?;
    let file = workspace.open_regular(&path)?;
    let read_at = |offset: u64, max: usize| {
        file.read_at(offset, max)
            .map_err(|err| ToolFailure::execution(format!("cannot read `{path}`: {err}")))
    };
    let len = usize::try_from(file.len()).unwrap_or(usize::MAX);
    let Some(limit) = args.limit else {
        if len <= READ_CAP_BYTES {
            return Ok(Capture::of(&read_at(0, READ_CAP_BYTES)?, READ_CAP_BYTES).render());
        }
        let head_cap = READ_CAP_BYTES / 2;
        let tail_cap = READ_CAP_BYTES - head_cap;
        let head = read_at(0, head_cap)?;
        let tail = read_at(file.len() - tail_cap as u64, tail_cap)?;
        return Ok(Capture::of_parts(head, tail, len).render());
    };
    let bytes = read_at(0, READ_CAP_BYTES)?;
    let whole = bytes.len() == len;
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let shown: String = lines.iter().take(limit).copied().collect();
    let mut out = Capture::of(shown.as_bytes(), READ_CAP_BYTES).render();
    let more = match (lines.len() > limit, whole) {
        (true, true) => Some(format!(
            "[... {} more lines not shown ...]",
            lines.len() - limit
        )),
        (_, false) => Some(format!(
            "[... more lines not shown: the file is {len} bytes ...]"
        )),
        (false, true) => None,
    };
    if let Some(more) = more {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&more);
    }
    Ok(out)
}

/// `write_file`.
#[derive(Debug, Clone)]
pub struct WriteFile(pub Workspace);

impl WriteFile {
    /// The tool's name, as the model calls it.
    pub const NAME: &'static str = "write_file";
}

/// The path, and the content it will hold for approval (see [`crate::preview`]).
fn describe_write(workspace: &Workspace, arguments: &Value) -> CallSummary {
    let path = string_argument(arguments, "path");
    describe_path(arguments).with_detail(crate::preview::write_preview(
        workspace,
        path,
        string_argument(arguments, "content"),
    ))
}

/// The path, and the diff the edit makes for approval (see [`crate::preview`]).
fn describe_edit(workspace: &Workspace, arguments: &Value) -> CallSummary {
    describe_path(arguments).with_detail(crate::preview::edit_preview(
        workspace,
        string_argument(arguments, "path"),
        string_argument(arguments, "old_text"),
        string_argument(arguments, "new_text"),
        EDIT_LIMIT_BYTES,
    ))
}

#[async_trait]
impl ToolHandler for WriteFile {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: WriteArgs = parse_arguments(call)?;
        let workspace = self.0.clone();
        blocking(move || {
            let path = workspace.inside(&args.path)?;
            workspace.write_atomic(&path, args.content.as_bytes(), Existing::Replace)?;
            Ok(format!("Wrote {} bytes to {path}", args.content.len()))
        })
        .await
    }

    fn describe(&self, arguments: &Value) -> CallSummary {
        describe_write(&self.0, arguments)
    }
}

/// `edit_file`.
#[derive(Debug, Clone)]
pub struct EditFile(pub Workspace);

impl EditFile {
    /// The tool's name, as the model calls it.
    pub const NAME: &'static str = "edit_file";
}

#[async_trait]
impl ToolHandler for EditFile {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: EditArgs = parse_arguments(call)?;
        let workspace = self.0.clone();
        blocking(move || edit(&workspace, &args)).await
    }

    fn describe(&self, arguments: &Value) -> CallSummary {
        describe_edit(&self.0, arguments)
    }
}

fn edit(workspace: &Workspace, args: &EditArgs) -> Result<String, ToolFailure> {
    let path = workspace.inside(&args.path)?;
    let text = workspace.read_to_string(&path, EDIT_LIMIT_BYTES)?;
    match text.matches(&args.old_text).count() {
        0 => Err(ToolFailure::execution(format!(
            "old_text was not found in {path}; read the file and copy the text exactly"
        ))),
        1 => {
            let updated = text.replacen(&args.old_text, &args.new_text, 1);
            workspace.write_atomic(&path, updated.as_bytes(), Existing::Replace)?;
            Ok(format!("Edited {path}: replaced 1 occurrence"))
        }
        n => Err(ToolFailure::execution(format!(
            "old_text occurs {n} times in {path}; include more surrounding text so it occurs exactly once"
        ))),
    }
}
