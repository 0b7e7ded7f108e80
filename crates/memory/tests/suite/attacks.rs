//! Memory files are the harness's own, but they live in a repository someone else may have
//! written: a planted symlink must never be followed out of the workspace.

use std::os::unix::fs::symlink;

use agent_memory::{MemoryRecord, MemoryStore, MemoryType};
use agent_workspace::Workspace;

fn rec(name: &str) -> MemoryRecord {
    MemoryRecord::new(name, MemoryType::Project, "About it", "Body.")
}

#[test]
fn a_lock_file_linked_outside_is_refused_and_the_target_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("bashrc");
    std::fs::write(&target, "# start-up file\n").unwrap();
    std::fs::create_dir(dir.path().join(".memory")).unwrap();
    symlink(&target, dir.path().join(".memory/.lock")).unwrap();
    let store = MemoryStore::open(&Workspace::new(dir.path()).unwrap());
    assert!(store.upsert(vec![rec("tabs")]).is_err());
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "# start-up file\n"
    );
    assert!(!dir.path().join(".memory/MEMORY.md").exists());
}

#[test]
fn a_record_linked_outside_is_skipped_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let store = MemoryStore::open(&Workspace::new(dir.path()).unwrap());
    store.upsert(vec![rec("tabs"), rec("style")]).unwrap();
    let record = std::fs::read_dir(dir.path().join(".memory"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("tabs-")
        })
        .unwrap();
    let secret = outside.path().join("secret.md");
    std::fs::write(
        &secret,
        "---\nname: tabs\ndescription: SECRET\ntype: project\n---\n\nSECRET\n",
    )
    .unwrap();
    std::fs::remove_file(&record).unwrap();
    symlink(&secret, &record).unwrap();
    let loaded = store.load_all().unwrap();
    let names: Vec<String> = loaded.records.iter().map(|r| r.name.clone()).collect();
    assert_eq!(names, ["style"]);
    let skipped: Vec<String> = loaded.skipped.iter().map(|s| s.name.clone()).collect();
    assert_eq!(skipped, ["tabs"]);
    assert!(!format!("{loaded:?}").contains("SECRET"));
}

#[test]
fn a_memory_folder_linked_outside_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    symlink(outside.path(), dir.path().join(".memory")).unwrap();
    let store = MemoryStore::open(&Workspace::new(dir.path()).unwrap());
    assert!(store.upsert(vec![rec("tabs")]).is_err());
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}
