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

#[test]
fn planted_records_with_hidden_characters_are_skipped_on_load_and_refused_on_write() {
    let dir = tempfile::tempdir().unwrap();
    let memory = dir.path().join(".memory");
    std::fs::create_dir(&memory).unwrap();
    let record = |name: &str, description: &str, body: &str| {
        format!("---\nname: {name}\ndescription: {description}\ntype: project\n---\n\n{body}\n")
    };
    std::fs::write(
        memory.join("fine-1.md"),
        record("fine", "Plain", "Body.\n\tIndented."),
    )
    .unwrap();
    std::fs::write(
        memory.join("osc-1.md"),
        record("osc", "Copies", "\u{1b}]52;c;aGVsbG8=\u{7}"),
    )
    .unwrap();
    std::fs::write(
        memory.join("bidi-1.md"),
        record("bidi", "evil\u{202E}txt", "Body."),
    )
    .unwrap();
    std::fs::write(
        memory.join("MEMORY.md"),
        "- [fine](fine-1.md) - Plain\n- [osc](osc-1.md) - Copies\n- [bidi](bidi-1.md) - evil\n",
    )
    .unwrap();
    let store = MemoryStore::open(&Workspace::new(dir.path()).unwrap());
    let loaded = store.load_all().unwrap();
    let names: Vec<String> = loaded.records.iter().map(|r| r.name.clone()).collect();
    let skipped: Vec<String> = loaded.skipped.iter().map(|s| s.reason.clone()).collect();
    assert_eq!(
        (names, skipped),
        (
            vec!["fine".to_string()],
            vec![
                "osc-1.md is not valid: record `osc`: the body holds the hidden character U+001B"
                    .to_string(),
                "bidi-1.md is not valid: record `bidi`: the description holds the hidden character U+202E"
                    .to_string(),
            ]
        )
    );
    let refused = store
        .upsert(vec![MemoryRecord::new(
            "new",
            MemoryType::User,
            "Likes\u{FE0F}",
            "x",
        )])
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "new is not valid: record `new`: the description holds the hidden character U+FE0F"
    );
}
