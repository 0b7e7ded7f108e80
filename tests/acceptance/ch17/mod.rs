//! Chapter 17: the task board. `leases`: the six tools (create_task the lead's only), a claim
//! renewed by every request and call of its holder (a long turn keeps it), a write made after
//! the claim was lost refused with the file unchanged; `autonomy`: idle teammates take every
//! ready task once, never before what it waits for; `cli`: `tasks --board`.

pub(crate) mod autonomy;
mod cli;
mod leases;

use std::path::Path;
use std::sync::Arc;

use agent_board::{BoardConfig, FirstOpen, ManualClock, Millis, SqliteBoard};
use agent_tools::Workspace;

/// The board's clock starts here (2023-11-14 22:13:20 UTC).
pub const START: Millis = Millis(1_700_000_000_000);

/// The workspace's SQLite board on a manual clock.
pub fn board(dir: &Path, clock: &Arc<ManualClock>) -> Arc<SqliteBoard> {
    let workspace = Workspace::new(dir).unwrap();
    Arc::new(
        SqliteBoard::open_with_clock(
            &workspace,
            BoardConfig::default(),
            clock.clone(),
            FirstOpen::ImportChapter12,
        )
        .unwrap(),
    )
}
