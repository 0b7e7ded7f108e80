//! A crash between steps leaves the old state or the new one: every change is one atomic
//! write, a temp file a killed writer left is ignored and then removed, and a damaged task
//! file is skipped (never fatal) without its id being handed out again.

use serde_json::json;

use super::Fixture;

#[tokio::test]
async fn a_leftover_temp_file_is_ignored_then_removed_under_the_lock() {
    let f = Fixture::new();
    f.call("task_create", json!({"subject": "a", "description": ""}))
        .await;
    // What a writer killed after writing half its temp file leaves.
    let temp = f.path(".tasks/.tmp-agent-4242-0");
    std::fs::write(&temp, "{\"id\": 2, \"subj").unwrap();
    assert_eq!(
        f.call("task_list", json!({})).await,
        "#1 [pending] a (ready)"
    );
    assert!(temp.exists(), "a reader removes nothing");
    assert_eq!(
        f.call("task_create", json!({"subject": "b", "description": ""}))
            .await,
        "created #2 [pending] b (ready)"
    );
    assert!(!temp.exists());
    let mut names: Vec<String> = std::fs::read_dir(f.path(".tasks"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, [".lock", "1.json", "2.json"]);
}

#[tokio::test]
async fn a_damaged_task_file_is_skipped_and_its_id_never_reused() {
    let mut f = Fixture::new();
    for subject in ["a", "b"] {
        f.call(
            "task_create",
            json!({"subject": subject, "description": ""}),
        )
        .await;
    }
    // Overwritten in place, as a crash of a writer that did not rename would leave it: the
    // next process reads it (a running one sees it at the folder's next change).
    std::fs::write(f.path(".tasks/2.json"), "{\"id\": 2, \"subj").unwrap();
    f.restart();
    assert_eq!(
        f.call("task_list", json!({})).await,
        "#1 [pending] a (ready)"
    );
    assert_eq!(
        f.call("task_get", json!({"id": 2})).await,
        "Error [tool_execution_error]: task 2 cannot be read: not a task record: EOF while parsing a string at line 1 column 15"
    );
    assert_eq!(
        f.call("task_create", json!({"subject": "c", "description": ""}))
            .await,
        "created #3 [pending] c (ready)"
    );
}

#[tokio::test]
async fn an_update_rewrites_one_file_whole() {
    let f = Fixture::new();
    f.call("task_create", json!({"subject": "a", "description": ""}))
        .await;
    f.call("task_update", json!({"id": 1, "status": "cancelled"}))
        .await;
    assert_eq!(
        std::fs::read_to_string(f.path(".tasks/1.json")).unwrap(),
        "{\n  \"id\": 1,\n  \"subject\": \"a\",\n  \"description\": \"\",\n  \"status\": \"cancelled\",\n  \"blocked_by\": [],\n  \"created\": 1700000000,\n  \"updated\": 1700000000\n}\n"
    );
}

#[tokio::test]
async fn an_unchanged_folder_is_not_read_again_but_a_file_renamed_into_place_is() {
    let f = Fixture::new();
    f.call("task_create", json!({"subject": "a", "description": ""}))
        .await;
    let record = |subject: &str| {
        format!(
            "{{\"id\":1,\"subject\":\"{subject}\",\"description\":\"\",\"status\":\"pending\",\"blocked_by\":[],\"created\":0,\"updated\":0}}"
        )
    };
    // Same inode, same names, same change counter: the cached board is used, the file unread.
    std::fs::write(f.path(".tasks/1.json"), record("in place")).unwrap();
    assert_eq!(
        f.call("task_list", json!({})).await,
        "#1 [pending] a (ready)"
    );
    // Saved by renaming a new file over it (what editors and this store do): a new inode.
    std::fs::write(f.path(".tasks/new"), record("renamed")).unwrap();
    std::fs::rename(f.path(".tasks/new"), f.path(".tasks/1.json")).unwrap();
    assert_eq!(
        f.call("task_list", json!({})).await,
        "#1 [pending] renamed (ready)"
    );
}

/// Sets the modification time of `path` to one fixed moment of 2023, as a folder left alone
/// since then has (the same moment every time: putting a folder's time back hides a change).
fn age(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    let old = libc::timespec {
        tv_sec: 1_700_000_000,
        tv_nsec: 0,
    };
    // SAFETY: a valid NUL-terminated path and two initialised timespecs.
    let done = unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), [old, old].as_ptr(), 0) };
    assert_eq!(done, 0);
}

#[tokio::test]
async fn a_settled_folder_is_trusted_by_its_time_and_any_rename_into_it_is_seen() {
    let f = Fixture::new();
    f.call("task_create", json!({"subject": "a", "description": ""}))
        .await;
    age(&f.path(".tasks"));
    assert_eq!(
        f.call("task_list", json!({})).await,
        "#1 [pending] a (ready)"
    );
    // A name added with the folder's time put back: only a listing would see it, and the
    // settled folder is not listed again (what makes an unchanged board cost no reading).
    let record = |id: u64, subject: &str| {
        format!(
            "{{\"id\":{id},\"subject\":\"{subject}\",\"description\":\"\",\"status\":\"pending\",\"blocked_by\":[],\"created\":0,\"updated\":0}}"
        )
    };
    std::fs::write(f.path(".tasks/2.json"), record(2, "hidden")).unwrap();
    age(&f.path(".tasks"));
    assert_eq!(
        f.call("task_list", json!({})).await,
        "#1 [pending] a (ready)"
    );
    // Anything that changes the folder the ordinary way moves its time and is seen.
    std::fs::write(f.path(".tasks/new"), record(3, "renamed")).unwrap();
    std::fs::rename(f.path(".tasks/new"), f.path(".tasks/3.json")).unwrap();
    assert_eq!(
        f.call("task_list", json!({})).await,
        "#1 [pending] a (ready)\n#2 [pending] hidden (ready)\n#3 [pending] renamed (ready)"
    );
}
