//! `glob{pattern}`: find files in the workspace by pattern, sorted.

use std::path::{Component, Path};

use agent_core::tool::{parse_arguments, string_argument};
use agent_core::{
    CallSummary, FailureCode, PreparedCall, ToolEffect, ToolFailure, ToolHandler, ToolSpec,
};
use async_trait::async_trait;
use globset::GlobBuilder;
use serde::Deserialize;
use serde_json::{Value, json};

use agent_workspace::{FileKind, Inside};

use crate::Workspace;

/// At most this many paths are returned; the rest is counted in a marker line.
pub const MAX_MATCHES: usize = 500;

/// At most this many entries are looked at, so a huge tree bounds the call's time too.
pub const MAX_VISITED: usize = 200_000;

/// `glob` as the model sees it.
pub fn spec() -> ToolSpec {
    ToolSpec::new(
        Glob::NAME,
        "List files in the workspace matching a glob pattern (`*` stays within a folder, `**` crosses folders), as sorted workspace-relative paths.",
        ToolEffect::Read,
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "For example `src/**/*.rs` or `*.md`.", "minLength": 1}
            },
            "required": ["pattern"]
        }),
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    pattern: String,
}

/// `glob`: the workspace's paths matching a pattern, sorted; symlinks are listed, never entered.
#[derive(Debug, Clone)]
pub struct Glob(pub Workspace);

impl Glob {
    /// The tool's name, as the model calls it.
    pub const NAME: &'static str = "glob";
}

#[async_trait]
impl ToolHandler for Glob {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: Args = parse_arguments(call)?;
        let workspace = self.0.clone();
        tokio::task::spawn_blocking(move || glob(&workspace, &args.pattern))
            .await
            .map_err(ToolFailure::execution)?
    }

    /// The pattern. It names no file to check: `glob` lists names and reads no content.
    fn describe(&self, arguments: &Value) -> CallSummary {
        CallSummary::text(string_argument(arguments, "pattern"))
    }
}

/// The sorted matches of `pattern`, one per line.
pub fn glob(workspace: &Workspace, pattern: &str) -> Result<String, ToolFailure> {
    let escapes = Path::new(pattern).components().any(|c| {
        matches!(
            c,
            Component::ParentDir | Component::RootDir | Component::Prefix(_)
        )
    });
    if escapes {
        return Err(ToolFailure::new(
            FailureCode::PathEscape,
            format!("pattern `{pattern}` must be relative to the workspace and must not use `..`"),
        ));
    }
    let matcher = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|err| {
            ToolFailure::new(FailureCode::InvalidArguments, format!("bad pattern: {err}"))
        })?
        .compile_matcher();
    let mut matches = Vec::new();
    let mut visited = 0;
    // Through the boundary, and symlinks are listed but never entered, so a link to outside
    // cannot leak paths from there.
    let root = workspace.inside(".")?;
    let mut folders: Vec<Inside> = vec![root];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = workspace.list_dir(&folder) else {
            continue;
        };
        for entry in entries {
            visited += 1;
            if visited > MAX_VISITED {
                return Err(ToolFailure::execution(format!(
                    "the workspace has more than {MAX_VISITED} entries; use a narrower pattern or bash"
                )));
            }
            let Some(path) = folder.child(&entry.name) else {
                continue;
            };
            match entry.kind {
                FileKind::Directory if entry.name != ".git" => folders.push(path),
                FileKind::Directory => {}
                _ => {
                    let relative = path.to_string();
                    if matcher.is_match(&relative) {
                        matches.push(relative);
                    }
                }
            }
        }
    }
    matches.sort();
    if matches.is_empty() {
        return Ok("(no matches)".to_string());
    }
    let total = matches.len();
    matches.truncate(MAX_MATCHES);
    let mut out = matches.join("\n");
    if total > MAX_MATCHES {
        out.push_str(&format!(
            "\n[... {} more matches not shown ...]",
            total - MAX_MATCHES
        ));
    }
    Ok(out)
}
