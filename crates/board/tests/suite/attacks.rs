//! The board file under attack: a repository may put anything at
//! `.agent_tutorial/board.sqlite3`. Each case is refused with a clear typed error, without
//! blocking, and leaves every byte where it was.

use std::os::unix::fs::symlink;
use std::path::Path;

use agent_board::{BoardError, TaskBoard};

use super::conformance::create;
use super::sqlite::SqliteHarness;

fn state(h: &SqliteHarness) -> std::path::PathBuf {
    let state = h.dir.path().join(".agent_tutorial");
    std::fs::create_dir_all(&state).unwrap();
    state
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[tokio::test]
async fn an_outward_symlink_as_the_board_file_is_refused() {
    let h = SqliteHarness::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("victim.sqlite3");
    std::fs::write(&target, b"precious").unwrap();
    symlink(&target, state(&h).join("board.sqlite3")).unwrap();
    let err = h.open_board().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the board file `.agent_tutorial/board.sqlite3` is a symbolic link, not a regular file"
    );
    assert_eq!(std::fs::read(&target).unwrap(), b"precious");
}

#[tokio::test]
async fn a_symlink_inside_the_workspace_is_refused_too() {
    let h = SqliteHarness::new();
    std::fs::write(h.dir.path().join("notes.txt"), b"mine").unwrap();
    symlink("../notes.txt", state(&h).join("board.sqlite3")).unwrap();
    let err = h.open_board().await.unwrap_err();
    assert!(
        matches!(
            &err,
            BoardError::NotAFile {
                kind: agent_workspace::FileKind::Symlink,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "the board file `.agent_tutorial/board.sqlite3` is a symbolic link, not a regular file"
    );
    assert_eq!(
        std::fs::read(h.dir.path().join("notes.txt")).unwrap(),
        b"mine"
    );
}

#[tokio::test]
async fn an_outward_state_folder_is_refused() {
    let h = SqliteHarness::new();
    let outside = tempfile::tempdir().unwrap();
    symlink(outside.path(), h.dir.path().join(".agent_tutorial")).unwrap();
    let err = h.open_board().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the board's state folder is not usable: `.agent_tutorial` resolves outside the workspace"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[tokio::test]
async fn a_fifo_as_the_board_file_is_refused_without_blocking() {
    let h = SqliteHarness::new();
    mkfifo(&state(&h).join("board.sqlite3"));
    let err = h.open_board().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the board file `.agent_tutorial/board.sqlite3` is a FIFO (named pipe), not a regular file"
    );
}

#[tokio::test]
async fn a_symlinked_wal_file_is_refused() {
    let h = SqliteHarness::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("wal");
    symlink(&target, state(&h).join("board.sqlite3-wal")).unwrap();
    let err = h.open_board().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the board file `.agent_tutorial/board.sqlite3-wal` is a symbolic link, not a regular file"
    );
    assert!(!target.exists());
}

#[tokio::test]
async fn a_file_that_is_not_a_database_is_refused_and_kept() {
    let h = SqliteHarness::new();
    let path = state(&h).join("board.sqlite3");
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&path, &garbage).unwrap();
    let err = h.open_board().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the board file `.agent_tutorial/board.sqlite3` is not a usable SQLite database: file is not a database"
    );
    assert_eq!(std::fs::read(&path).unwrap(), garbage);
}

#[tokio::test]
async fn a_truncated_board_is_refused_and_kept() {
    let h = SqliteHarness::new();
    {
        let board = h.open_board().await.unwrap();
        for n in 0..200 {
            create(&board, &format!("task {n} {}", "x".repeat(150)), &[]).await;
        }
    }
    let path = h.dir.path().join(".agent_tutorial/board.sqlite3");
    // Closing the last connection checkpointed the WAL into the file; cut it in half.
    assert!(
        !h.dir
            .path()
            .join(".agent_tutorial/board.sqlite3-wal")
            .exists()
    );
    let whole = std::fs::read(&path).unwrap();
    let half = whole[..whole.len() / 2].to_vec();
    std::fs::write(&path, &half).unwrap();
    let err = h.open_board().await.unwrap_err();
    assert!(matches!(err, BoardError::Corrupt { .. }), "{err:?}");
    assert_eq!(std::fs::read(&path).unwrap(), half);
}

#[tokio::test]
async fn a_board_survives_being_reopened() {
    let h = SqliteHarness::new();
    let first = h.open_board().await.unwrap();
    let id = create(&first, "kept", &[]).await;
    drop(first);
    let again = h.open_board().await.unwrap();
    assert_eq!(again.get(id).await.unwrap().subject, "kept");
}
