//! The state folder helper: create-only writes that cannot both succeed, the lock, and the
//! boundary on every state file.

use std::collections::BTreeMap;
use std::sync::{Arc, Barrier};

use agent_workspace::store::MAX_ENTRIES;
use agent_workspace::{PathError, StateDir, StoreError, Workspace};

fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    (dir, ws)
}

#[test]
fn of_writers_racing_to_create_one_name_exactly_one_succeeds() {
    let (dir, ws) = workspace();
    let state = StateDir::new(&ws, "state");
    state.lock().unwrap();
    let racers = 8;
    let barrier = Arc::new(Barrier::new(racers));
    let outcomes: Vec<String> = (0..racers)
        .map(|n| {
            let (barrier, ws) = (barrier.clone(), ws.clone());
            std::thread::spawn(move || {
                barrier.wait();
                // No lock taken: the guarantee is the no-replace rename itself.
                let path = ws.inside("state/1.json").unwrap();
                match ws.write_atomic(
                    &path,
                    n.to_string().as_bytes(),
                    agent_workspace::Existing::Refuse,
                ) {
                    Ok(()) => format!("won {n}"),
                    Err(PathError::Io { source, .. }) => format!("{:?}", source.kind()),
                    Err(other) => format!("{other}"),
                }
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut winner = String::new();
    for outcome in outcomes {
        if let Some(n) = outcome.strip_prefix("won ") {
            winner = n.to_string();
            *counts.entry("won".into()).or_default() += 1;
        } else {
            *counts.entry(outcome).or_default() += 1;
        }
    }
    assert_eq!(
        counts,
        BTreeMap::from([("AlreadyExists".to_string(), 7), ("won".to_string(), 1)])
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("state/1.json")).unwrap(),
        winner
    );
}

#[test]
fn create_json_refuses_a_taken_name_and_replace_json_replaces_it() {
    let (dir, ws) = workspace();
    let state = StateDir::new(&ws, "state");
    let lock = state.lock().unwrap();
    lock.create_json("a.json", &serde_json::json!({"n": 1}))
        .unwrap();
    let again = lock.create_json("a.json", &serde_json::json!({"n": 2}));
    assert_eq!(
        again.unwrap_err().to_string(),
        "state/a.json exists already"
    );
    lock.replace_json("a.json", &serde_json::json!({"n": 3}))
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("state/a.json")).unwrap(),
        "{\n  \"n\": 3\n}\n"
    );
    let read: Option<serde_json::Value> = lock.read_json("a.json", 1024).unwrap();
    assert_eq!(read, Some(serde_json::json!({"n": 3})));
}

#[test]
fn a_state_folder_that_is_a_symlink_to_outside_is_refused_and_nothing_lands_there() {
    let (dir, ws) = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("state")).unwrap();
    let state = StateDir::new(&ws, "state");
    let refused = state.lock().map(drop).unwrap_err();
    assert_eq!(
        refused.to_string(),
        PathError::Escape {
            path: "state".into()
        }
        .to_string()
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn a_state_file_that_is_a_fifo_a_symlink_a_huge_file_or_not_json_is_refused() {
    let (dir, ws) = workspace();
    let state = StateDir::new(&ws, "state");
    state.lock().unwrap();
    let folder = dir.path().join("state");
    let fifo = std::ffi::CString::new(folder.join("fifo.json").to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    std::fs::write(dir.path().join("secret.json"), "{}").unwrap();
    std::os::unix::fs::symlink("../secret.json", folder.join("link.json")).unwrap();
    std::fs::write(folder.join("huge.json"), vec![b' '; 4096]).unwrap();
    std::fs::write(folder.join("bad.json"), "{not json").unwrap();
    let read = |name: &str| match state.read_json::<serde_json::Value>(name, 1024) {
        Ok(value) => format!("ok {value:?}"),
        Err(StoreError::Path(PathError::NotAFile { kind, .. })) => format!("not a file: {kind}"),
        Err(StoreError::Path(PathError::TooLarge { size, .. })) => format!("too large: {size}"),
        Err(StoreError::Json { .. }) => "not json".to_string(),
        Err(StoreError::Path(PathError::Io { source, .. })) => {
            format!("io: {:?}", source.raw_os_error())
        }
        Err(other) => format!("other: {other}"),
    };
    assert_eq!(
        [
            "fifo.json",
            "link.json",
            "huge.json",
            "bad.json",
            "missing.json"
        ]
        .map(read),
        [
            "not a file: a FIFO (named pipe)".to_string(),
            format!("io: {:?}", Some(libc::ELOOP)),
            "too large: 4096".to_string(),
            "not json".to_string(),
            "ok None".to_string(),
        ]
    );
}

#[test]
fn a_listing_stops_past_its_bound() {
    let (dir, ws) = workspace();
    let state = StateDir::new(&ws, "state");
    state.lock().unwrap();
    for n in 0..MAX_ENTRIES {
        std::fs::File::create(dir.path().join(format!("state/{n}"))).unwrap();
    }
    let error = state.list().unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("state holds more than {MAX_ENTRIES} entries; remove what does not belong there")
    );
}

#[test]
fn the_change_counter_is_read_without_the_lock_by_another_handle() {
    let (dir, ws) = workspace();
    let state = StateDir::new(&ws, "state");
    assert_eq!(state.generation().unwrap(), None);
    let lock = state.lock().unwrap();
    let bumped = [
        lock.bump_generation().unwrap(),
        lock.bump_generation().unwrap(),
    ];
    drop(lock);
    let other = StateDir::new(&Workspace::new(dir.path()).unwrap(), "state");
    assert_eq!((bumped, other.generation().unwrap()), ([1, 2], Some(2)));
}
