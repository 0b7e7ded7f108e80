//! What chapter 12's store costs at 10 and 1,000 tasks:
//! - `board`: what every request of chapter 12 does for the `## tasks` section (the tasks now,
//!   then the block), with a board that did not change since the last request;
//! - `create`: `task_create`'s store call for task #n, in a store that has listed the board
//!   before (as a running session has).
//!
//! The tasks are written straight to `.tasks/` before each measurement and flushed to disk
//! (`sync`), so only the store's own work is timed; `create` includes its one fsynced write.
//! Setup then waits 150 ms: a board in a session is looked at seconds apart, and the store
//! trusts a folder's time once it has been still for 100 ms (`view.rs`).
//!
//! `cargo bench -p agent-tasks`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agent_tasks::{NewTask, Status, Task, TaskStore, render};
use agent_workspace::Workspace;
use tempfile::TempDir;

fn main() {
    divan::main();
}

const TASKS: &[usize] = &[10, 1000];

/// A workspace whose `.tasks/` holds `n` open tasks, each of the later ones blocked by the one
/// before, and a store over it that has scanned them once.
fn board(n: usize) -> (TempDir, TaskStore) {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join(".tasks");
    std::fs::create_dir(&folder).unwrap();
    for id in 1..=n as u64 {
        let task = Task {
            id,
            subject: format!("Step {id} of the migration"),
            description: "Move the handler, keep the tests green.".into(),
            status: if id % 3 == 0 {
                Status::InProgress
            } else {
                Status::Pending
            },
            owner: None,
            blocked_by: if id > 1 { vec![id - 1] } else { Vec::new() },
            created: 1_700_000_000,
            updated: 1_700_000_000,
        };
        let text = serde_json::to_string_pretty(&task).unwrap();
        std::fs::write(folder.join(format!("{id}.json")), text).unwrap();
    }
    // The lock file an earlier change left (a session that changed its board once has one).
    std::fs::write(folder.join(".lock"), "").unwrap();
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
    std::thread::sleep(std::time::Duration::from_millis(150));
    let store = TaskStore::open(&Workspace::new(dir.path()).unwrap());
    assert_eq!(store.snapshot().unwrap().tasks.len(), n);
    (dir, store)
}

#[divan::bench(args = TASKS, sample_count = 50)]
fn board_request(bencher: divan::Bencher, n: usize) {
    let (_dir, store) = board(n);
    bencher.bench_local(|| {
        let snapshot = store.snapshot().unwrap();
        render::prompt_block(&snapshot.tasks)
    });
}

#[divan::bench(args = TASKS, sample_count = 20, sample_size = 1)]
fn create(bencher: divan::Bencher, n: usize) {
    bencher
        .with_inputs(|| board(n - 1))
        .bench_local_values(|(dir, store)| {
            let task = store
                .create(NewTask {
                    subject: "One more".into(),
                    description: String::new(),
                    blocked_by: vec![1],
                })
                .unwrap();
            assert_eq!(task.id, n as u64);
            (dir, store)
        });
}
