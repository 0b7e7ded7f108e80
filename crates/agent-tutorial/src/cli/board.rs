//! Chapter 17 in the CLI: the task board a run opens (SQLite in the workspace by default, a
//! PostgreSQL server with `--board`), and `agent-tutorial tasks list|show` on it.

use std::sync::Arc;

use agent_board::{BoardConfig, PgBoard, SqliteBoard, TaskBoard};
use agent_tools::Workspace;

use super::{CliError, CliResult};

/// The environment variable `--board` falls back to.
pub const BOARD_URL_VAR: &str = "AGENT_TUTORIAL_BOARD";

/// The PostgreSQL schema the board's tables live in (one board per schema).
pub const PG_SCHEMA: &str = "agent_tutorial";

/// Opens the board: the PostgreSQL server at `url`, or the workspace's SQLite file. The
/// PostgreSQL connections are made on `rt`, the runtime the session runs on.
pub(super) fn open(
    workspace: &Workspace,
    url: Option<&str>,
    rt: &tokio::runtime::Runtime,
) -> CliResult<Arc<dyn TaskBoard>> {
    let config = BoardConfig::default();
    let from_env = std::env::var(BOARD_URL_VAR).ok().filter(|u| !u.is_empty());
    match url.or(from_env.as_deref()) {
        None => {
            let board = SqliteBoard::open(workspace, config).map_err(CliError::runtime)?;
            Ok(Arc::new(board))
        }
        Some(url) => {
            // Only a server address: a file path or another scheme is a mistake, said before
            // anything connects (and the address, which may hold a password, is not echoed).
            if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
                return Err(CliError::usage(anyhow::anyhow!(
                    "--board takes a postgres:// or postgresql:// address (without it, the board is the workspace's SQLite file)"
                )));
            }
            let board = rt
                .block_on(PgBoard::connect(url, PG_SCHEMA, config))
                .map_err(CliError::runtime)?;
            Ok(Arc::new(board))
        }
    }
}
