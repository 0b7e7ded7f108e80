//! How a server's tool is named to the model: `mcp__<alias>__<name>`, only `[a-z0-9_]`, at
//! most 64 characters (Claude Code's scheme, inside the registry's tool-name rule).
//!
//! Normalizing is lossy (`lookup-one` and `lookup_one` both become `lookup_one`), so two tools
//! can end up with one name: the caller refuses such a server whole rather than expose one
//! and hide the other.

use sha2::{Digest, Sha256};

/// The longest tool name the model is sent (the registry's rule).
pub const MAX_TOOL_NAME_LEN: usize = 64;
/// The longest alias, normalized: leaves at least 24 characters for the tool's own name.
pub const MAX_ALIAS_LEN: usize = 24;
/// What every MCP tool's name starts with.
pub const PREFIX: &str = "mcp__";

/// Lower-case ASCII letters, digits and `_`; every other character (also a non-ASCII one)
/// becomes `_`.
pub fn normalize(text: &str) -> String {
    text.chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '_') => c,
            _ => '_',
        })
        .collect()
}

/// The alias as it appears in tool names, if it can: 1 to [`MAX_ALIAS_LEN`] characters of
/// `[A-Za-z0-9_-]` and no `__` once normalized (so the first `__` after the prefix always ends
/// the alias, and `a__b` + `c` cannot pose as `a` + `b__c`).
pub fn normalize_alias(alias: &str) -> Option<String> {
    let valid = !alias.is_empty()
        && alias.len() <= MAX_ALIAS_LEN
        && alias
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let normalized = normalize(alias);
    (valid && !normalized.contains("__")).then_some(normalized)
}

/// The name the model calls `tool` of the server whose normalized alias is `alias` by:
/// `mcp__<alias>__<tool>` normalized; cut to [`MAX_TOOL_NAME_LEN`] with the first 8 hex
/// digits of the tool name's SHA-256 at the end when it is longer, so two long names that
/// share a beginning still differ. `None` for an empty tool name.
///
/// ```
/// assert_eq!(agent_mcp::names::exposed("git", "Lookup-One").as_deref(), Some("mcp__git__lookup_one"));
/// ```
pub fn exposed(alias: &str, tool: &str) -> Option<String> {
    if tool.is_empty() {
        return None;
    }
    let name = format!("{PREFIX}{alias}__{}", normalize(tool));
    if name.len() <= MAX_TOOL_NAME_LEN {
        return Some(name);
    }
    let hash = format!("{:x}", Sha256::digest(tool.as_bytes()));
    // All ASCII, so any byte index is a character boundary.
    let keep = MAX_TOOL_NAME_LEN - 9;
    Some(format!("{}_{}", &name[..keep], &hash[..8]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalized_and_prefixed() {
        assert_eq!(
            exposed("files", "Read-File"),
            Some("mcp__files__read_file".into())
        );
        assert_eq!(
            exposed("files", "lookup.one"),
            Some("mcp__files__lookup_one".into())
        );
        assert_eq!(exposed("files", "ünï"), Some("mcp__files___n_".into()));
        assert_eq!(exposed("files", ""), None);
    }

    #[test]
    fn long_names_are_cut_with_a_hash_of_the_whole_name() {
        let long = "a".repeat(100);
        let name = exposed("srv", &long);
        // `mcp__srv__` + 45 of the a's + `_` + the first 8 hex digits of SHA-256(100 a's).
        let expected = format!("mcp__srv__{}_28165978", "a".repeat(45));
        assert_eq!(name.as_deref(), Some(expected.as_str()));
        assert_eq!(name.map(|n| n.len()), Some(MAX_TOOL_NAME_LEN));
    }

    #[test]
    fn aliases_are_checked() {
        assert_eq!(normalize_alias("My-Server"), Some("my_server".into()));
        assert_eq!(normalize_alias("a"), Some("a".into()));
        assert_eq!(normalize_alias(""), None);
        assert_eq!(normalize_alias("a__b"), None);
        assert_eq!(normalize_alias("a-_b"), None);
        assert_eq!(normalize_alias("a.b"), None);
        assert_eq!(normalize_alias(&"a".repeat(MAX_ALIAS_LEN + 1)), None);
    }
}
