//! The three tools through `agent_core::ToolRegistry`, over a real board and real git.

use std::sync::Arc;

use agent_board::{BoardConfig, ClaimTarget, NewTask, SqliteBoard, TaskBoard, TaskId};
use agent_core::ToolRegistry;
use agent_protocol::AgentId;
use agent_workspace::Workspace;
use agent_worktree::tools;

use super::Repo;

/// The call as the loop runs it (the arguments as the model writes them).
async fn call(registry: &ToolRegistry, name: &str, arguments: &str) -> String {
    agent_test_support::call_tool(registry, name, serde_json::from_str(arguments).unwrap()).await
}

/// A repository, its board with one task (#1) and the lead's three tools.
async fn setup() -> (Repo, Arc<dyn TaskBoard>, ToolRegistry) {
    let repo = Repo::new();
    let ws = Workspace::new(repo.root()).unwrap();
    let board: Arc<dyn TaskBoard> = Arc::new(
        tokio::task::spawn_blocking(move || SqliteBoard::open(&ws, BoardConfig::default()))
            .await
            .unwrap()
            .unwrap(),
    );
    board
        .create(NewTask {
            subject: "login form".into(),
            description: String::new(),
            blocked_by: Vec::new(),
        })
        .await
        .unwrap();
    let registry = tools::register(ToolRegistry::builder(), repo.trees.clone(), board.clone())
        .build()
        .unwrap();
    (repo, board, registry)
}

async fn finish(board: &Arc<dyn TaskBoard>) {
    let alice = AgentId::new("alice").unwrap();
    let claim = board
        .claim(&alice, ClaimTarget::Task(TaskId(1)))
        .await
        .unwrap();
    board
        .complete(&alice, TaskId(1), &claim.token, "done")
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lead_creates_a_worktree_and_removes_it_only_once_the_task_is_done() {
    let (repo, board, registry) = setup().await;
    assert_eq!(
        registry.names(),
        ["create_worktree", "keep_worktree", "remove_worktree"]
    );
    assert_eq!(
        call(
            &registry,
            "create_worktree",
            r#"{"task_id": 1, "name": "login-form"}"#
        )
        .await,
        "created worktree `login-form` for task #1: .agent_tutorial/worktrees/login-form on branch wt/login-form from main"
    );
    assert_eq!(
        call(&registry, "remove_worktree", r#"{"task_id": 1}"#).await,
        "Error [invalid_arguments]: task #1 is pending: a worktree is removed only after its task is done"
    );
    finish(&board).await;
    assert_eq!(
        call(&registry, "remove_worktree", r#"{"task_id": 1}"#).await,
        "removed worktree `login-form` of task #1 and its branch wt/login-form"
    );
    assert_eq!(repo.branches(), "main\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removal_that_would_lose_an_ignored_file_tells_the_model_why_it_kept_it() {
    let (repo, board, registry) = setup().await;
    call(
        &registry,
        "create_worktree",
        r#"{"task_id": 1, "name": "w"}"#,
    )
    .await;
    std::fs::write(repo.tree("w").join(".env"), "KEY=1\n").unwrap();
    finish(&board).await;
    assert_eq!(
        call(&registry, "remove_worktree", r#"{"task_id": 1}"#).await,
        "kept worktree `w` of task #1 for review (.agent_tutorial/worktrees/w and branch wt/w stay): 1 file(s) would be lost; ignored: .env"
    );
    assert_eq!(
        std::fs::read_to_string(repo.tree("w").join(".env")).unwrap(),
        "KEY=1\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_names_unknown_tasks_and_done_tasks_are_tool_errors_that_change_nothing() {
    let (repo, board, registry) = setup().await;
    let results = [
        call(
            &registry,
            "create_worktree",
            r#"{"task_id": 1, "name": "../../etc"}"#,
        )
        .await,
        call(
            &registry,
            "create_worktree",
            r#"{"task_id": 1, "name": "x", "path": "/tmp"}"#,
        )
        .await,
        call(
            &registry,
            "create_worktree",
            r#"{"task_id": 1, "name": "x", "base_ref": "--upload-pack=touch pwned"}"#,
        )
        .await,
        call(
            &registry,
            "create_worktree",
            r#"{"task_id": 7, "name": "x"}"#,
        )
        .await,
        call(&registry, "keep_worktree", r#"{"task_id": 1}"#).await,
    ];
    assert_eq!(
        results,
        [
            "Error [invalid_arguments]: `../../etc` is not a worktree name: use 1 to 40 lower-case letters, digits and single hyphens, starting and ending with a letter or digit",
            "Error [invalid_arguments]: $: unknown field `path`",
            "Error [invalid_arguments]: `--upload-pack=touch pwned` is not a branch, tag or commit of this repository",
            "Error [invalid_arguments]: there is no task #7; list_tasks shows the ids",
            "Error [invalid_arguments]: task #1 has no worktree",
        ]
    );
    finish(&board).await;
    assert_eq!(
        call(
            &registry,
            "create_worktree",
            r#"{"task_id": 1, "name": "late"}"#
        )
        .await,
        "Error [invalid_arguments]: task #1 is completed: a worktree is for work still to do"
    );
    assert_eq!(repo.branches(), "main\n");
    assert!(!repo.root().join("pwned").exists());
}

#[test]
fn each_call_says_what_will_happen_before_it_is_approved() {
    let [create, keep, remove] = tools::specs();
    assert_eq!(
        (create.effect, keep.effect, remove.effect),
        (
            agent_core::ToolEffect::Write,
            agent_core::ToolEffect::State,
            agent_core::ToolEffect::Write
        )
    );
}
