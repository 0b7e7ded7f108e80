//! [`Worktrees::reconcile`]: at start, the bindings are set against what git records, so a
//! crash in the middle of a create, or a worktree folder deleted by hand, is settled and
//! reported instead of routed to.

use agent_board::TaskId;

use crate::binding::{BindingState, Review};
use crate::error::WorktreeError;
use crate::manager::{WORKTREES_DIR, Worktrees};
use crate::name::WorktreeName;
use crate::porcelain::{self, Listed};

/// One thing [`Worktrees::reconcile`] settled or found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reconciled {
    /// A create interrupted after git added the worktree: verified, now active.
    Completed {
        /// The task.
        task: TaskId,
        /// The worktree.
        name: WorktreeName,
    },
    /// A create interrupted before the worktree was there: now failed.
    Abandoned {
        /// The task.
        task: TaskId,
        /// The worktree.
        name: WorktreeName,
        /// Git had made its branch already: it is kept (it may hold nothing but the base),
        /// and a new create under this name fails until someone deletes it.
        branch_kept: bool,
    },
    /// An active or kept worktree whose folder is gone: git's record was pruned and the
    /// binding needs review (its branch is kept).
    Missing {
        /// The task.
        task: TaskId,
        /// The worktree.
        name: WorktreeName,
    },
    /// A worktree in the worktrees folder that no binding holds: left as it is.
    Unbound {
        /// Its folder, workspace-relative.
        path: String,
    },
}

impl Worktrees {
    /// Settles the bindings against `git worktree list`: an interrupted create is completed or
    /// abandoned, a worktree whose folder is gone is pruned from git's records and marked for
    /// review, and a worktree nobody holds is reported (never removed).
    pub async fn reconcile(&self) -> Result<Vec<Reconciled>, WorktreeError> {
        let bindings = self.bindings().all()?;
        if bindings.is_empty() && !self.has_folder() {
            return Ok(Vec::new());
        }
        self.repository().await?;
        let folder = self.folder()?;
        let list = |listed: String| porcelain::worktree_list(&listed);
        let listed = list(
            self.git()
                .run(None, &["worktree", "list", "--porcelain", "-z"])
                .await?,
        );
        let live = |name: &WorktreeName| -> Option<&Listed> {
            let path = folder.join(name.as_str());
            listed.iter().find(|w| {
                w.path == path && !w.prunable && w.branch.as_deref() == Some(&name.branch())
            })
        };
        let mut found = Vec::new();
        let mut missing = Vec::new();
        for binding in &bindings {
            let (task, name) = (binding.task, binding.name.clone());
            match binding.state {
                BindingState::Creating => {
                    // Listed by git, and the folder the one git recorded (as routing checks it).
                    let here = live(&name).is_some() && self.verified(&name).is_ok();
                    if here {
                        self.bindings().set(binding, BindingState::Active)?;
                        found.push(Reconciled::Completed { task, name });
                    } else {
                        let branch = format!("refs/heads/{}", name.branch());
                        let branch_kept = self
                            .git()
                            .output(None, &["rev-parse", "--verify", "--quiet", &branch])
                            .await?
                            .code
                            == 0;
                        let mut message =
                            "the process ended before the worktree was ready".to_string();
                        if branch_kept {
                            message.push_str(&format!("; its branch {} is kept", name.branch()));
                        }
                        self.bindings()
                            .set(binding, BindingState::Failed { message })?;
                        found.push(Reconciled::Abandoned {
                            task,
                            name,
                            branch_kept,
                        });
                    }
                }
                BindingState::Active | BindingState::Kept
                    if live(&name).is_none() || !folder.join(name.as_str()).is_dir() =>
                {
                    missing.push(binding.clone());
                    found.push(Reconciled::Missing { task, name });
                }
                _ => {}
            }
        }
        if !missing.is_empty() {
            self.git().run(None, &["worktree", "prune"]).await?;
            for binding in &missing {
                self.bindings().set(
                    binding,
                    BindingState::NeedsReview {
                        review: Review::Missing,
                    },
                )?;
            }
        }
        for worktree in &listed {
            let Ok(rest) = worktree.path.strip_prefix(&folder) else {
                continue;
            };
            let held = bindings
                .iter()
                .any(|b| b.state.holds_name() && rest == std::path::Path::new(b.name.as_str()));
            if !held {
                found.push(Reconciled::Unbound {
                    path: format!("{WORKTREES_DIR}/{}", rest.display()),
                });
            }
        }
        Ok(found)
    }
}
