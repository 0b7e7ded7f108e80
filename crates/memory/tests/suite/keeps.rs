//! "Memory keeps everything": duplicates resolved, deletions archived, bad consolidations
//! refused, `forget` agreeing with `list`, corrupt records skipped, crash leftovers cleaned.

use std::collections::BTreeMap;
use std::path::Path;

use agent_memory::{Loaded, MemoryError, MemoryRecord, MemoryStore, MemoryType, Skipped};
use agent_workspace::Workspace;

fn rec(name: &str) -> MemoryRecord {
    MemoryRecord::new(
        name,
        MemoryType::Project,
        &format!("About {name}"),
        &format!("Body of {name}."),
    )
}

fn text(name: &str) -> String {
    format!("---\nname: {name}\ndescription: About {name}\ntype: project\n---\n\nBody of {name}.\n")
}

fn setup() -> (tempfile::TempDir, MemoryStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = MemoryStore::open(&Workspace::new(dir.path()).unwrap());
    (dir, store)
}

fn names(store: &MemoryStore) -> Vec<String> {
    store.load().unwrap().into_iter().map(|r| r.name).collect()
}

/// The file the index lists for `name`.
fn file_of(dir: &Path, name: &str) -> String {
    let index = std::fs::read_to_string(dir.join(".memory/MEMORY.md")).unwrap();
    let prefix = format!("- [{name}](");
    let line = index.lines().find(|l| l.starts_with(&prefix)).unwrap();
    line[prefix.len()..].split(')').next().unwrap().to_string()
}

/// Every file under `folder` (relative to the workspace), name → content.
fn files_in(dir: &Path, folder: &str) -> BTreeMap<String, String> {
    let Ok(rd) = std::fs::read_dir(dir.join(folder)) else {
        return BTreeMap::new();
    };
    rd.map(Result::unwrap)
        .filter(|e| e.file_type().unwrap().is_file() && e.file_name() != ".lock")
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read_to_string(e.path()).unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_name_given_twice_in_one_batch_is_stored_once_and_the_last_wins() {
    let (dir, store) = setup();
    let mut second = rec("alpha");
    second.body = "Second body.".into();
    store
        .upsert(vec![rec("alpha"), rec("beta"), second.clone()])
        .unwrap();
    assert_eq!(store.load().unwrap(), vec![rec("beta"), second]);
    let index = std::fs::read_to_string(dir.path().join(".memory/MEMORY.md")).unwrap();
    assert_eq!(index.lines().count(), 2, "{index}");
    // Two record files, the index, nothing archived: the first alpha never reached the disk.
    assert_eq!(files_in(dir.path(), ".memory").len(), 3);
    assert!(files_in(dir.path(), ".memory/archive").is_empty());
}

#[test]
fn forget_archives_the_file_under_a_unique_name() {
    let (dir, store) = setup();
    store.upsert(vec![rec("alpha"), rec("beta")]).unwrap();
    let file = file_of(dir.path(), "alpha");
    // Something already sits at the archive name: it is kept and the record gets `.1`.
    std::fs::create_dir_all(dir.path().join(".memory/archive")).unwrap();
    std::fs::write(dir.path().join(".memory/archive").join(&file), "older").unwrap();
    let stem = file.strip_suffix(".md").unwrap();
    assert_eq!(
        store.forget("alpha").unwrap(),
        vec![format!("archive/{stem}.1.md")]
    );
    assert_eq!(names(&store), vec!["beta"]);
    assert_eq!(
        files_in(dir.path(), ".memory/archive"),
        BTreeMap::from([
            (file.clone(), "older".to_string()),
            (format!("{stem}.1.md"), text("alpha")),
        ])
    );
    assert!(!dir.path().join(".memory").join(&file).exists());
}

#[test]
fn a_consolidation_archives_its_sources() {
    let (dir, store) = setup();
    store
        .upsert(vec![rec("alpha"), rec("beta"), rec("gamma"), rec("delta")])
        .unwrap();
    let (alpha, beta) = (file_of(dir.path(), "alpha"), file_of(dir.path(), "beta"));
    let version = store.version().unwrap();
    store
        .replace(
            &["alpha".into(), "beta".into()],
            vec![rec("merged")],
            &version,
        )
        .unwrap();
    assert_eq!(names(&store), vec!["gamma", "delta", "merged"]);
    assert_eq!(
        files_in(dir.path(), ".memory/archive"),
        BTreeMap::from([(alpha, text("alpha")), (beta, text("beta"))])
    );
}

#[test]
fn a_consolidation_without_replacements_or_removing_most_records_is_refused() {
    let (dir, store) = setup();
    store
        .upsert(vec![rec("a"), rec("b"), rec("c"), rec("d"), rec("e")])
        .unwrap();
    let before = files_in(dir.path(), ".memory");
    let version = store.version().unwrap();
    let err = store
        .replace(&["a".into()], Vec::new(), &version)
        .unwrap_err();
    assert!(matches!(err, MemoryError::NoReplacement), "{err}");
    // Three of five go (re-creating `c` under its own name is an update, not a removal).
    let err = store
        .replace(
            &["a".into(), "b".into(), "c".into(), "d".into()],
            vec![rec("c"), rec("merged")],
            &version,
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the consolidation would remove 3 of 5 memories (at most half may go in one pass); nothing was changed"
    );
    assert_eq!(files_in(dir.path(), ".memory"), before);
    assert!(files_in(dir.path(), ".memory/archive").is_empty());
    // Half is allowed.
    store
        .replace(
            &["a".into(), "b".into(), "c".into()],
            vec![rec("c"), rec("merged")],
            &version,
        )
        .unwrap();
    assert_eq!(names(&store), vec!["d", "e", "c", "merged"]);
}

#[test]
fn forget_matches_the_name_list_shows() {
    let (dir, store) = setup();
    store.upsert(vec![rec("alpha"), rec("beta")]).unwrap();
    // The front matter renamed by hand: the index's name stays the record's name.
    let file = file_of(dir.path(), "alpha");
    let path = dir.path().join(".memory").join(&file);
    std::fs::write(&path, text("alpha").replace("name: alpha", "name: renamed")).unwrap();
    assert_eq!(names(&store), vec!["alpha", "beta"]);
    assert!(matches!(
        store.forget("renamed"),
        Err(MemoryError::NotFound(name)) if name == "renamed"
    ));
    assert_eq!(
        store.forget("alpha").unwrap(),
        vec![format!("archive/{file}")]
    );
    assert_eq!(names(&store), vec!["beta"]);
    assert!(!path.exists());
}

#[test]
fn a_corrupt_record_is_skipped_and_named_while_the_others_work() {
    let (dir, store) = setup();
    store
        .upsert(vec![rec("alpha"), rec("beta"), rec("gamma")])
        .unwrap();
    let (alpha, gamma) = (file_of(dir.path(), "alpha"), file_of(dir.path(), "gamma"));
    std::fs::write(dir.path().join(".memory").join(&alpha), "no front matter\n").unwrap();
    std::fs::remove_file(dir.path().join(".memory").join(&gamma)).unwrap();
    let loaded = store.load_all().unwrap();
    assert_eq!(loaded.records, vec![rec("beta")]);
    assert_eq!(
        loaded.skipped,
        vec![
            Skipped {
                name: "alpha".into(),
                file: alpha.clone(),
                reason: format!("{alpha} is not valid: the file does not start with a `---` line"),
            },
            Skipped {
                name: "gamma".into(),
                file: gamma.clone(),
                reason: format!(
                    "cannot read `.memory/{gamma}`: No such file or directory (os error 2)"
                ),
            },
        ]
    );
    assert_eq!(
        loaded.skipped[1].to_string(),
        format!(
            "`gamma` ({gamma}): cannot read `.memory/{gamma}`: No such file or directory (os error 2)"
        )
    );
    // Writes go on, and a corrupt record can be forgotten (and is archived as it is).
    store.upsert(vec![rec("delta")]).unwrap();
    assert_eq!(store.forget("gamma").unwrap(), Vec::<String>::new());
    assert_eq!(
        store.forget("alpha").unwrap(),
        vec![format!("archive/{alpha}")]
    );
    assert_eq!(
        store.load_all().unwrap(),
        Loaded {
            records: vec![rec("beta"), rec("delta")],
            skipped: Vec::<Skipped>::new(),
        }
    );
}

#[test]
fn leftovers_of_a_killed_writer_are_cleaned_at_the_next_access() {
    let (dir, store) = setup();
    store.upsert(vec![rec("alpha")]).unwrap();
    let memory = dir.path().join(".memory");
    // What a process killed mid-write leaves: a record file the index never listed and the
    // temp file of the index it was about to commit.
    std::fs::write(memory.join("ghost-1234abcd.md"), text("ghost")).unwrap();
    std::fs::write(
        memory.join(".MEMORY.md.tmp-1234abcd"),
        "- [ghost](ghost-1234abcd.md) - x\n",
    )
    .unwrap();
    std::fs::write(memory.join("notes.txt"), "the user's own file").unwrap();
    assert_eq!(names(&store), vec!["alpha"]);
    let alpha = file_of(dir.path(), "alpha");
    assert_eq!(
        files_in(dir.path(), ".memory")
            .into_keys()
            .collect::<Vec<_>>(),
        vec!["MEMORY.md".to_string(), alpha, "notes.txt".to_string()]
    );
    assert_eq!(
        files_in(dir.path(), ".memory/archive"),
        BTreeMap::from([("ghost-1234abcd.md".to_string(), text("ghost"))])
    );
}
