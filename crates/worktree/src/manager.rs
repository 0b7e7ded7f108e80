//! [`Worktrees`]: create, keep and remove a task's worktree, and route a task's work to it.
//!
//! Create records the intent before git runs, so a crash leaves a `creating` binding that
//! [`Worktrees::reconcile`] settles, never a worktree nobody knows of. Remove checks for
//! anything that would be lost — ignored files included, and the branch against the base ref
//! rather than an upstream — and only then runs `git worktree remove` and `git branch -d`,
//! neither forced.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_board::{Status, TaskId};
use agent_workspace::{Clock, FileKind, Inside, Workspace};

use crate::binding::{Binding, BindingError, BindingState, Bindings, Review};
use crate::error::{RouteError, WorktreeError};
use crate::git::{Git, GitError};
use crate::name::WorktreeName;
use crate::porcelain;

/// The worktrees' folder, workspace-relative: under the harness's state folder, with a
/// `.gitignore` of `*` so the repository's own status never lists them.
pub const WORKTREES_DIR: &str = ".agent_tutorial/worktrees";

/// The longest base ref accepted.
const MAX_BASE_CHARS: usize = 200;

/// The most bytes read of a `.git` file or a worktree's `gitdir` record.
const MAX_LINK_BYTES: u64 = 4096;

/// What [`Worktrees::remove`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removal {
    /// The folder and the branch are gone.
    Removed(Binding),
    /// Something would have been lost: both stay, the binding says what.
    NeedsReview(Binding),
}

/// The worktrees of one repository and their bindings to tasks.
#[derive(Debug, Clone)]
pub struct Worktrees {
    git: Git,
    bindings: Bindings,
}

impl Worktrees {
    /// The worktrees of the repository at `git`'s workspace root, transitions timed by `clock`.
    pub fn new(git: Git, clock: Arc<dyn Clock>) -> Self {
        let bindings = Bindings::new(git.workspace(), clock);
        Self { git, bindings }
    }

    /// The bindings (for listing and the audit log).
    pub fn bindings(&self) -> &Bindings {
        &self.bindings
    }

    fn workspace(&self) -> &Workspace {
        self.git.workspace()
    }

    /// The git runner.
    pub(crate) fn git(&self) -> &Git {
        &self.git
    }

    /// Whether the worktrees' folder exists (a repository that never had one needs no git
    /// call at start).
    pub(crate) fn has_folder(&self) -> bool {
        std::fs::symlink_metadata(self.workspace().root().join(WORKTREES_DIR)).is_ok()
    }

    /// Adds the worktree `name` on a new branch `wt/<name>` from `base` (default: the current
    /// branch) for `task`, and binds it. A name or task already bound is refused before git
    /// runs; a git failure leaves the binding `failed` with git's message.
    pub async fn create(
        &self,
        task: TaskId,
        name: &WorktreeName,
        base: Option<&str>,
    ) -> Result<Binding, WorktreeError> {
        self.repository().await?;
        let base = self.base(base).await?;
        let intent = Binding {
            task,
            name: name.clone(),
            base,
            state: BindingState::Creating,
        };
        let intent = self.bindings.locked(|locked| {
            if let Some(old) = locked.get(task)?
                && old.state.holds_name()
            {
                return Err(WorktreeError::AlreadyBound {
                    task,
                    name: old.name,
                    state: old.state.to_string(),
                });
            }
            if let Some(other) = locked
                .all()?
                .into_iter()
                .find(|b| b.name == *name && b.task != task && b.state.holds_name())
            {
                return Err(WorktreeError::NameTaken {
                    name: name.clone(),
                    task: other.task,
                });
            }
            locked.write(&intent, BindingState::Creating)
        })?;
        match self.add(&intent).await {
            Ok(()) => self.bindings.set(&intent, BindingState::Active),
            Err(message) => {
                self.bindings.set(
                    &intent,
                    BindingState::Failed {
                        message: message.clone(),
                    },
                )?;
                Err(WorktreeError::CreateFailed {
                    task,
                    name: name.clone(),
                    message,
                })
            }
        }
    }

    /// Adds and verifies the worktree; the error is the message the binding keeps.
    async fn add(&self, intent: &Binding) -> Result<(), String> {
        let folder = self.folder().map_err(|err| err.to_string())?;
        let path = folder.join(intent.name.as_str());
        if std::fs::symlink_metadata(&path).is_ok() {
            return Err(format!(
                "{} exists already",
                self.workspace().relative(&path)
            ));
        }
        let branch = intent.name.branch();
        let path_arg = path.to_string_lossy().into_owned();
        self.git
            .run(
                None,
                &[
                    "worktree",
                    "add",
                    "--quiet",
                    "--no-track",
                    "-b",
                    &branch,
                    &path_arg,
                    &intent.base,
                ],
            )
            .await
            .map_err(|err| git_message(&err))?;
        let top = self
            .git
            .run(Some(&path), &["rev-parse", "--show-toplevel"])
            .await
            .map_err(|err| git_message(&err))?;
        let head = self
            .git
            .run(Some(&path), &["symbolic-ref", "--short", "HEAD"])
            .await
            .map_err(|err| git_message(&err))?;
        if Path::new(top.trim()) != path || head.trim() != branch {
            return Err(format!(
                "the new worktree is not what was asked: {} on {}",
                top.trim(),
                head.trim()
            ));
        }
        Ok(())
    }

    /// Keeps an active worktree for the user: its task is done, nothing more runs there, and
    /// the folder and branch stay until a removal.
    pub async fn keep(&self, task: TaskId) -> Result<Binding, WorktreeError> {
        let binding = self.bound(task)?;
        if binding.state != BindingState::Active {
            return Err(wrong_state(&binding, "keeping", "active"));
        }
        self.bindings.set(&binding, BindingState::Kept)
    }

    /// Removes `task`'s worktree and branch when nothing would be lost; otherwise marks it
    /// `needs_review` with what was found and leaves both. Refused while the task is pending
    /// or in progress (`status`).
    pub async fn remove(&self, task: TaskId, status: Status) -> Result<Removal, WorktreeError> {
        if matches!(status, Status::Pending | Status::InProgress) {
            return Err(WorktreeError::TaskNotFinished {
                task,
                status: status.as_str(),
            });
        }
        let binding = self.bound(task)?;
        if !matches!(
            binding.state,
            BindingState::Active | BindingState::Kept | BindingState::NeedsReview { .. }
        ) {
            return Err(wrong_state(
                &binding,
                "removal",
                "active, kept or needs_review",
            ));
        }
        self.repository().await?;
        match self.removal_review(&binding).await? {
            Some(review) => {
                let kept = self
                    .bindings
                    .set(&binding, BindingState::NeedsReview { review })?;
                Ok(Removal::NeedsReview(kept))
            }
            None => Ok(Removal::Removed(
                self.bindings.set(&binding, BindingState::Removed)?,
            )),
        }
    }

    /// Checks the worktree and removes it; `Some` is why it stays.
    async fn removal_review(&self, binding: &Binding) -> Result<Option<Review>, WorktreeError> {
        let path = self.folder()?.join(binding.name.as_str());
        let branch = binding.name.branch();
        let present = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if present {
            let status = self
                .git
                .run(
                    Some(&path),
                    &[
                        "status",
                        "--porcelain=v1",
                        "-z",
                        "--ignored=matching",
                        "--untracked-files=all",
                    ],
                )
                .await?;
            if let Some(review) = porcelain::files_review(&status) {
                return Ok(Some(review));
            }
        }
        // Contained in the base, whatever any upstream says: `@{push}` is not a merge.
        let merged = self
            .git
            .output(
                None,
                &[
                    "merge-base",
                    "--is-ancestor",
                    &format!("refs/heads/{branch}"),
                    &binding.base,
                ],
            )
            .await?;
        match merged.code {
            0 => {}
            1 => {
                return Ok(Some(Review::NotMerged {
                    branch,
                    base: binding.base.clone(),
                }));
            }
            code => {
                return Err(GitError::Failed {
                    args: "merge-base --is-ancestor".into(),
                    code,
                    stderr: merged.stderr,
                }
                .into());
            }
        }
        let path_arg = path.to_string_lossy().into_owned();
        let steps: [&[&str]; 2] = if present {
            [
                &["worktree", "remove", &path_arg],
                &["branch", "-d", &branch],
            ]
        } else {
            [&["worktree", "prune"], &["branch", "-d", &branch]]
        };
        for args in steps {
            if let Err(err) = self.git.run(None, args).await {
                return Ok(Some(Review::GitRefused {
                    message: git_message(&err),
                }));
            }
        }
        Ok(None)
    }

    /// The workspace `task`'s work runs in: its active worktree, checked now. Every doubt is
    /// an error — a caller never falls back to the repository's root.
    pub fn route(&self, task: TaskId) -> Result<Workspace, RouteError> {
        let stale = |why: String| RouteError::Stale { task, why };
        let binding = self
            .bindings
            .get(task)
            .map_err(|err| stale(err.to_string()))?
            .ok_or(RouteError::Unknown { task })?;
        if binding.state != BindingState::Active {
            return Err(RouteError::NotActive {
                task,
                state: binding.state.to_string(),
            });
        }
        self.verified(&binding.name).map_err(stale)
    }

    /// The worktree `name` as a workspace, if its folder is what git recorded for this
    /// repository: no link on the way, a folder, its `.git` and git's record naming each other.
    /// What routing and restart reconciliation both trust.
    pub(crate) fn verified(&self, name: &WorktreeName) -> Result<Workspace, String> {
        let relative = format!("{WORKTREES_DIR}/{name}");
        let inside = self
            .workspace()
            .inside(&relative)
            .map_err(|err| err.to_string())?;
        // A link anywhere on the way resolves somewhere else than the name says.
        if inside.path() != Path::new(&relative) {
            return Err(format!("{relative} leads elsewhere"));
        }
        if self.workspace().kind(&inside).map_err(|e| e.to_string())? != Some(FileKind::Directory) {
            return Err(format!("{relative} is not a folder"));
        }
        self.check_link(&inside)?;
        Workspace::new(self.workspace().root().join(inside.path())).map_err(|err| err.to_string())
    }

    /// The worktree's `.git` file names this repository's record of it, and that record names
    /// the worktree back: a folder someone swapped in, or one of another repository, is not
    /// ours.
    fn check_link(&self, worktree: &Inside) -> Result<(), String> {
        let ws = self.workspace();
        let read = |relative: &str| -> Result<String, String> {
            let inside = ws.inside(relative).map_err(|err| err.to_string())?;
            ws.read_to_string(&inside, MAX_LINK_BYTES)
                .map_err(|err| err.to_string())
        };
        let dot_git = format!("{}/.git", worktree.path().display());
        let link = read(&dot_git)?;
        let admin = link
            .trim_end()
            .strip_prefix("gitdir: ")
            .map(PathBuf::from)
            .ok_or_else(|| format!("{dot_git} is not a worktree's link"))?;
        let records = ws.root().join(".git/worktrees");
        let Ok(record) = admin.strip_prefix(&records) else {
            return Err(format!("{dot_git} points outside this repository"));
        };
        let back = read(&format!(".git/worktrees/{}/gitdir", record.display()))?;
        if Path::new(back.trim_end()) != ws.root().join(&dot_git) {
            return Err(format!("this repository records {record:?} elsewhere"));
        }
        Ok(())
    }

    /// The binding of `task`, which must exist.
    pub(crate) fn bound(&self, task: TaskId) -> Result<Binding, WorktreeError> {
        self.bindings
            .get(task)?
            .ok_or(WorktreeError::NotBound { task })
    }

    /// The worktrees' folder, created with its `.gitignore` when missing.
    pub(crate) fn folder(&self) -> Result<PathBuf, WorktreeError> {
        let ws = self.workspace();
        let folder = ws.inside(WORKTREES_DIR).map_err(BindingError::from)?;
        ws.create_dir_all(&folder).map_err(BindingError::from)?;
        let ignore = ws
            .inside(&format!("{WORKTREES_DIR}/.gitignore"))
            .map_err(BindingError::from)?;
        if ws.kind(&ignore).map_err(BindingError::from)?.is_none() {
            ws.write_new(&ignore, b"*\n").map_err(BindingError::from)?;
        }
        Ok(ws.root().join(folder.path()))
    }

    /// The workspace is a repository's top folder with a `.git` folder of its own.
    pub(crate) async fn repository(&self) -> Result<(), WorktreeError> {
        let root = self.workspace().root();
        let why = match std::fs::symlink_metadata(root.join(".git")) {
            Ok(meta) if meta.is_dir() => None,
            Ok(meta) if meta.is_symlink() => Some(".git is a link".to_string()),
            Ok(_) => Some(".git is a file: its repository is elsewhere".to_string()),
            Err(_) => Some("there is no .git folder".to_string()),
        };
        if let Some(why) = why {
            return Err(WorktreeError::NotARepository { why });
        }
        let top = self
            .git
            .run(None, &["rev-parse", "--show-toplevel"])
            .await?;
        if Path::new(top.trim()) != root {
            return Err(WorktreeError::NotARepository {
                why: format!("git's top folder is {}", top.trim()),
            });
        }
        Ok(())
    }

    /// The base ref: `given`, checked to be a commit of this repository, or the current
    /// branch (the commit when detached).
    async fn base(&self, given: Option<&str>) -> Result<String, WorktreeError> {
        let Some(given) = given else {
            let branch = self
                .git
                .output(None, &["symbolic-ref", "--quiet", "--short", "HEAD"])
                .await?;
            if branch.code == 0 {
                return Ok(branch.stdout.trim().to_string());
            }
            let head = self
                .git
                .run(None, &["rev-parse", "--verify", "HEAD"])
                .await?;
            return Ok(head.trim().to_string());
        };
        let refused = || WorktreeError::BadBase {
            given: given.chars().take(100).collect(),
        };
        if given.is_empty()
            || given.starts_with('-')
            || given.chars().count() > MAX_BASE_CHARS
            || given.chars().any(char::is_control)
        {
            return Err(refused());
        }
        let commit = format!("{given}^{{commit}}");
        let out = self
            .git
            .output(
                None,
                &[
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    "--end-of-options",
                    &commit,
                ],
            )
            .await?;
        if out.code == 0 {
            Ok(given.to_string())
        } else {
            Err(refused())
        }
    }
}

/// Git's own words for a failure (its stderr), or the error when it did not run.
fn git_message(err: &GitError) -> String {
    match err {
        GitError::Failed { stderr, .. } if !stderr.is_empty() => stderr.clone(),
        other => other.to_string(),
    }
}

fn wrong_state(binding: &Binding, action: &'static str, needs: &'static str) -> WorktreeError {
    WorktreeError::WrongState {
        task: binding.task,
        state: binding.state.to_string(),
        action,
        needs,
    }
}
