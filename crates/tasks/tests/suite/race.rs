//! Two writers with their own workspace handles (as two processes would have) share the
//! file lock: nothing is lost and no id is handed out twice.

use std::collections::BTreeSet;

use agent_tasks::{NewTask, TaskStore};
use agent_workspace::Workspace;

#[test]
fn two_writers_creating_fifty_tasks_each_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let writers: Vec<_> = (0..2)
        .map(|writer| {
            let root = dir.path().to_path_buf();
            std::thread::spawn(move || {
                // Each thread opens the workspace itself: its own directory handle and its
                // own lock file descriptor, so only the file lock keeps them apart.
                let store = TaskStore::open(&Workspace::new(&root).unwrap());
                (0..50)
                    .map(|i| {
                        store
                            .create(NewTask {
                                subject: format!("writer {writer} task {i}"),
                                ..NewTask::default()
                            })
                            .unwrap()
                            .id
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let ids: Vec<u64> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    let distinct: BTreeSet<u64> = ids.iter().copied().collect();
    assert_eq!(distinct, (1..=100).collect::<BTreeSet<u64>>());
    let tasks = TaskStore::open(&Workspace::new(dir.path()).unwrap())
        .load()
        .unwrap();
    let subjects: BTreeSet<String> = tasks.values().map(|t| t.subject.clone()).collect();
    let expected: BTreeSet<String> = (0..2)
        .flat_map(|w| (0..50).map(move |i| format!("writer {w} task {i}")))
        .collect();
    assert_eq!(subjects, expected);
}

#[test]
fn a_change_by_another_store_is_seen_by_a_cached_one() {
    use agent_tasks::{Status, TaskChange};
    let dir = tempfile::tempdir().unwrap();
    let open = || TaskStore::open(&Workspace::new(dir.path()).unwrap());
    let (mine, theirs) = (open(), open());
    let id = mine
        .create(NewTask {
            subject: "shared".into(),
            ..NewTask::default()
        })
        .unwrap()
        .id;
    assert_eq!(mine.get(id).unwrap().status, Status::Pending);
    for status in [Status::InProgress, Status::Pending, Status::Completed] {
        theirs
            .update(
                id,
                TaskChange {
                    status: Some(status),
                    ..TaskChange::default()
                },
            )
            .unwrap();
        assert_eq!(mine.get(id).unwrap().status, status);
    }
}
