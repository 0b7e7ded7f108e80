//! Remove never destroys data: each thing that would be lost keeps the worktree and its
//! branch and says why; only a clean worktree whose branch the base contains goes.

use agent_board::Status;
use agent_worktree::{Binding, BindingState, Removal, Review, WorktreeError};

use super::{Repo, git_in, name, task};

/// A repository with the worktree `w` bound to task 1.
async fn with_worktree() -> Repo {
    let repo = Repo::new();
    repo.trees.create(task(1), &name("w"), None).await.unwrap();
    repo
}

fn review(repo: &Repo, removal: Removal) -> Review {
    let Removal::NeedsReview(Binding {
        state: BindingState::NeedsReview { review },
        ..
    }) = removal
    else {
        panic!("removed: {removal:?}");
    };
    // Both stay.
    assert!(repo.tree("w").join("README.md").exists());
    assert_eq!(repo.branches(), "main\nwt/w\n");
    review
}

fn files(changed: &[&str], untracked: &[&str], ignored: &[&str]) -> Review {
    let strings = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    Review::Files {
        changed: strings(changed),
        untracked: strings(untracked),
        ignored: strings(ignored),
        total: changed.len() + untracked.len() + ignored.len(),
    }
}

#[tokio::test]
async fn a_tracked_change_keeps_the_worktree() {
    let repo = with_worktree().await;
    std::fs::write(repo.tree("w").join("README.md"), "changed\n").unwrap();
    let removal = repo.trees.remove(task(1), Status::Completed).await.unwrap();
    assert_eq!(review(&repo, removal), files(&["README.md"], &[], &[]));
}

#[tokio::test]
async fn an_untracked_file_keeps_the_worktree() {
    let repo = with_worktree().await;
    std::fs::create_dir(repo.tree("w").join("notes")).unwrap();
    std::fs::write(repo.tree("w").join("notes/todo.txt"), "x").unwrap();
    let removal = repo.trees.remove(task(1), Status::Completed).await.unwrap();
    assert_eq!(review(&repo, removal), files(&[], &["notes/todo.txt"], &[]));
}

#[tokio::test]
async fn an_ignored_file_keeps_the_worktree() {
    // `git worktree remove` deletes ignored files without a word: a `.env` is exactly that.
    let repo = with_worktree().await;
    std::fs::write(repo.tree("w").join(".env"), "SECRET=1\n").unwrap();
    let removal = repo.trees.remove(task(1), Status::Completed).await.unwrap();
    assert_eq!(review(&repo, removal), files(&[], &[], &[".env"]));
    assert_eq!(
        std::fs::read_to_string(repo.tree("w").join(".env")).unwrap(),
        "SECRET=1\n"
    );
}

#[tokio::test]
async fn a_commit_the_base_does_not_contain_keeps_the_worktree_with_no_upstream_needed() {
    let repo = with_worktree().await;
    std::fs::write(repo.tree("w").join("new.txt"), "work\n").unwrap();
    git_in(&repo.tree("w"), &["add", "new.txt"]);
    git_in(&repo.tree("w"), &["commit", "-q", "-m", "work"]);
    let removal = repo.trees.remove(task(1), Status::Completed).await.unwrap();
    assert_eq!(
        review(&repo, removal),
        Review::NotMerged {
            branch: "wt/w".into(),
            base: "main".into()
        }
    );
    assert_eq!(
        repo.trees
            .bindings()
            .get(task(1))
            .unwrap()
            .unwrap()
            .state
            .to_string(),
        "needs_review"
    );
}

#[tokio::test]
async fn a_clean_worktree_whose_work_was_merged_goes_with_its_branch() {
    let repo = with_worktree().await;
    std::fs::write(repo.tree("w").join("new.txt"), "work\n").unwrap();
    git_in(&repo.tree("w"), &["add", "new.txt"]);
    git_in(&repo.tree("w"), &["commit", "-q", "-m", "work"]);
    assert!(matches!(
        repo.trees.remove(task(1), Status::Completed).await.unwrap(),
        Removal::NeedsReview(_)
    ));
    // The user merges; the same removal now goes through.
    repo.git(&["merge", "-q", "--ff-only", "wt/w"]);
    let removal = repo.trees.remove(task(1), Status::Completed).await.unwrap();
    assert_eq!(
        removal,
        Removal::Removed(Binding {
            task: task(1),
            name: name("w"),
            base: "main".into(),
            state: BindingState::Removed,
        })
    );
    assert!(!repo.tree("w").exists());
    assert_eq!(repo.branches(), "main\n");
    assert_eq!(
        std::fs::read_to_string(repo.root().join("new.txt")).unwrap(),
        "work\n"
    );
}

#[tokio::test]
async fn a_kept_worktree_with_no_new_commits_is_removed() {
    let repo = with_worktree().await;
    repo.trees.keep(task(1)).await.unwrap();
    assert!(matches!(
        repo.trees.remove(task(1), Status::Cancelled).await.unwrap(),
        Removal::Removed(_)
    ));
    assert_eq!(repo.branches(), "main\n");
}

#[tokio::test]
async fn removal_is_refused_while_the_task_is_open_and_for_a_task_without_a_worktree() {
    let repo = with_worktree().await;
    for status in [Status::Pending, Status::InProgress] {
        let err = repo.trees.remove(task(1), status).await.unwrap_err();
        assert!(
            matches!(err, WorktreeError::TaskNotFinished { .. }),
            "{err}"
        );
    }
    assert_eq!(
        repo.trees
            .remove(task(1), Status::Pending)
            .await
            .unwrap_err()
            .to_string(),
        "task #1 is pending: a worktree is removed only after its task is done"
    );
    assert_eq!(
        repo.trees
            .remove(task(9), Status::Completed)
            .await
            .unwrap_err()
            .to_string(),
        "task #9 has no worktree"
    );
    assert!(repo.tree("w").exists());
}
