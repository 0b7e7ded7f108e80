//! Chapter 19 in the CLI: the workspace's `.mcp.json`, admitted through the trust store
//! before any server starts ([`open`]), and `agent-tutorial mcp list` (servers, trust, state,
//! tools) without a key.
//!
//! Everything shown that a repository or a server wrote (commands, arguments, tool
//! descriptions, error messages) goes through the sanitizer.

use std::path::PathBuf;
use std::sync::Arc;

use agent_harness::mcp_hub::McpHub;
use agent_mcp::{ConfigFile, ServerConfig};
use agent_policy::escape_controls;
use agent_tools::Workspace;
use agent_trust::{TrustKind, TrustStore, Verdict, WorkspaceTrust};
use clap::{Args, Subcommand};

use super::trust::{HookTrust, StoreTrust, shown};
use super::{CliError, CliResult, open_workspace, runtime};

/// The longest description `mcp list` shows of one tool (characters).
const SHOWN_DESCRIPTION: usize = 100;

/// Reads `.mcp.json` and, when the user trusted that exact content (or `--trust-workspace`),
/// starts its servers before the first turn. Untrusted or changed: nothing starts and `gate`
/// says once how to trust it. A file that cannot be used, or a server that does not start, is
/// said on stderr; the run goes on without it.
pub(super) fn open(
    workspace: &Workspace,
    gate: &StoreTrust,
    trust: HookTrust,
    rt: &tokio::runtime::Runtime,
) -> Arc<McpHub> {
    let config = match ConfigFile::load(workspace) {
        Ok(Some(file)) => {
            let verdict = match trust {
                HookTrust::Bypassed => Verdict::Trusted,
                HookTrust::Required => gate.verdict(TrustKind::McpServers, file.fingerprint()),
            };
            let servers = file.config().servers().len();
            match file.admit(verdict) {
                Ok(config) => Some(config),
                Err(_) => {
                    gate.refused(TrustKind::McpServers, verdict, servers);
                    None
                }
            }
        }
        Ok(None) => None,
        Err(err) => {
            eprintln!(
                "mcp: {}; no MCP server starts",
                escape_controls(&err.to_string())
            );
            None
        }
    };
    let hub = Arc::new(McpHub::new(workspace.clone(), config));
    for failure in rt.block_on(hub.start()) {
        eprintln!("mcp: {}", escape_controls(&failure.error.to_string()));
    }
    hub
}

/// One server as `trust` and `mcp list` show it: its alias and command line, then its
/// working folder and the names of the variables it is given, every text escaped with
/// `shown` (which marks text that held control characters).
pub(super) fn describe_server(
    alias: &str,
    server: &ServerConfig,
    shown: fn(&str) -> String,
) -> String {
    let mut line = server.command.clone();
    for arg in &server.args {
        line.push(' ');
        line.push_str(&super::trust::shell_word(arg));
    }
    let mut out = format!("  {}: {}\n", escape_controls(alias), shown(&line));
    if let Some(cwd) = &server.cwd {
        out.push_str(&format!("      cwd: {}\n", shown(cwd)));
    }
    if !server.env.is_empty() {
        let names: Vec<&str> = server.env.keys().map(String::as_str).collect();
        out.push_str(&format!("      env: {}\n", shown(&names.join(" "))));
    }
    out
}

/// The options of `agent-tutorial mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// The workspace whose `.mcp.json` to read (default: the current directory).
    #[arg(long, value_name = "DIR", global = true)]
    workspace: Option<PathBuf>,
    #[command(subcommand)]
    command: McpCommand,
}

#[derive(Debug, Subcommand)]
enum McpCommand {
    /// Every server of `.mcp.json`: its command, whether it is trusted, and — trusted ones are
    /// started, listed and closed again — its state and tools. Needs no model configuration.
    List,
}

/// `agent-tutorial mcp list [--workspace DIR]`.
pub fn mcp(args: &McpArgs) -> CliResult {
    let workspace = open_workspace(args.workspace.as_deref())?;
    match args.command {
        McpCommand::List => print!("{}", list(&workspace)?),
    }
    Ok(())
}

/// The whole listing.
pub(super) fn list(workspace: &Workspace) -> CliResult<String> {
    let Some(file) = ConfigFile::load(workspace).map_err(CliError::usage)? else {
        return Ok(format!(
            "No {} in this workspace: no MCP server is configured.\n",
            agent_mcp::config::CONFIG_PATH
        ));
    };
    let store = TrustStore::from_env(|k| std::env::var_os(k)).map_err(CliError::usage)?;
    let verdict = store
        .verdict(workspace.root(), TrustKind::McpServers, file.fingerprint())
        .map_err(CliError::usage)?;
    let servers = file.config().servers().clone();
    let trust = match verdict {
        Verdict::Trusted => "trusted",
        Verdict::Untrusted => {
            "not trusted: no server starts (review and trust it with `agent-tutorial trust`)"
        }
        Verdict::Changed => {
            "changed since it was trusted: no server starts (review and trust it again with `agent-tutorial trust`)"
        }
    };
    let mut out = format!(
        "{} ({} servers): {trust}\n",
        agent_mcp::config::CONFIG_PATH,
        servers.len()
    );
    let admitted = file.admit(verdict).ok();
    let hub = admitted.map(|config| McpHub::new(workspace.clone(), Some(config)));
    let rt = runtime()?;
    let (failures, connected) = match &hub {
        Some(hub) => rt.block_on(async {
            let failures = hub.start().await;
            let tools = hub.tools().await;
            hub.close().await;
            (failures, tools)
        }),
        None => (Vec::new(), Default::default()),
    };
    for (alias, server) in &servers {
        out.push_str(&describe_server(alias, server, shown));
        let state = if hub.is_none() {
            "not started".to_string()
        } else if let Some(failure) = failures.iter().find(|f| &f.alias == alias) {
            format!("failed: {}", escape_controls(&failure.error.to_string()))
        } else {
            let tools: &Vec<(String, String)> = connected.get(alias).map_or(&EMPTY, |t| t);
            let mut state = format!("connected, {} tools", tools.len());
            for (name, description) in tools {
                state.push_str(&format!(
                    "\n        {}: {}",
                    escape_controls(name),
                    escape_controls(&first_line(description))
                ));
            }
            state
        };
        out.push_str(&format!("      state: {state}\n"));
    }
    Ok(out)
}

static EMPTY: Vec<(String, String)> = Vec::new();

/// The first line of a description, cut to [`SHOWN_DESCRIPTION`] characters.
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    match line.char_indices().nth(SHOWN_DESCRIPTION) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use super::*;

    /// A repository's server as `trust` and `mcp list` show it: every argument one shell word,
    /// a control or invisible character escaped and marked.
    #[test]
    fn a_server_is_shown_escaped_one_shell_word_per_argument() {
        let server = ServerConfig {
            command: "srv\u{1b}[2J".into(),
            args: vec!["a b".into(), "$(x)".into(), "plain".into()],
            env: BTreeMap::from([("KEY".to_string(), "secret".to_string())]),
            cwd: Some("tools\u{202e}".into()),
            startup_timeout: Duration::from_secs(1),
            tool_timeout: Duration::from_secs(1),
            effects: BTreeMap::new(),
        };
        assert_eq!(
            describe_server("srv", &server, shown),
            "  srv: srv\\e[2J 'a b' '$(x)' plain (escaped: it holds control or invisible characters)\n      cwd: tools\\u{202e} (escaped: it holds control or invisible characters)\n      env: KEY\n"
        );
    }

    #[test]
    fn a_description_is_its_first_line_cut_to_the_bound() {
        assert_eq!(first_line("one\ntwo"), "one");
        let long = "x".repeat(SHOWN_DESCRIPTION + 5);
        assert_eq!(
            first_line(&long),
            format!("{}…", "x".repeat(SHOWN_DESCRIPTION))
        );
    }
}
