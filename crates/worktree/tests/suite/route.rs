//! Routing: a task's work runs in its active worktree, and any doubt fails closed.

use agent_worktree::RouteError;

use super::{Repo, name, task};

#[tokio::test]
async fn same_named_files_in_two_worktrees_stay_apart() {
    let repo = Repo::new();
    repo.trees.create(task(1), &name("a"), None).await.unwrap();
    repo.trees.create(task(2), &name("b"), None).await.unwrap();
    for (id, text) in [(1, "from a\n"), (2, "from b\n")] {
        let ws = repo.trees.route(task(id)).unwrap();
        let file = ws.inside("notes.txt").unwrap();
        ws.write_new(&file, text.as_bytes()).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(repo.tree("a").join("notes.txt")).unwrap(),
        "from a\n"
    );
    assert_eq!(
        std::fs::read_to_string(repo.tree("b").join("notes.txt")).unwrap(),
        "from b\n"
    );
    assert!(!repo.root().join("notes.txt").exists());
    assert_eq!(repo.trees.route(task(1)).unwrap().root(), repo.tree("a"));
}

#[tokio::test]
async fn an_unknown_kept_or_deleted_worktree_is_not_routed_to() {
    let repo = Repo::new();
    assert_eq!(
        repo.trees.route(task(1)).unwrap_err(),
        RouteError::Unknown { task: task(1) }
    );
    repo.trees.create(task(1), &name("a"), None).await.unwrap();
    repo.trees.create(task(2), &name("b"), None).await.unwrap();
    repo.trees.keep(task(1)).await.unwrap();
    assert_eq!(
        repo.trees.route(task(1)).unwrap_err(),
        RouteError::NotActive {
            task: task(1),
            state: "kept".into()
        }
    );
    std::fs::remove_dir_all(repo.tree("b")).unwrap();
    assert!(matches!(
        repo.trees.route(task(2)).unwrap_err(),
        RouteError::Stale { .. }
    ));
}

#[tokio::test]
async fn a_folder_swapped_for_a_link_or_another_repository_is_stale() {
    let repo = Repo::new();
    repo.trees.create(task(1), &name("a"), None).await.unwrap();
    repo.trees.create(task(2), &name("b"), None).await.unwrap();

    // `a` becomes a link to the repository's root.
    std::fs::rename(repo.tree("a"), repo.root().join("moved-a")).unwrap();
    std::os::unix::fs::symlink(repo.root(), repo.tree("a")).unwrap();
    assert_eq!(
        repo.trees.route(task(1)).unwrap_err(),
        RouteError::Stale {
            task: task(1),
            why: ".agent_tutorial/worktrees/a leads elsewhere".into()
        }
    );

    // `b`'s `.git` points at another repository's worktree record.
    let other = Repo::new();
    std::fs::write(
        repo.tree("b").join(".git"),
        format!("gitdir: {}/.git/worktrees/b\n", other.root().display()),
    )
    .unwrap();
    assert_eq!(
        repo.trees.route(task(2)).unwrap_err(),
        RouteError::Stale {
            task: task(2),
            why: ".agent_tutorial/worktrees/b/.git points outside this repository".into()
        }
    );
}
