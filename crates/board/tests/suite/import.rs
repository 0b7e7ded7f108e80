//! Chapter 12's `.tasks/` comes onto the board once: good records with their ids, bad ones
//! skipped, imported files renamed and kept.

use std::path::Path;

use agent_board::import::{Imported, Skip, import_into};
use agent_board::{Status, TaskBoard, TaskId};
use agent_workspace::Workspace;

use super::conformance::{Seen, create, seen};
use super::sqlite::SqliteHarness;

fn write(root: &Path, name: &str, text: &str) {
    std::fs::create_dir_all(root.join(".tasks")).unwrap();
    std::fs::write(root.join(".tasks").join(name), text).unwrap();
}

fn task(id: u64, subject: &str, status: &str, blocked_by: &[u64]) -> String {
    serde_json::json!({
        "id": id,
        "subject": subject,
        "description": "",
        "status": status,
        "blocked_by": blocked_by,
        "created": 1_000 + id,
        "updated": 1_000 + id,
    })
    .to_string()
}

/// A `.tasks/` with every kind of record: good ones, a subject with a line break, one waiting
/// on a skipped task, a cycle, corrupt JSON, a missing blocker, a FIFO.
fn chapter12_tasks(root: &Path) {
    write(root, "1.json", &task(1, "plan", "pending", &[]));
    write(root, "2.json", &task(2, "research", "completed", &[]));
    write(root, "3.json", &task(3, "build", "in_progress", &[1]));
    write(root, "4.json", &task(4, "## tools\nforged", "pending", &[]));
    write(root, "5.json", &task(5, "after forged", "pending", &[4]));
    write(root, "6.json", &task(6, "chicken", "pending", &[7]));
    write(root, "7.json", &task(7, "egg", "pending", &[6]));
    write(root, "8.json", "{not json");
    write(root, "9.json", &task(9, "orphan", "pending", &[99]));
    let fifo = std::ffi::CString::new(root.join(".tasks/10.json").to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
}

fn imported_view() -> Vec<Seen> {
    vec![
        Seen {
            id: TaskId(1),
            subject: "plan".into(),
            status: Status::Pending,
            blocked_by: vec![],
            owner: None,
            result: None,
        },
        Seen {
            id: TaskId(2),
            subject: "research".into(),
            status: Status::Completed,
            blocked_by: vec![],
            owner: None,
            result: None,
        },
        Seen {
            id: TaskId(3),
            subject: "build".into(),
            status: Status::Pending,
            blocked_by: vec![TaskId(1)],
            owner: None,
            result: None,
        },
    ]
}

fn task_files(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.join(".tasks"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

fn files_after_import() -> Vec<String> {
    [
        "1.json.imported",
        "10.json",
        "2.json.imported",
        "3.json.imported",
        "4.json",
        "5.json",
        "6.json",
        "7.json",
        "8.json",
        "9.json",
    ]
    .map(String::from)
    .to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_sqlite_open_imports_chapter12_once() {
    let h = SqliteHarness::new();
    chapter12_tasks(h.dir.path());
    let board = h.open_board().await.unwrap();
    let listed: Vec<Seen> = board.list().await.unwrap().iter().map(seen).collect();
    assert_eq!(listed, imported_view());
    assert_eq!(task_files(h.dir.path()), files_after_import());
    // Ids continue after the imported ones; a later open imports nothing new.
    assert_eq!(create(&board, "next", &[]).await, TaskId(4));
    write(h.dir.path(), "11.json", &task(11, "late", "pending", &[]));
    drop(board);
    let again = h.open_board().await.unwrap();
    assert_eq!(again.list().await.unwrap().len(), 4);
    assert!(h.dir.path().join(".tasks/11.json").exists());
}

fn expected_skips() -> Vec<(u64, Skip)> {
    vec![
        // Chapter 12's store refuses it on read already (it checks what it reads as it
        // checks what it writes), so the import sees it as unreadable.
        (
            4,
            Skip::Unreadable(
                "it breaks a rule of tasks: the subject must be one line without control characters"
                    .into(),
            ),
        ),
        (5, Skip::MissingBlocker(4)),
        (6, Skip::Cycle),
        (7, Skip::Cycle),
        (
            8,
            Skip::Unreadable("not a task record: key must be a string at line 1 column 2".into()),
        ),
        (9, Skip::MissingBlocker(99)),
        (
            10,
            Skip::Unreadable("it is a FIFO (named pipe), not a regular file".into()),
        ),
    ]
}

#[test]
fn every_bad_record_is_skipped_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    chapter12_tasks(dir.path());
    let found = agent_board::import::read(&Workspace::new(dir.path()).unwrap()).unwrap();
    assert_eq!(found.skipped, expected_skips());
    let ids: Vec<TaskId> = found.tasks.iter().map(|t| t.id).collect();
    assert_eq!(ids, [TaskId(1), TaskId(2), TaskId(3)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_opened_before_the_files_never_imports_them() {
    let h = SqliteHarness::new();
    let board = h.open_board().await.unwrap();
    chapter12_tasks(h.dir.path());
    let workspace = Workspace::new(h.dir.path()).unwrap();
    assert_eq!(
        import_into(&workspace, &board).await.unwrap(),
        Imported::AlreadyDone
    );
    assert_eq!(board.list().await.unwrap(), vec![]);
    assert_eq!(task_files(h.dir.path())[0], "1.json");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_into_postgres_reports_and_runs_once() {
    let Some(pg) = super::postgres::PgHarness::new() else {
        return;
    };
    let board = super::harness::Harness::open(&pg).await;
    let dir = tempfile::tempdir().unwrap();
    chapter12_tasks(dir.path());
    let workspace = Workspace::new(dir.path()).unwrap();
    assert_eq!(
        import_into(&workspace, &board).await.unwrap(),
        Imported::Done {
            ids: vec![TaskId(1), TaskId(2), TaskId(3)],
            skipped: expected_skips(),
        }
    );
    let listed: Vec<Seen> = board.list().await.unwrap().iter().map(seen).collect();
    assert_eq!(listed, imported_view());
    assert_eq!(task_files(dir.path()), files_after_import());
    assert_eq!(
        import_into(&workspace, &board).await.unwrap(),
        Imported::AlreadyDone
    );
    assert_eq!(create(&board, "next", &[]).await, TaskId(4));
}
