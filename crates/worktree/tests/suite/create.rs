//! Create: the intent first, then the worktree, verified, then bound; never half-bound.

use std::os::unix::fs::PermissionsExt;

use agent_worktree::{Binding, BindingState, Transition, WorktreeError};

use super::{Repo, WALL_MS, name, task};

#[tokio::test]
async fn a_worktree_is_added_on_its_branch_from_the_current_branch_and_bound() {
    let repo = Repo::new();
    let binding = repo
        .trees
        .create(task(1), &name("login"), None)
        .await
        .unwrap();
    let expected = Binding {
        task: task(1),
        name: name("login"),
        base: "main".into(),
        state: BindingState::Active,
    };
    assert_eq!(binding, expected);
    assert_eq!(repo.trees.bindings().all().unwrap(), vec![expected]);
    assert_eq!(
        std::fs::read_to_string(repo.tree("login").join("README.md")).unwrap(),
        "hello\n"
    );
    assert_eq!(repo.branches(), "main\nwt/login\n");
    // The repository's own status never lists a worktree: their folder ignores itself (the
    // bindings are the harness's state, as the rest of `.agent_tutorial/`).
    assert_eq!(
        repo.git(&["status", "--porcelain", "--untracked-files=all"]),
        "?? .agent_tutorial/worktree-bindings/.lock\n\
         ?? .agent_tutorial/worktree-bindings/1.json\n\
         ?? .agent_tutorial/worktree-bindings/audit.jsonl\n"
    );
    assert_eq!(
        repo.trees.bindings().audit().unwrap(),
        vec![
            Transition {
                at_ms: WALL_MS,
                task: task(1),
                name: name("login"),
                from: None,
                to: BindingState::Creating,
            },
            Transition {
                at_ms: WALL_MS,
                task: task(1),
                name: name("login"),
                from: Some("creating".into()),
                to: BindingState::Active,
            },
        ]
    );
}

#[tokio::test]
async fn a_base_ref_is_checked_and_an_option_is_never_one() {
    let repo = Repo::new();
    repo.git(&["tag", "v1"]);
    let binding = repo
        .trees
        .create(task(1), &name("from-tag"), Some("v1"))
        .await
        .unwrap();
    assert_eq!(binding.base, "v1");
    for bad in ["--upload-pack=touch x", "no-such-branch", "main\nx", ""] {
        let err = repo
            .trees
            .create(task(2), &name("other"), Some(bad))
            .await
            .unwrap_err();
        assert!(
            matches!(err, WorktreeError::BadBase { .. }),
            "{bad:?}: {err}"
        );
    }
    assert_eq!(repo.trees.bindings().get(task(2)).unwrap(), None);
    assert!(!repo.root().join("x").exists());
}

#[tokio::test]
async fn the_repositorys_post_checkout_hook_never_runs() {
    let repo = Repo::new();
    let hook = repo.root().join(".git/hooks/post-checkout");
    let witness = repo.root().join("hook-ran");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch '{}'\n", witness.display())).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The hook is live: git run by hand fires it.
    repo.git(&["checkout", "-q", "-b", "probe"]);
    assert!(witness.exists());
    std::fs::remove_file(&witness).unwrap();
    repo.git(&["checkout", "-q", "main"]);
    std::fs::remove_file(&witness).unwrap();

    repo.trees
        .create(task(1), &name("hooked"), None)
        .await
        .unwrap();
    assert!(!witness.exists(), "the post-checkout hook ran");
}

#[tokio::test]
async fn a_name_or_task_already_bound_is_refused_before_git_runs() {
    let repo = Repo::new();
    repo.trees.create(task(1), &name("a"), None).await.unwrap();
    let taken = repo
        .trees
        .create(task(2), &name("a"), None)
        .await
        .unwrap_err();
    assert_eq!(
        taken.to_string(),
        "the worktree name `a` belongs to task #1"
    );
    let again = repo
        .trees
        .create(task(1), &name("b"), None)
        .await
        .unwrap_err();
    assert_eq!(
        again.to_string(),
        "task #1 already has the worktree `a` (active)"
    );
    assert_eq!(repo.trees.bindings().get(task(2)).unwrap(), None);
    assert_eq!(repo.branches(), "main\nwt/a\n");
}

#[tokio::test]
async fn a_branch_that_exists_fails_the_create_and_the_binding_says_so_with_gits_words() {
    let repo = Repo::new();
    repo.git(&["branch", "wt/taken"]);
    let err = repo
        .trees
        .create(task(3), &name("taken"), None)
        .await
        .unwrap_err();
    let message = "fatal: a branch named 'wt/taken' already exists".to_string();
    assert_eq!(
        err.to_string(),
        format!("the worktree `taken` for task #3 could not be created: {message}")
    );
    assert_eq!(
        repo.trees.bindings().get(task(3)).unwrap().unwrap().state,
        BindingState::Failed { message }
    );
    assert!(!repo.tree("taken").exists());
    assert!(repo.trees.route(task(3)).is_err());
    // A failed binding does not hold its task: a new name works.
    repo.trees
        .create(task(3), &name("taken-2"), None)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_folder_in_the_way_fails_the_create_and_is_left_alone() {
    let repo = Repo::new();
    let folder = repo.tree("busy");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("mine.txt"), "keep me").unwrap();
    let err = repo
        .trees
        .create(task(4), &name("busy"), None)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the worktree `busy` for task #4 could not be created: .agent_tutorial/worktrees/busy exists already"
    );
    assert_eq!(
        std::fs::read_to_string(folder.join("mine.txt")).unwrap(),
        "keep me"
    );
    assert_eq!(repo.branches(), "main\n");
}
