//! [`WorktreeName`]: the one part of a worktree the model chooses, checked to be a safe slug
//! before it becomes a folder name and a branch name.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The longest name: short enough for a branch and a folder, long enough to say what it is.
pub const MAX_NAME_CHARS: usize = 40;

/// The prefix of every branch the crate creates: `wt/<name>`.
pub const BRANCH_PREFIX: &str = "wt/";

/// A worktree's name: lower-case ASCII letters, digits and single hyphens, starting with a
/// letter or digit, at most [`MAX_NAME_CHARS`]. No `.`, `/` or `..` can reach a path or a ref.
///
/// ```
/// use agent_worktree::WorktreeName;
/// assert_eq!(WorktreeName::new("fix-login").unwrap().branch(), "wt/fix-login");
/// assert!(WorktreeName::new("../x").is_err());
/// assert!(WorktreeName::new("a--b").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct WorktreeName(String);

/// A name that is not a safe slug, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{given}` is not a worktree name: use 1 to {MAX_NAME_CHARS} lower-case letters, digits and \
     single hyphens, starting and ending with a letter or digit"
)]
pub struct NameError {
    given: String,
}

impl WorktreeName {
    /// Checks `name`.
    pub fn new(name: &str) -> Result<Self, NameError> {
        let bytes = name.as_bytes();
        let slug = !bytes.is_empty()
            && bytes.len() <= MAX_NAME_CHARS
            && bytes
                .iter()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
            && bytes.first() != Some(&b'-')
            && bytes.last() != Some(&b'-')
            && !name.contains("--");
        if slug {
            Ok(Self(name.to_string()))
        } else {
            let given: String = name.chars().take(MAX_NAME_CHARS + 8).collect();
            Err(NameError { given })
        }
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Its branch: `wt/<name>`.
    pub fn branch(&self) -> String {
        format!("{BRANCH_PREFIX}{}", self.0)
    }
}

impl fmt::Display for WorktreeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for WorktreeName {
    /// A stored name is checked again: a planted record cannot name `../x`.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::new(&text).map_err(serde::de::Error::custom)
    }
}
