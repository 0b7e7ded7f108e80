//! `.tasks/` is the harness's own folder, but it lives in a repository someone else may have
//! written: nothing planted there may lead a read or a write outside, block, or flood memory.

use std::os::unix::fs::symlink;

use serde_json::json;

use super::Fixture;

fn outside_with_file() -> tempfile::TempDir {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("1.json"),
        "{\"id\":1,\"subject\":\"planted\",\"description\":\"\",\"status\":\"pending\",\"blocked_by\":[],\"created\":0,\"updated\":0}",
    )
    .unwrap();
    outside
}

#[tokio::test]
async fn a_tasks_folder_linked_outside_is_refused_for_reads_and_writes() {
    let f = Fixture::new();
    let outside = outside_with_file();
    symlink(outside.path(), f.path(".tasks")).unwrap();
    assert_eq!(
        f.call("task_list", json!({})).await,
        "Error [tool_execution_error]: the task folder is not usable: `.tasks` resolves outside the workspace"
    );
    assert_eq!(
        f.call("task_create", json!({"subject": "x", "description": ""}))
            .await,
        "Error [tool_execution_error]: the task folder is not usable: `.tasks` resolves outside the workspace"
    );
    let mut names: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["1.json"]);
}

#[tokio::test]
async fn dot_dot_through_a_missing_folder_is_refused() {
    let f = Fixture::new();
    symlink("missing/../..", f.path(".tasks")).unwrap();
    assert_eq!(
        f.call("task_list", json!({})).await,
        "Error [tool_execution_error]: the task folder is not usable: cannot resolve `.tasks`: `missing` does not exist, so `..` after it leads nowhere"
    );
}

#[tokio::test]
async fn a_task_file_linked_outside_is_skipped_not_read_and_a_lock_link_is_refused() {
    let f = Fixture::new();
    let outside = outside_with_file();
    std::fs::create_dir(f.path(".tasks")).unwrap();
    symlink(outside.path().join("1.json"), f.path(".tasks/1.json")).unwrap();
    assert_eq!(f.call("task_list", json!({})).await, "(no tasks)");
    assert_eq!(
        f.call("task_get", json!({"id": 1})).await,
        "Error [tool_execution_error]: task 1 cannot be read: it is a symbolic link, not a regular file"
    );
    symlink(outside.path().join("1.json"), f.path(".tasks/.lock")).unwrap();
    assert_eq!(
        f.call("task_create", json!({"subject": "x", "description": ""}))
            .await,
        "Error [tool_execution_error]: the task folder is not usable: cannot lock `.tasks/.lock`: Too many levels of symbolic links (os error 40)"
    );
    assert!(
        std::fs::read_to_string(outside.path().join("1.json"))
            .unwrap()
            .contains("planted")
    );
}

#[tokio::test]
async fn a_fifo_task_file_is_skipped_without_blocking() {
    let f = Fixture::new();
    f.call("task_create", json!({"subject": "a", "description": ""}))
        .await;
    let fifo = std::ffi::CString::new(f.path(".tasks/2.json").to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    assert_eq!(
        f.call("task_list", json!({})).await,
        "#1 [pending] a (ready)"
    );
    assert_eq!(
        f.call("task_get", json!({"id": 2})).await,
        "Error [tool_execution_error]: task 2 cannot be read: it is a FIFO (named pipe), not a regular file"
    );
    // Its name still holds its id.
    assert_eq!(
        f.call("task_create", json!({"subject": "b", "description": ""}))
            .await,
        "created #3 [pending] b (ready)"
    );
}

#[tokio::test]
async fn a_huge_task_file_is_refused_before_it_is_read() {
    let f = Fixture::new();
    std::fs::create_dir(f.path(".tasks")).unwrap();
    let file = std::fs::File::create(f.path(".tasks/1.json")).unwrap();
    file.set_len(1 << 30).unwrap(); // 1 GiB, sparse: cheap to make, fatal to read whole
    assert_eq!(f.call("task_list", json!({})).await, "(no tasks)");
    assert_eq!(
        f.call("task_get", json!({"id": 1})).await,
        "Error [tool_execution_error]: task 1 cannot be read: `.tasks/1.json` is 1073741824 bytes, over the limit of 65536 bytes"
    );
}
