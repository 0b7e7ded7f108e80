//! The board on SQLite: one file, `.agent_tutorial/board.sqlite3`, in the workspace's state
//! folder, shared by every process of the machine that opens it.
//!
//! Opening goes through the workspace boundary: the state folder must resolve inside the
//! workspace, the file (and its `-wal`, `-shm` and `-journal` companions) must be missing or
//! regular files — a symlink, a FIFO or a device is refused before SQLite touches it — and
//! SQLite itself opens with `SQLITE_OPEN_NOFOLLOW`. After the open, the path must still name
//! the file the boundary checked (same device and inode), so a swap in between is caught.
//! A file that is not a database, or fails `PRAGMA quick_check`, is refused as `Corrupt`
//! and left exactly as it was.
//!
//! Every call runs on tokio's blocking pool (`spawn_blocking`): SQLite waits on file locks
//! for up to the busy timeout, which must never stall the async workers.

mod ops;
mod read;
mod schema;

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agent_protocol::AgentId;
use agent_workspace::{FileKind, Inside, PathError, Workspace};
use async_trait::async_trait;
use rusqlite::{Connection, OpenFlags};

use crate::board::{self, TaskBoard};
use crate::clock::{self, Clock, SystemClock};
use crate::error::BoardError;
use crate::import;
use crate::model::{
    BoardConfig, Claim, ClaimEnd, ClaimRecord, ClaimTarget, ClaimToken, ImportedTask, Millis,
    NewTask, Task, TaskId,
};

/// The state folder (shared with the harness's other stores).
pub const STATE_DIR: &str = ".agent_tutorial";
/// The board's file inside it.
pub const BOARD_FILE: &str = "board.sqlite3";
/// The files SQLite keeps beside the database.
const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// The board on one SQLite file. Cheap to clone; clones share one connection (SQLite
/// serializes writers anyway; a second process opens its own).
#[derive(Clone)]
pub struct SqliteBoard {
    conn: Arc<Mutex<Connection>>,
    clock: Arc<dyn Clock>,
    config: BoardConfig,
    path: PathBuf,
}

impl std::fmt::Debug for SqliteBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteBoard")
            .field("path", &self.path)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The board file's path: the state folder resolved by the boundary, the file name joined
/// as is — so a symlink at the file itself is seen (and refused) rather than followed.
fn board_path(workspace: &Workspace) -> Result<Inside, BoardError> {
    let folder = workspace.inside(STATE_DIR)?;
    folder.child(BOARD_FILE).ok_or_else(|| {
        BoardError::Path(PathError::Escape {
            path: format!("{STATE_DIR}/{BOARD_FILE}"),
        })
    })
}

/// Refuses anything but a regular file (or nothing) at `path`.
fn check_kind(workspace: &Workspace, path: &Inside) -> Result<Option<FileKind>, BoardError> {
    match workspace.kind(path)? {
        None => Ok(None),
        Some(FileKind::File) => Ok(Some(FileKind::File)),
        Some(kind) => Err(BoardError::NotAFile {
            path: path.to_string(),
            kind,
        }),
    }
}

/// What opening a board does about chapter 12's `.tasks/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirstOpen {
    /// Import it, once per board (what the harness does).
    ImportChapter12,
    /// Leave it alone and record nothing (tests of the board itself; a later
    /// [`crate::import::import_into`] may still import).
    LeaveTasks,
}

impl SqliteBoard {
    /// Opens (creating if needed) the board of `workspace` on the system clock, importing
    /// chapter 12's tasks the first time. Blocking: call it from a blocking context or before
    /// the runtime starts.
    pub fn open(workspace: &Workspace, config: BoardConfig) -> Result<Self, BoardError> {
        Self::open_with_clock(
            workspace,
            config,
            Arc::new(SystemClock),
            FirstOpen::ImportChapter12,
        )
    }

    /// Opens the board with an injected clock (tests, scripted runs). Blocking, as
    /// [`Self::open`].
    pub fn open_with_clock(
        workspace: &Workspace,
        config: BoardConfig,
        clock: Arc<dyn Clock>,
        first_open: FirstOpen,
    ) -> Result<Self, BoardError> {
        let path = board_path(workspace)?;
        let folder = path.parent().ok_or_else(|| PathError::Escape {
            path: path.to_string(),
        })?;
        workspace.create_dir_all(&folder)?;
        // Resolved again after the folder exists: it must still be inside.
        let path = board_path(workspace)?;
        check_kind(workspace, &path)?;
        for suffix in COMPANIONS {
            let name = format!("{BOARD_FILE}{suffix}");
            if let Some(companion) = path.parent().and_then(|p| p.child(&name)) {
                check_kind(workspace, &companion)?;
            }
        }
        // Created (or opened) through the boundary: O_NOFOLLOW, regular files only. The
        // handle is kept until SQLite has opened the same path, to compare the two.
        let checked = workspace.create_regular(&path)?;
        let checked = checked.metadata().map_err(|source| {
            BoardError::Path(PathError::Io {
                op: agent_workspace::Op::Read,
                path: path.to_string(),
                source,
            })
        })?;
        let absolute = workspace.root().join(path.path());
        let shown = path.to_string();
        let corrupt = |source: rusqlite::Error| {
            if ops::is_busy(&source) {
                BoardError::Busy {
                    waited: config.busy_timeout,
                }
            } else {
                BoardError::Corrupt {
                    path: shown.clone(),
                    source,
                }
            }
        };
        let conn = Connection::open_with_flags(
            &absolute,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NOFOLLOW
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(corrupt)?;
        let now = std::fs::symlink_metadata(&absolute).map_err(|source| {
            BoardError::Path(PathError::Io {
                op: agent_workspace::Op::Read,
                path: shown.clone(),
                source,
            })
        })?;
        if (now.dev(), now.ino()) != (checked.dev(), checked.ino()) {
            return Err(BoardError::Path(PathError::Escape { path: shown }));
        }
        conn.busy_timeout(config.busy_timeout).map_err(corrupt)?;
        Self::prepare(&conn).map_err(corrupt)?;
        let mut conn = conn;
        if first_open == FirstOpen::ImportChapter12 {
            Self::import(workspace, &mut conn, clock::now(&*clock), config);
        }
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
            clock,
            config,
            path: absolute,
        })
    }

    /// WAL, foreign keys, the integrity check and the schema. Any failure here means the file
    /// is not a board we can use; nothing has been written to it then (the schema is created
    /// only after the check passed).
    fn prepare(conn: &Connection) -> rusqlite::Result<()> {
        conn.pragma_update(None, "foreign_keys", true)?;
        let check: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
        if check != "ok" {
            return Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
                Some(check),
            ));
        }
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        if mode != "wal" {
            return Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
                Some(format!("journal mode is {mode}, not wal")),
            ));
        }
        // WAL needs a sync at checkpoints only; a crash may lose the last commits of an
        // instant but never corrupts the file.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        let mut conn_tx = conn.unchecked_transaction()?;
        conn_tx.set_drop_behavior(rusqlite::DropBehavior::Rollback);
        conn_tx.execute_batch(schema::CREATE)?;
        let version: Option<i64> = conn_tx
            .query_row(
                "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .ok();
        match version {
            None => {
                conn_tx.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)",
                    [schema::SCHEMA_VERSION.to_string()],
                )?;
            }
            Some(schema::SCHEMA_VERSION) => {}
            Some(other) => {
                return Err(rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_MISMATCH),
                    Some(format!(
                        "schema version {other}, this build reads {}",
                        schema::SCHEMA_VERSION
                    )),
                ));
            }
        }
        conn_tx.commit()
    }

    /// Chapter 12's tasks, on the first open only (see [`crate::import`]). A failure is a
    /// warning, not a refusal to open: the board works without them, and the next open tries
    /// again (nothing was recorded).
    fn import(workspace: &Workspace, conn: &mut Connection, now: Millis, config: BoardConfig) {
        let found = match import::read(workspace) {
            Ok(found) => found,
            Err(err) => {
                tracing::warn!(
                    "board: cannot read {}/ to import it: {err}",
                    agent_tasks::TASKS_DIR
                );
                return;
            }
        };
        let ids: Vec<TaskId> = found.tasks.iter().map(|t| t.id).collect();
        match ops::import_once(conn, &found.tasks, now) {
            Ok(true) => {
                import::warn_skipped(&found.skipped);
                import::archive(workspace, &ids);
            }
            Ok(false) => {}
            Err(err) => tracing::warn!(
                "board: importing {}/ failed: {}",
                agent_tasks::TASKS_DIR,
                match err {
                    BoardError::Sqlite(err) => ops::db_error(err, config.busy_timeout),
                    other => other,
                }
            ),
        }
    }

    /// The absolute path of the database file.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Runs `f` on the connection on the blocking pool, with the clock read once.
    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection, Millis, BoardConfig) -> Result<T, BoardError> + Send + 'static,
    ) -> Result<T, BoardError> {
        let conn = self.conn.clone();
        let clock = self.clock.clone();
        let config = self.config;
        tokio::task::spawn_blocking(move || {
            let mut conn = conn.lock().unwrap_or_else(PoisonError::into_inner);
            f(&mut conn, clock::now(&*clock), config).map_err(|err| match err {
                BoardError::Sqlite(err) => ops::db_error(err, config.busy_timeout),
                other => other,
            })
        })
        .await
        .map_err(|err| BoardError::Interrupted(err.to_string()))?
    }
}

#[async_trait]
impl TaskBoard for SqliteBoard {
    async fn create(&self, new: NewTask) -> Result<Task, BoardError> {
        let new = board::check_new(new)?;
        self.run(move |conn, now, _| {
            let tx = ops::write_tx(conn)?;
            let id = ops::create(&tx, &new, now)?;
            let task = read::get(&tx, id, now)?;
            tx.commit()?;
            Ok(task)
        })
        .await
    }

    async fn get(&self, id: TaskId) -> Result<Task, BoardError> {
        self.run(move |conn, now, _| {
            let tx = conn.transaction()?;
            read::get(&tx, id, now)
        })
        .await
    }

    async fn list(&self) -> Result<Vec<Task>, BoardError> {
        self.run(move |conn, now, _| {
            let tx = conn.transaction()?;
            read::list(&tx, now)
        })
        .await
    }

    async fn claim(&self, owner: &AgentId, target: ClaimTarget) -> Result<Claim, BoardError> {
        let owner = owner.clone();
        self.run(move |conn, now, config| ops::claim(conn, &owner, target, now, config.lease))
            .await
    }

    async fn renew(
        &self,
        owner: &AgentId,
        task: TaskId,
        token: &ClaimToken,
    ) -> Result<Claim, BoardError> {
        board::check_token(task, token)?;
        let (owner, token) = (owner.clone(), token.clone());
        self.run(move |conn, now, config| ops::renew(conn, &owner, task, &token, now, config.lease))
            .await
    }

    async fn check_held(
        &self,
        owner: &AgentId,
        task: TaskId,
        token: &ClaimToken,
    ) -> Result<Claim, BoardError> {
        board::check_token(task, token)?;
        let (owner, token) = (owner.clone(), token.clone());
        self.run(move |conn, now, _| ops::check_held(conn, &owner, task, &token, now))
            .await
    }

    async fn complete(
        &self,
        owner: &AgentId,
        task: TaskId,
        token: &ClaimToken,
        result: &str,
    ) -> Result<Task, BoardError> {
        let result = board::check_result(result)?;
        board::check_token(task, token)?;
        let (owner, token) = (owner.clone(), token.clone());
        self.run(move |conn, now, _| {
            ops::finish(
                conn,
                &owner,
                task,
                &token,
                ClaimEnd::Completed,
                &result,
                now,
            )
        })
        .await
    }

    async fn release(
        &self,
        owner: &AgentId,
        task: TaskId,
        token: &ClaimToken,
        reason: &str,
    ) -> Result<Task, BoardError> {
        let reason = board::check_reason(reason)?;
        board::check_token(task, token)?;
        let (owner, token) = (owner.clone(), token.clone());
        self.run(move |conn, now, _| {
            ops::finish(conn, &owner, task, &token, ClaimEnd::Released, &reason, now)
        })
        .await
    }

    async fn history(&self, task: TaskId) -> Result<Vec<ClaimRecord>, BoardError> {
        self.run(move |conn, _, _| {
            let tx = conn.transaction()?;
            read::history(&tx, task)
        })
        .await
    }

    async fn import_once(&self, tasks: Vec<ImportedTask>) -> Result<bool, BoardError> {
        self.run(move |conn, now, _| ops::import_once(conn, &tasks, now))
            .await
    }
}
