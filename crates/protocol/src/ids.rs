//! Who and when: the identities every event and inbox item carries once a session holds more
//! than one agent (the lead, its subagents, and from chapter 15 on its teammates).

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// The name of one agent of a session. The agent the person talks to is [`AgentId::lead`];
/// a teammate's id is its name, a lowercase slug (`^[a-z0-9]+(-[a-z0-9]+)*$`, at most 32
/// characters), so an id can name a file, a prefix on the terminal and a mailbox without
/// escaping. Cheap to clone: every event carries one.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct AgentId(Arc<str>);

/// Why a name cannot be an [`AgentId`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentIdError {
    /// Empty, too long, or not a lowercase slug.
    #[error(
        "`{0}` is not an agent name: use 1 to {max} lowercase letters, digits and single hyphens (like `reviewer-2`)",
        max = AgentId::MAX_LEN
    )]
    NotASlug(String),
}

impl AgentId {
    /// The longest name accepted.
    pub const MAX_LEN: usize = 32;
    /// The lead's name.
    pub const LEAD: &'static str = "lead";

    /// The agent the person talks to.
    pub fn lead() -> Self {
        Self(Arc::from(Self::LEAD))
    }

    /// A checked name (see the type's documentation for the rule).
    pub fn new(name: &str) -> Result<Self, AgentIdError> {
        let slug = !name.is_empty()
            && name.len() <= Self::MAX_LEN
            && name.split('-').all(|part| {
                !part.is_empty()
                    && part
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            });
        if slug {
            Ok(Self(Arc::from(name)))
        } else {
            Err(AgentIdError::NotASlug(name.escape_debug().to_string()))
        }
    }

    /// The `n`th subagent (chapter 6) started by this agent: `<parent>-sub<n>`. Built, not
    /// parsed, so it may exceed [`Self::MAX_LEN`] for a long parent name; it names events only.
    pub fn subagent(&self, n: u32) -> Self {
        Self(Arc::from(format!("{}-sub{n}", self.0)))
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the lead.
    pub fn is_lead(&self) -> bool {
        &*self.0 == Self::LEAD
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AgentId({})", self.0)
    }
}

impl TryFrom<String> for AgentId {
    type Error = AgentIdError;

    fn try_from(name: String) -> Result<Self, Self::Error> {
        Self::new(&name)
    }
}

impl From<AgentId> for String {
    fn from(id: AgentId) -> Self {
        id.0.to_string()
    }
}

/// One turn of one agent, numbered from 1 in that agent's session: a prompt the person typed,
/// a scheduled run, or (chapter 15) a batch of mail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TurnId(pub u64);

impl fmt::Display for TurnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "turn {}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lowercase_slugs_and_the_lead_is_one() {
        let accepted: Vec<bool> = ["lead", "reviewer-2", "a", "x-y-z", "ab12"]
            .iter()
            .map(|n| AgentId::new(n).is_ok())
            .collect();
        assert_eq!(accepted, vec![true; 5]);
        let refused: Vec<bool> = [
            "",
            "Lead",
            "-a",
            "a-",
            "a--b",
            "a b",
            "../x",
            &"a".repeat(33),
        ]
        .iter()
        .map(|n| AgentId::new(n).is_err())
        .collect();
        assert_eq!(refused, vec![true; 8]);
        assert_eq!(AgentId::new("lead").unwrap(), AgentId::lead());
        assert!(AgentId::lead().is_lead());
    }

    #[test]
    fn an_id_serializes_as_its_name_and_is_checked_when_read() {
        let json = serde_json::to_string(&AgentId::new("alice").unwrap()).unwrap();
        assert_eq!(json, "\"alice\"");
        let bad = serde_json::from_str::<AgentId>("\"../etc\"").unwrap_err();
        assert_eq!(
            bad.to_string(),
            "`../etc` is not an agent name: use 1 to 32 lowercase letters, digits and single hyphens (like `reviewer-2`)"
        );
    }
}
