//! A repository written by an attacker, and a model that names things.

use agent_worktree::{BindingError, WorktreeError, WorktreeName};

use super::{Repo, name, task, worktrees};

#[test]
fn a_name_that_could_reach_a_path_or_a_ref_is_refused() {
    for bad in [
        "..",
        "../x",
        "a/b",
        ".hidden",
        "-flag",
        "a--b",
        "A",
        "x.lock",
        "",
        "a b",
        "wt/x",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    ] {
        assert!(WorktreeName::new(bad).is_err(), "{bad:?} was accepted");
    }
    assert_eq!(
        serde_json::from_str::<WorktreeName>("\"../../x\"")
            .unwrap_err()
            .to_string(),
        "`../../x` is not a worktree name: use 1 to 40 lower-case letters, digits and single hyphens, starting and ending with a letter or digit"
    );
}

#[tokio::test]
async fn a_git_file_pointing_elsewhere_is_not_our_repository() {
    let elsewhere = Repo::new();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".git"),
        format!("gitdir: {}/.git\n", elsewhere.root().display()),
    )
    .unwrap();
    let err = worktrees(dir.path())
        .create(task(1), &name("x"), None)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "worktrees need the workspace to be a git repository's top folder: .git is a file: its repository is elsewhere"
    );
    assert_eq!(elsewhere.branches(), "main\n");
    assert!(!elsewhere.root().join(".git/worktrees").exists());
}

#[tokio::test]
async fn a_workspace_inside_another_repositorys_tree_is_refused() {
    let repo = Repo::new();
    let sub = repo.root().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::create_dir(sub.join(".git")).unwrap();
    let err = worktrees(&sub)
        .create(task(1), &name("x"), None)
        .await
        .unwrap_err();
    assert!(matches!(err, WorktreeError::NotARepository { .. }), "{err}");
    assert_eq!(repo.branches(), "main\n");
}

#[tokio::test]
async fn a_state_folder_linked_outside_is_refused_and_nothing_lands_there() {
    let repo = Repo::new();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.root().join(".agent_tutorial")).unwrap();
    let err = repo
        .trees
        .create(task(1), &name("x"), None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, WorktreeError::Bindings(BindingError::Path(_))),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    assert_eq!(repo.branches(), "main\n");
}

#[tokio::test]
async fn a_planted_binding_file_that_is_huge_or_not_a_binding_is_skipped_or_refused() {
    let repo = Repo::new();
    repo.trees
        .create(task(1), &name("real"), None)
        .await
        .unwrap();
    let folder = repo.root().join(".agent_tutorial/worktree-bindings");
    std::fs::write(folder.join("2.json"), "{ not json").unwrap();
    std::fs::write(folder.join("3.json"), vec![b' '; 100 * 1024]).unwrap();
    std::fs::write(
        folder.join("4.json"),
        r#"{"task":4,"name":"../../etc","base":"main","state":"active"}"#,
    )
    .unwrap();
    let all: Vec<i64> = repo
        .trees
        .bindings()
        .all()
        .unwrap()
        .into_iter()
        .map(|b| b.task.0)
        .collect();
    assert_eq!(all, vec![1]);
    // Routing the planted one fails closed.
    assert!(repo.trees.route(task(4)).is_err());
    // A FIFO in place of a binding is refused without blocking.
    let fifo = folder.join("5.json");
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid C string; the test's own temporary folder.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    assert!(repo.trees.bindings().get(task(5)).is_err());
}
