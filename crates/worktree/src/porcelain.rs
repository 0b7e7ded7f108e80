//! Git's machine-readable output, parsed: `status --porcelain=v1 -z` and
//! `worktree list --porcelain -z`. NUL-separated, so no path (a newline in a file name
//! included) can be read as two.

use std::path::PathBuf;

use crate::binding::{MAX_REVIEW_PATHS, Review};

/// What `git status --porcelain=v1 -z --ignored=matching --untracked-files=all` listed, as the
/// review a removal needs; `None` when the worktree is clean.
pub fn files_review(status: &str) -> Option<Review> {
    let (mut changed, mut untracked, mut ignored) = (Vec::new(), Vec::new(), Vec::new());
    let mut total = 0;
    let mut fields = status.split('\0');
    while let Some(entry) = fields.next() {
        let (Some(code), Some(path)) = (entry.get(..2), entry.get(3..)) else {
            continue;
        };
        if code.starts_with(['R', 'C']) {
            // A rename or copy names its source in the next field.
            fields.next();
        }
        total += 1;
        let list = match code {
            "??" => &mut untracked,
            "!!" => &mut ignored,
            _ => &mut changed,
        };
        if list.len() < MAX_REVIEW_PATHS {
            list.push(path.to_string());
        }
    }
    (total > 0).then_some(Review::Files {
        changed,
        untracked,
        ignored,
        total,
    })
}

/// One worktree of `git worktree list --porcelain -z`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Its folder, as git records it.
    pub path: PathBuf,
    /// Its branch (`wt/x`, without `refs/heads/`), `None` when detached or bare.
    pub branch: Option<String>,
    /// Git found its folder gone (`prunable`).
    pub prunable: bool,
}

/// Parses `git worktree list --porcelain -z`: attributes end with NUL, a worktree with an
/// empty attribute.
pub fn worktree_list(output: &str) -> Vec<Listed> {
    let mut listed = Vec::new();
    let mut current: Option<Listed> = None;
    for field in output.split('\0') {
        if field.is_empty() {
            listed.extend(current.take());
            continue;
        }
        let (key, value) = field.split_once(' ').unwrap_or((field, ""));
        match (key, current.as_mut()) {
            ("worktree", _) => {
                listed.extend(current.take());
                current = Some(Listed {
                    path: PathBuf::from(value),
                    branch: None,
                    prunable: false,
                });
            }
            ("branch", Some(worktree)) => {
                worktree.branch = Some(value.strip_prefix("refs/heads/").unwrap_or(value).into());
            }
            ("prunable", Some(worktree)) => worktree.prunable = true,
            _ => {}
        }
    }
    listed.extend(current);
    listed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_sorts_changed_untracked_and_ignored_and_skips_a_rename_source() {
        let status = " M a.rs\0R  new.rs\0old.rs\0?? notes/x y.txt\0!! .env\0!! target/\0";
        assert_eq!(
            files_review(status),
            Some(Review::Files {
                changed: vec!["a.rs".into(), "new.rs".into()],
                untracked: vec!["notes/x y.txt".into()],
                ignored: vec![".env".into(), "target/".into()],
                total: 5,
            })
        );
        assert_eq!(files_review(""), None);
    }

    #[test]
    fn a_long_status_names_the_first_paths_and_counts_them_all() {
        let status: String = (0..25).map(|i| format!("?? f{i}\0")).collect();
        let Some(Review::Files {
            untracked, total, ..
        }) = files_review(&status)
        else {
            panic!("not a files review");
        };
        assert_eq!((untracked.len(), total), (MAX_REVIEW_PATHS, 25));
    }

    #[test]
    fn a_worktree_list_gives_paths_branches_and_prunable_ones() {
        let out = "worktree /r\0HEAD 1111\0branch refs/heads/main\0\0\
                   worktree /r/.agent_tutorial/worktrees/a\nb\0HEAD 2222\0branch refs/heads/wt/a\0prunable gitdir file points to non-existent location\0\0\
                   worktree /r/d\0HEAD 3333\0detached\0\0";
        assert_eq!(
            worktree_list(out),
            vec![
                Listed {
                    path: "/r".into(),
                    branch: Some("main".into()),
                    prunable: false
                },
                Listed {
                    path: "/r/.agent_tutorial/worktrees/a\nb".into(),
                    branch: Some("wt/a".into()),
                    prunable: true
                },
                Listed {
                    path: "/r/d".into(),
                    branch: None,
                    prunable: false
                },
            ]
        );
    }
}
