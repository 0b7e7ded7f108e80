//! Restart: the bindings are settled against `git worktree list`.

use agent_worktree::{Binding, BindingState, Reconciled, Review};

use super::{Repo, name, task, worktrees};

/// Writes a binding file as a process that died would have left it.
fn plant(repo: &Repo, binding: &Binding) {
    let folder = repo.root().join(".agent_tutorial/worktree-bindings");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join(format!("{}.json", binding.task.0)),
        serde_json::to_vec(binding).unwrap(),
    )
    .unwrap();
}

fn creating(id: i64, text: &str) -> Binding {
    Binding {
        task: task(id),
        name: name(text),
        base: "main".into(),
        state: BindingState::Creating,
    }
}

#[tokio::test]
async fn a_repository_that_never_had_a_worktree_needs_no_git_call() {
    let dir = tempfile::tempdir().unwrap();
    // Not even a repository: nothing to reconcile, nothing refused.
    assert_eq!(worktrees(dir.path()).reconcile().await.unwrap(), vec![]);
}

#[tokio::test]
async fn interrupted_creates_are_completed_or_abandoned_and_lost_folders_pruned() {
    let repo = Repo::new();
    // Live and bound: untouched.
    repo.trees
        .create(task(1), &name("fine"), None)
        .await
        .unwrap();
    // Deleted by hand while active.
    repo.trees
        .create(task(2), &name("gone"), None)
        .await
        .unwrap();
    std::fs::remove_dir_all(repo.tree("gone")).unwrap();
    // A create that died after git added the worktree, and one that died before.
    let added = repo.tree("added").to_string_lossy().into_owned();
    repo.git(&["worktree", "add", "-q", "-b", "wt/added", &added, "main"]);
    plant(&repo, &creating(3, "added"));
    plant(&repo, &creating(4, "never"));
    // One that died after git made the branch but before the worktree was there.
    repo.git(&["branch", "wt/half"]);
    plant(&repo, &creating(5, "half"));
    // A worktree in our folder nobody holds.
    let stray = repo.tree("stray").to_string_lossy().into_owned();
    repo.git(&["worktree", "add", "-q", "-b", "wt/stray", &stray, "main"]);

    let found = repo.trees.reconcile().await.unwrap();
    assert_eq!(
        found,
        vec![
            Reconciled::Missing {
                task: task(2),
                name: name("gone")
            },
            Reconciled::Completed {
                task: task(3),
                name: name("added")
            },
            Reconciled::Abandoned {
                task: task(4),
                name: name("never"),
                branch_kept: false,
            },
            Reconciled::Abandoned {
                task: task(5),
                name: name("half"),
                branch_kept: true,
            },
            Reconciled::Unbound {
                path: ".agent_tutorial/worktrees/stray".into()
            },
        ]
    );
    let states: Vec<(i64, BindingState)> = repo
        .trees
        .bindings()
        .all()
        .unwrap()
        .into_iter()
        .map(|b| (b.task.0, b.state))
        .collect();
    assert_eq!(
        states,
        vec![
            (1, BindingState::Active),
            (
                2,
                BindingState::NeedsReview {
                    review: Review::Missing
                }
            ),
            (3, BindingState::Active),
            (
                4,
                BindingState::Failed {
                    message: "the process ended before the worktree was ready".into()
                }
            ),
            (
                5,
                BindingState::Failed {
                    message:
                        "the process ended before the worktree was ready; its branch wt/half is kept"
                            .into()
                }
            ),
        ]
    );
    // Git's record of the deleted one is pruned; its branch (its work) is kept.
    let list = repo.git(&["worktree", "list", "--porcelain"]);
    assert!(!list.contains("worktrees/gone"), "{list}");
    assert_eq!(
        repo.branches(),
        "main\nwt/added\nwt/fine\nwt/gone\nwt/half\nwt/stray\n"
    );
    assert!(repo.trees.route(task(3)).is_ok());
    // A second start finds nothing new but the stray worktree.
    assert_eq!(
        repo.trees.reconcile().await.unwrap(),
        vec![Reconciled::Unbound {
            path: ".agent_tutorial/worktrees/stray".into()
        }]
    );
}

#[tokio::test]
async fn an_interrupted_create_whose_folder_points_at_another_repository_is_not_completed() {
    let repo = Repo::new();
    let other = Repo::new();
    let added = repo.tree("swapped").to_string_lossy().into_owned();
    repo.git(&["worktree", "add", "-q", "-b", "wt/swapped", &added, "main"]);
    plant(&repo, &creating(1, "swapped"));
    // Git still lists it, but its `.git` now names another repository's record.
    std::fs::write(
        repo.tree("swapped").join(".git"),
        format!(
            "gitdir: {}/.git/worktrees/swapped\n",
            other.root().display()
        ),
    )
    .unwrap();
    assert_eq!(
        repo.trees.reconcile().await.unwrap(),
        vec![Reconciled::Abandoned {
            task: task(1),
            name: name("swapped"),
            branch_kept: true,
        }]
    );
    assert!(repo.trees.route(task(1)).is_err());
}
