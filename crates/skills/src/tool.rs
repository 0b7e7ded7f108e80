//! `load_skill{name}`: the body of a catalogued skill.

use std::sync::Arc;

use agent_core::tool::{parse_arguments, string_argument};
use agent_core::{CallSummary, PreparedCall, ToolEffect, ToolFailure, ToolHandler, ToolSpec};
use agent_workspace::Workspace;

use crate::catalog::MAX_SKILL_BYTES;
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::SkillCatalog;

/// The `load_skill` tool as the model sees it: one required `name`, read-only.
pub fn spec() -> ToolSpec {
    ToolSpec::new(
        LoadSkill::NAME,
        "Load the full instructions of a skill listed in the skills catalog. Do this before following a skill.",
        ToolEffect::Read,
        json!({
            "type": "object",
            "properties": {"name": {"type": "string", "minLength": 1, "description": "The skill's name as listed."}},
            "required": ["name"]
        }),
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    name: String,
}

/// Looks names up in the build-time catalog and re-checks the file against the workspace
/// (the folder could have been swapped for a symlink since the scan).
#[derive(Debug, Clone)]
pub struct LoadSkill {
    /// The catalog scanned when the agent was built; only its skills can be loaded.
    pub catalog: Arc<SkillCatalog>,
    /// The boundary every body is read through again.
    pub workspace: Workspace,
}

impl LoadSkill {
    /// The tool's name, as the model calls it.
    pub const NAME: &'static str = "load_skill";
}

#[async_trait]
impl ToolHandler for LoadSkill {
    async fn handle(&self, call: &PreparedCall) -> Result<String, ToolFailure> {
        let args: Args = parse_arguments(call)?;
        let entry = self.catalog.get(&args.name).ok_or_else(|| {
            let names: Vec<&str> = self
                .catalog
                .entries()
                .iter()
                .map(|e| e.name.as_str())
                .collect();
            ToolFailure::execution(format!(
                "no skill named `{}`; available: {}",
                args.name,
                if names.is_empty() {
                    "(none)".to_string()
                } else {
                    names.join(", ")
                }
            ))
        })?;
        // Checked again: the folder may have become a link to outside since the scan.
        let path = self.workspace.inside(&entry.path.to_string())?;
        let text = self
            .workspace
            .read_to_string(&path, MAX_SKILL_BYTES)
            .map_err(|err| {
                ToolFailure::execution(format!("cannot read skill `{}`: {err}", args.name))
            })?;
        // The body must be the one scanned (and trusted) when the agent was built.
        if agent_trust::sha256_hex(text.as_bytes()) != entry.sha256 {
            return Err(ToolFailure::execution(format!(
                "skill `{}` changed since the agent started; it is loaded only as it was trusted (restart, and run `agent-tutorial trust` if asked)",
                args.name
            )));
        }
        let (_, body) = agent_frontmatter::split(&text)
            .map_err(|err| ToolFailure::execution(format!("skill `{}`: {err}", args.name)))?;
        Ok(body.trim_start_matches('\n').to_string())
    }

    /// The skill's name. It names no path to check: only catalogued `SKILL.md` files are
    /// read, each through the workspace boundary.
    fn describe(&self, arguments: &Value) -> CallSummary {
        CallSummary::text(string_argument(arguments, "name"))
    }
}
