//! The names the harness accepts for tools, skills and memory records: one check, three rule
//! sets side by side, so a difference between them is a visible choice rather than drift.
//!
//! | rule | characters | length | ends |
//! |---|---|---|---|
//! | [`NameRule::Tool`] | `A-Z a-z 0-9 _` | 1–64 | any |
//! | [`NameRule::Skill`] | `a-z 0-9 -` | 1–64 | not `-` |
//! | [`NameRule::Memory`] | `a-z 0-9 - _` | 1–64 | any |
//!
//! Tool names follow what model APIs accept for function names; skill names are folder names
//! that appear in prose (`skills/<name>/`); memory names are file-name stems the model writes.

/// The longest name any rule accepts, in bytes (all allowed characters are ASCII).
pub const MAX_NAME_LEN: usize = 64;

/// Which kind of name is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// A tool name, as sent to the model.
    Tool,
    /// A skill name (equal to its folder name).
    Skill,
    /// A memory record name (the stem of its file name).
    Memory,
}

impl NameRule {
    fn allows_byte(self, b: u8) -> bool {
        match self {
            Self::Tool => b.is_ascii_alphanumeric() || b == b'_',
            Self::Skill => b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-',
            Self::Memory => b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_',
        }
    }

    fn allows_hyphen_at_ends(self) -> bool {
        !matches!(self, Self::Skill)
    }

    /// Whether `name` follows this rule.
    pub fn accepts(self, name: &str) -> bool {
        let ends_ok =
            self.allows_hyphen_at_ends() || !(name.starts_with('-') || name.ends_with('-'));
        !name.is_empty()
            && name.len() <= MAX_NAME_LEN
            && ends_ok
            && name.bytes().all(|b| self.allows_byte(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every rule on the same names: (name, tool, skill, memory).
    #[test]
    fn the_three_rules_side_by_side() {
        let long = "a".repeat(MAX_NAME_LEN);
        let too_long = "a".repeat(MAX_NAME_LEN + 1);
        let cases: [(&str, bool, bool, bool); 12] = [
            ("read_file", true, false, true),
            ("ReadFile", true, false, false),
            ("prefers-tabs", false, true, true),
            ("-lead", false, false, true),
            ("trail-", false, false, true),
            ("snake_case", true, false, true),
            ("v2", true, true, true),
            ("", false, false, false),
            ("has space", false, false, false),
            ("dot.name", false, false, false),
            ("é", false, false, false),
            ("a/b", false, false, false),
        ];
        for (name, tool, skill, memory) in cases {
            let got = (
                NameRule::Tool.accepts(name),
                NameRule::Skill.accepts(name),
                NameRule::Memory.accepts(name),
            );
            assert_eq!(got, (tool, skill, memory), "{name:?}");
        }
        for rule in [NameRule::Tool, NameRule::Skill, NameRule::Memory] {
            assert!(rule.accepts(&long), "{rule:?}");
            assert!(!rule.accepts(&too_long), "{rule:?}");
        }
    }
}
