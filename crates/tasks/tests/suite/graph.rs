//! Create, block, complete, unblock; cycles refused with their path; unknown ids refused.

use agent_tasks::{Status, Task, render};
use serde_json::json;

use super::Fixture;

#[tokio::test]
async fn create_block_complete_unblock() {
    let f = Fixture::new();
    assert_eq!(f.call("task_list", json!({})).await, "(no tasks)");
    assert_eq!(
        f.call(
            "task_create",
            json!({"subject": "Write the parser", "description": "Parse the config file."})
        )
        .await,
        "created #1 [pending] Write the parser (ready)"
    );
    assert_eq!(
        f.call(
            "task_create",
            json!({"subject": "Test the parser", "description": "", "blocked_by": [1]})
        )
        .await,
        "created #2 [pending] Test the parser (blocked by #1)"
    );
    assert_eq!(
        f.call(
            "task_create",
            json!({"subject": "Ship", "description": "", "blocked_by": ["1", 2]})
        )
        .await,
        "created #3 [pending] Ship (blocked by #1, #2)"
    );
    // A blocked task cannot start.
    assert_eq!(
        f.call("task_update", json!({"id": 2, "status": "in_progress"}))
            .await,
        "Error [invalid_arguments]: task 2 cannot be in_progress yet: it is blocked by #1"
    );
    assert_eq!(
        f.call(
            "task_update",
            json!({"id": 1, "status": "in_progress", "owner": "ana"})
        )
        .await,
        "updated #1 [in_progress] Write the parser (owner: ana)"
    );
    assert_eq!(
        f.call("task_update", json!({"id": "1", "status": "completed"}))
            .await,
        "updated #1 [completed] Write the parser (owner: ana)\nnow ready:\n#2 [pending] Test the parser (ready)"
    );
    assert_eq!(
        f.call("task_list", json!({})).await,
        "#1 [completed] Write the parser (owner: ana)\n\
         #2 [pending] Test the parser (ready)\n\
         #3 [pending] Ship (blocked by #2)"
    );
    assert_eq!(
        f.call("task_list", json!({"status": "pending"})).await,
        "#2 [pending] Test the parser (ready)\n#3 [pending] Ship (blocked by #2)"
    );
    assert_eq!(
        f.call("task_list", json!({"status": "cancelled"})).await,
        "(no cancelled tasks)"
    );
    assert_eq!(
        f.call("task_get", json!({"id": 3})).await,
        "#3 [pending] Ship (blocked by #2)\nowner: (none)\nblocked by: #1 [completed], #2 [pending]\nblocks: (none)\ncreated: 1700000000, updated: 1700000000"
    );
    // The stored record, whole.
    let stored: Task =
        serde_json::from_str(&std::fs::read_to_string(f.path(".tasks/2.json")).unwrap()).unwrap();
    assert_eq!(
        stored,
        Task {
            id: 2,
            subject: "Test the parser".into(),
            description: String::new(),
            status: Status::Pending,
            owner: None,
            blocked_by: vec![1],
            created: 1_700_000_000,
            updated: 1_700_000_000,
        }
    );
    assert_eq!(
        render::prompt_block(&f.store.load().unwrap()).as_deref(),
        Some("- #2 [pending] Test the parser (ready)\n- #3 [pending] Ship (blocked by #2)")
    );
}

#[tokio::test]
async fn a_cycle_is_refused_with_the_cycle_named_and_nothing_written() {
    let f = Fixture::new();
    for (subject, blocked_by) in [("a", json!([])), ("b", json!([1])), ("c", json!([2]))] {
        f.call(
            "task_create",
            json!({"subject": subject, "description": "", "blocked_by": blocked_by}),
        )
        .await;
    }
    let before = std::fs::read_to_string(f.path(".tasks/1.json")).unwrap();
    assert_eq!(
        f.call("task_update", json!({"id": 1, "add_blocked_by": [3]}))
            .await,
        "Error [invalid_arguments]: that dependency would make a cycle: 1 -> 3 -> 2 -> 1"
    );
    assert_eq!(
        f.call("task_update", json!({"id": 2, "add_blocked_by": ["2"]}))
            .await,
        "Error [invalid_arguments]: that dependency would make a cycle: 2 -> 2"
    );
    assert_eq!(
        std::fs::read_to_string(f.path(".tasks/1.json")).unwrap(),
        before
    );
    // Removing the edge that closed the loop makes the same edge acceptable.
    assert_eq!(
        f.call("task_update", json!({"id": 3, "remove_blocked_by": [2]}))
            .await,
        "updated #3 [pending] c (ready)\nnow ready:\n#3 [pending] c (ready)"
    );
    assert_eq!(
        f.call("task_update", json!({"id": 1, "add_blocked_by": [3]}))
            .await,
        "updated #1 [pending] a (blocked by #3)"
    );
}

#[tokio::test]
async fn unknown_ids_and_bad_arguments_are_tool_errors() {
    let f = Fixture::new();
    assert_eq!(
        f.call("task_get", json!({"id": 4})).await,
        "Error [invalid_arguments]: there is no task 4; task_list shows the ids"
    );
    assert_eq!(
        f.call(
            "task_create",
            json!({"subject": "x", "description": "", "blocked_by": [9]})
        )
        .await,
        "Error [invalid_arguments]: task 9 cannot be a blocker: there is no such task"
    );
    assert_eq!(
        f.call(
            "task_create",
            json!({"subject": "a\n## identity", "description": ""})
        )
        .await,
        "Error [invalid_arguments]: the subject must be one line without control characters"
    );
    assert_eq!(
        f.call("task_create", json!({"subject": "  ", "description": ""}))
            .await,
        "Error [invalid_arguments]: the subject must not be blank"
    );
    assert_eq!(
        f.call("task_update", json!({"id": 1, "status": "done"}))
            .await,
        "Error [invalid_arguments]: $.status: expected one of \"pending\", \"in_progress\", \"completed\", \"cancelled\""
    );
    assert!(!f.path(".tasks/1.json").exists());
}

#[test]
fn the_cycle_check_finds_the_first_path_through_a_dense_graph() {
    use agent_tasks::{Status, Task, Tasks};
    // Each task waits for up to 50 earlier ones: many paths lead from 600 down to 1.
    let tasks: Tasks = (1..=600u64)
        .map(|id| {
            let blocked_by = (id.saturating_sub(50).max(1)..id).rev().collect();
            let task = Task {
                id,
                subject: format!("t{id}"),
                description: String::new(),
                status: Status::Pending,
                owner: None,
                blocked_by,
                created: 0,
                updated: 0,
            };
            (id, task)
        })
        .collect();
    // Adding 1 -> 600 would close a cycle; the path follows each task's first blocker.
    let path = agent_tasks::graph::cycle_through(&tasks, 1, 600).unwrap();
    let expected: Vec<u64> = std::iter::once(1).chain((1..=600).rev()).collect();
    assert_eq!(path, expected);
    assert_eq!(agent_tasks::graph::cycle_through(&tasks, 600, 1), None);
}
