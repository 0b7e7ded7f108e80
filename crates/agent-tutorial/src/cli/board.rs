//! Chapter 17 in the CLI: the task board a run opens (SQLite in the workspace by default, a
//! PostgreSQL server with `--board`), and `agent-tutorial tasks list|show` on it.

use std::sync::Arc;

use agent_board::sqlite::{BOARD_FILE, STATE_DIR};
use agent_board::{
    BoardConfig, ClaimRecord, ErrorKind, FirstOpen, Holder, Millis, PgBoard, SqliteBoard,
    SystemClock, Task, TaskBoard, TaskId, tools,
};
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

/// `tasks --board list|show`: the board as the person sees it. `url` is `--board`'s value
/// (empty: the workspace's SQLite file, which is never created or imported into here).
pub(super) fn show(workspace: &Workspace, url: &str, view: View) -> CliResult<String> {
    let rt = super::runtime()?;
    let url = if url.is_empty() {
        std::env::var(BOARD_URL_VAR).unwrap_or_default()
    } else {
        url.to_string()
    };
    let board: Arc<dyn TaskBoard> = if url.is_empty() {
        // The folder resolved, the file name joined as is: a link at the file itself is seen
        // (and refused by the open below), never followed.
        let folder = workspace.inside(STATE_DIR).map_err(CliError::runtime)?;
        let missing = match folder.child(BOARD_FILE) {
            Some(path) => workspace.kind(&path).map_err(CliError::runtime)?.is_none(),
            None => false,
        };
        if missing {
            return Ok(format!(
                "no task board yet (a chapter 17 session creates {STATE_DIR}/{BOARD_FILE})\n"
            ));
        }
        // A look only: chapter 12's files are left for the next session to import.
        let board = SqliteBoard::open_with_clock(
            workspace,
            BoardConfig::default(),
            Arc::new(SystemClock),
            FirstOpen::LeaveTasks,
        )
        .map_err(CliError::runtime)?;
        Arc::new(board)
    } else {
        open(workspace, Some(&url), &rt)?
    };
    let now = agent_board::clock::now(&SystemClock);
    rt.block_on(async {
        match view {
            View::List => {
                let tasks = board.list().await.map_err(CliError::runtime)?;
                Ok(list_text(&tasks, now))
            }
            View::Show(id) => {
                let task = board
                    .get(TaskId(id))
                    .await
                    .map_err(|err| match err.kind() {
                        ErrorKind::Refused => CliError::usage(err),
                        _ => CliError::runtime(err),
                    })?;
                let history = board.history(task.id).await.map_err(CliError::runtime)?;
                Ok(show_text(&task, &history, now))
            }
        }
    })
}

/// What `tasks --board` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum View {
    /// Every task.
    List,
    /// One task and its claims.
    Show(i64),
}

/// Whole seconds from `from` to `to` (0 when `to` is earlier).
fn seconds(from: Millis, to: Millis) -> i64 {
    (to.0 - from.0).max(0) / 1000
}

/// The holder's line: owner, lease left, token age.
fn holder_line(holder: &Holder, now: Millis) -> String {
    format!(
        "  held by {}: lease {} s left, token {} s old\n",
        holder.owner,
        seconds(now, holder.expires_at),
        seconds(holder.claimed_at, now)
    )
}

/// One line per task (the lines the model reads), and under a held task its holder.
pub(super) fn list_text(tasks: &[Task], now: Millis) -> String {
    if tasks.is_empty() {
        return "no tasks on the board\n".to_string();
    }
    let mut out = String::new();
    for task in tasks {
        out.push_str(&tools::line(task, Some(tasks)));
        out.push('\n');
        if let Some(holder) = &task.holder {
            out.push_str(&holder_line(holder, now));
        }
    }
    out
}

/// A UTC date and time for board millis.
fn date(at: Millis) -> String {
    super::tasks::readable_time(u64::try_from(at.0 / 1000).unwrap_or_default())
}

/// One task in full, its holder, and every claim made on it, oldest first.
pub(super) fn show_text(task: &Task, history: &[ClaimRecord], now: Millis) -> String {
    let mut out = tools::detail(task);
    out.push('\n');
    if let Some(holder) = &task.holder {
        out.push_str(&holder_line(holder, now));
    }
    if history.is_empty() {
        out.push_str("never claimed\n");
        return out;
    }
    out.push_str("claims:\n");
    for claim in history {
        // The token's head tells claims apart; the whole token stays with its holder.
        let head: String = claim.token.as_str().chars().take(8).collect();
        let end = match &claim.ended {
            Some((end, at)) => format!("{end} {}", date(*at)),
            None => format!("held, lease until {}", date(claim.expires_at)),
        };
        out.push_str(&format!(
            "  {}. {} claimed {} (token {head}…): {end}",
            claim.seq,
            claim.owner,
            date(claim.claimed_at)
        ));
        if let Some(reason) = &claim.reason {
            out.push_str(&format!(" ({reason})"));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_board::{ClaimEnd, ClaimToken, Status};
    use agent_core::AgentId;

    const NOW: Millis = Millis(1_700_000_100_000);

    fn task(id: i64, status: Status, holder: Option<Holder>, blocked_by: Vec<i64>) -> Task {
        Task {
            id: TaskId(id),
            subject: format!("step {id}"),
            description: String::new(),
            status,
            blocked_by: blocked_by.into_iter().map(TaskId).collect(),
            holder,
            result: (status == Status::Completed).then(|| "done".to_string()),
            created_at: Millis(1_700_000_000_000),
            updated_at: Millis(1_700_000_000_000),
        }
    }

    fn bob() -> Holder {
        Holder {
            owner: AgentId::new("bob").unwrap(),
            claimed_at: Millis(NOW.0 - 25_000),
            expires_at: Millis(NOW.0 + 95_000),
        }
    }

    #[test]
    fn a_held_task_shows_its_owner_the_lease_left_and_the_tokens_age() {
        let tasks = [
            task(1, Status::Completed, None, vec![]),
            task(2, Status::InProgress, Some(bob()), vec![1]),
            task(3, Status::Pending, None, vec![2]),
        ];
        assert_eq!(
            list_text(&tasks, NOW),
            "#1 [completed] step 1\n\
             #2 [in_progress] step 2 (held by bob)\n  held by bob: lease 95 s left, token 25 s old\n\
             #3 [pending] step 3 (waits for #2)\n"
        );
    }

    #[test]
    fn show_lists_every_claim_with_how_it_ended() {
        let bob_id = AgentId::new("bob").unwrap();
        let ann = AgentId::new("ann").unwrap();
        let history = [
            ClaimRecord {
                seq: 1,
                task: TaskId(2),
                owner: ann,
                token: ClaimToken("0123456789abcdef0123456789abcdef".into()),
                claimed_at: Millis(1_700_000_000_000),
                expires_at: Millis(1_700_000_120_000),
                ended: Some((ClaimEnd::Expired, Millis(1_700_000_120_000))),
                reason: None,
            },
            ClaimRecord {
                seq: 4,
                task: TaskId(2),
                owner: bob_id,
                token: ClaimToken("fedcba9876543210fedcba9876543210".into()),
                claimed_at: bob().claimed_at,
                expires_at: bob().expires_at,
                ended: None,
                reason: None,
            },
        ];
        assert_eq!(
            show_text(
                &task(2, Status::InProgress, Some(bob()), vec![1]),
                &history,
                NOW
            ),
            "#2 [in_progress] step 2 (held by bob)\n\
             blocked by: #1\n\
             \x20 held by bob: lease 95 s left, token 25 s old\n\
             claims:\n\
             \x20 1. ann claimed 2023-11-14 22:13:20 UTC (token 01234567…): expired 2023-11-14 22:15:20 UTC\n\
             \x20 4. bob claimed 2023-11-14 22:14:35 UTC (token fedcba98…): held, lease until 2023-11-14 22:16:35 UTC\n"
        );
    }
}
