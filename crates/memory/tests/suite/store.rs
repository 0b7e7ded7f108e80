use std::collections::BTreeMap;

use agent_memory::{Fault, Loaded, MemoryError, MemoryStore, Skipped};
use agent_workspace::Workspace;

use super::{rec, setup};

/// Every file in `.memory` and `.memory/archive` (as `archive/<name>`), name → content: the
/// whole on-disk state, to compare before/after.
fn snapshot(dir: &std::path::Path) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    for (folder, prefix) in [(".memory", ""), (".memory/archive", "archive/")] {
        let Ok(rd) = std::fs::read_dir(dir.join(folder)) else {
            continue;
        };
        for e in rd.map(Result::unwrap) {
            if e.file_name() == ".lock" || e.file_type().unwrap().is_dir() {
                continue;
            }
            files.insert(
                format!("{prefix}{}", e.file_name().to_string_lossy()),
                std::fs::read_to_string(e.path()).unwrap(),
            );
        }
    }
    files
}

/// The file the index lists for `name`.
fn file_of(dir: &std::path::Path, name: &str) -> String {
    let index = std::fs::read_to_string(dir.join(".memory/MEMORY.md")).unwrap();
    let prefix = format!("- [{name}](");
    let line = index.lines().find(|l| l.starts_with(&prefix)).unwrap();
    line[prefix.len()..].split(')').next().unwrap().to_string()
}

#[test]
fn records_round_trip_through_files_and_the_index() {
    let (dir, store) = setup();
    assert_eq!(store.load().unwrap(), vec![]);
    store.upsert(vec![rec("alpha"), rec("beta")]).unwrap();
    assert_eq!(store.load().unwrap(), vec![rec("alpha"), rec("beta")]);
    let files = snapshot(dir.path());
    let index = &files["MEMORY.md"];
    let lines: Vec<&str> = index.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0].starts_with("- [alpha](alpha-") && lines[0].ends_with(".md) - About alpha"),
        "{index}"
    );
    let alpha_file = lines[0]
        .split('(')
        .nth(1)
        .unwrap()
        .split(')')
        .next()
        .unwrap();
    assert_eq!(
        files[alpha_file],
        "---\nname: alpha\ndescription: About alpha\ntype: project\n---\n\nBody of alpha.\n"
    );
    // Upserting a name replaces the record and archives its old file.
    let mut changed = rec("alpha");
    changed.body = "New body.".into();
    store.upsert(vec![changed.clone()]).unwrap();
    assert_eq!(store.load().unwrap(), vec![rec("beta"), changed]);
    let files = snapshot(dir.path());
    assert_eq!(files.len(), 4);
    assert_eq!(
        files[&format!("archive/{alpha_file}")],
        "---\nname: alpha\ndescription: About alpha\ntype: project\n---\n\nBody of alpha.\n"
    );
    store.forget("beta").unwrap();
    assert_eq!(store.load().unwrap().len(), 1);
    assert!(matches!(
        store.forget("beta"),
        Err(MemoryError::NotFound(_))
    ));
}

#[test]
fn bounds_are_checked_on_write_and_on_read() {
    let (dir, store) = setup();
    store.upsert(vec![rec("alpha")]).unwrap();
    let before = snapshot(dir.path());
    let mut big = rec("big");
    big.body = "line\n".repeat(250);
    let err = store.upsert(vec![big]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "record `big` is too large: 256 lines, 1306 bytes (limit 200 lines, 4096 bytes)"
    );
    assert_eq!(snapshot(dir.path()), before);

    // A file grown too large by hand is refused when read: skipped and reported, not fatal.
    let file = before
        .keys()
        .find(|k| k.starts_with("alpha-"))
        .unwrap()
        .clone();
    std::fs::write(dir.path().join(".memory").join(&file), "x".repeat(5000)).unwrap();
    assert_eq!(
        store.load_all().unwrap(),
        Loaded {
            records: vec![],
            skipped: vec![Skipped {
                name: "alpha".into(),
                file: file.clone(),
                reason: format!(
                    "{file} is too large: 1 lines, 5000 bytes (limit 200 lines, 4096 bytes)"
                ),
            }],
        }
    );
}

#[test]
fn a_write_that_fails_at_any_step_before_the_commit_leaves_the_old_set() {
    for fault in [
        Fault::WriteRecord,
        Fault::ArchiveOld,
        Fault::WriteIndex,
        Fault::RenameIndex,
    ] {
        let (dir, store) = setup();
        store.upsert(vec![rec("alpha"), rec("beta")]).unwrap();
        let before = snapshot(dir.path());
        store.inject_fault(Some(fault));
        let err = store.upsert(vec![rec("gamma"), rec("alpha")]).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(".memory: injected fault at {fault:?}")
        );
        assert_eq!(snapshot(dir.path()), before, "{fault:?}");
        // A deletion (which writes no record file) fails the same way at its own steps: the
        // record stays listed and its file in place.
        if fault != Fault::WriteRecord {
            let err = store.forget("beta").unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(".memory: injected fault at {fault:?}")
            );
            assert_eq!(snapshot(dir.path()), before, "{fault:?}");
        }
        store.inject_fault(None);
        assert_eq!(store.load().unwrap(), vec![rec("alpha"), rec("beta")]);
    }
}

#[test]
fn a_failure_after_the_commit_keeps_the_new_set() {
    let (dir, store) = setup();
    store.upsert(vec![rec("alpha")]).unwrap();
    let old = file_of(dir.path(), "alpha");
    store.inject_fault(Some(Fault::DeleteOld));
    store.upsert(vec![rec("alpha"), rec("beta")]).unwrap();
    // The old alpha file is an orphan (on disk, not in the set), already archived.
    let files = snapshot(dir.path());
    assert_eq!(files.len(), 5);
    assert_eq!(files[&old], files[&format!("archive/{old}")]);
    // The next access removes the orphan rather than archiving it a second time.
    assert_eq!(store.load().unwrap(), vec![rec("alpha"), rec("beta")]);
    let files = snapshot(dir.path());
    assert_eq!(files.len(), 4);
    assert!(!files.contains_key(&old));
    assert!(files.contains_key(&format!("archive/{old}")));
}

#[test]
fn orphan_files_are_not_part_of_the_set() {
    let (dir, store) = setup();
    store.upsert(vec![rec("alpha")]).unwrap();
    std::fs::write(
        dir.path().join(".memory/ghost-1234.md"),
        rec("ghost").to_file_text().unwrap(),
    )
    .unwrap();
    assert_eq!(store.load().unwrap(), vec![rec("alpha")]);
}

#[test]
fn replace_aborts_when_the_set_changed() {
    let (dir, store) = setup();
    // Four records, so that removing two stays within the half a consolidation may remove.
    store
        .upsert(vec![rec("alpha"), rec("beta"), rec("delta")])
        .unwrap();
    let seen = store.version().unwrap();
    store.upsert(vec![rec("gamma")]).unwrap();
    let before = snapshot(dir.path());
    let err = store
        .replace(&["alpha".into(), "beta".into()], vec![rec("merged")], &seen)
        .unwrap_err();
    assert!(matches!(err, MemoryError::Changed));
    assert_eq!(snapshot(dir.path()), before);
    let now = store.version().unwrap();
    store
        .replace(&["alpha".into(), "beta".into()], vec![rec("merged")], &now)
        .unwrap();
    assert_eq!(
        store.load().unwrap(),
        vec![rec("delta"), rec("gamma"), rec("merged")]
    );
}

#[test]
fn invalid_records_are_rejected_before_anything_is_written() {
    let (dir, store) = setup();
    let err = store
        .upsert(vec![rec("ok"), rec("Not A Slug")])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Not A Slug is not valid: name `Not A Slug` must be a slug (a-z, 0-9, -, _; at most 64 characters)"
    );
    assert!(snapshot(dir.path()).is_empty());
}

#[test]
fn a_memory_folder_linked_outside_is_refused() {
    let (dir, store) = setup();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join(".memory")).unwrap();
    let err = store.upsert(vec![rec("alpha")]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the memory folder is not usable: `.memory` resolves outside the workspace"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn concurrent_writers_lose_nothing() {
    let (dir, _store) = setup();
    let ws = Workspace::new(dir.path()).unwrap();
    std::thread::scope(|scope| {
        for t in 0..4 {
            let ws = ws.clone();
            scope.spawn(move || {
                // Separate stores: only the file lock serialises them, as between processes.
                let store = MemoryStore::open(&ws);
                for i in 0..5 {
                    store.upsert(vec![rec(&format!("t{t}-{i}"))]).unwrap();
                }
            });
        }
    });
    let store = MemoryStore::open(&ws);
    assert_eq!(store.load().unwrap().len(), 20);
}

#[test]
fn forgetting_in_a_workspace_without_memory_creates_nothing() {
    let (dir, store) = setup();
    assert_eq!(
        store.forget("nope").unwrap_err().to_string(),
        MemoryError::NotFound("nope".into()).to_string()
    );
    let entries: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries, Vec::<String>::new());
}
