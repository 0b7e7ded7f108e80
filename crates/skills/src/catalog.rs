//! Scanning `skills/*/SKILL.md` into a bounded, sorted catalog.

use std::io::Read;

use agent_core::names::NameRule;
use agent_trust::{Fingerprint, TrustKind, Verdict, WorkspaceTrust};
use agent_workspace::{FileKind, Inside, Workspace};
use serde::Deserialize;

/// The most skills the catalog lists in the prompt; the rest are counted in its last line.
pub const MAX_CATALOG_ENTRIES: usize = 100;
/// The most bytes of catalog text in the prompt, so a repository with many skills cannot
/// crowd out the conversation.
pub const MAX_CATALOG_BYTES: usize = 8_000;
/// The longest skill name (the shared name rule's limit).
pub const MAX_NAME_LEN: usize = agent_core::names::MAX_NAME_LEN;
/// The most of a SKILL.md that is read: front matter for the catalog, the body for
/// `load_skill`. A repository's skill is untrusted input, so it is bounded like any read.
pub const MAX_SKILL_BYTES: u64 = 256 * 1024;
/// What the prompt says when there is no skill.
pub const NO_SKILLS: &str = "(No workspace skills are available.)";

/// One skill in the catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillEntry {
    /// The skill's slug, equal to its folder name: what `load_skill{name}` takes.
    pub name: String,
    /// The one-line description from the front matter: what the model decides by.
    pub description: String,
    /// The SKILL.md file, as the boundary resolved it.
    pub path: Inside,
    /// Lower-case hex SHA-256 of the file as scanned: what the user trusted, and what
    /// `load_skill` checks the body against.
    pub sha256: String,
}

impl SkillEntry {
    fn line(&self) -> String {
        format!("- **{}**: {}", self.name, self.description)
    }
}

#[derive(Debug, Deserialize)]
struct Header {
    name: String,
    description: String,
}

/// The skills of a workspace, as scanned at build time.
///
/// ```
/// use agent_skills::SkillCatalog;
/// use agent_workspace::Workspace;
///
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::create_dir_all(dir.path().join("skills/rust-test")).unwrap();
/// std::fs::write(
///     dir.path().join("skills/rust-test/SKILL.md"),
///     "---\nname: rust-test\ndescription: How to write a focused Rust test\n---\nUse #[test].\n",
/// )
/// .unwrap();
/// // A skill whose name does not match its folder is skipped with a warning.
/// std::fs::create_dir_all(dir.path().join("skills/other")).unwrap();
/// std::fs::write(
///     dir.path().join("skills/other/SKILL.md"),
///     "---\nname: rust-test\ndescription: A copy\n---\n",
/// )
/// .unwrap();
///
/// let catalog = SkillCatalog::scan(&Workspace::new(dir.path()).unwrap());
/// assert_eq!(catalog.render(), "- **rust-test**: How to write a focused Rust test");
/// assert_eq!(catalog.warnings().len(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillCatalog {
    /// Every valid skill, sorted by name (the rendered catalog may list fewer).
    entries: Vec<SkillEntry>,
    /// One line per skipped skill: the file and the reason.
    warnings: Vec<String>,
}

impl SkillCatalog {
    /// Scans `<workspace>/skills`. Invalid skills are skipped with a warning; one bad skill
    /// never hides the others. A missing folder is an empty catalog.
    pub fn scan(workspace: &Workspace) -> Self {
        let mut catalog = Self::default();
        let Ok(folder) = workspace.inside("skills") else {
            return catalog;
        };
        let Ok(entries) = workspace.list_dir(&folder) else {
            return catalog;
        };
        for entry in entries {
            if !matches!(entry.kind, FileKind::Directory | FileKind::Symlink) {
                continue;
            }
            let shown = format!("skills/{}/SKILL.md", entry.name);
            match Self::read_entry(workspace, &entry.name, &shown) {
                Ok(Some(entry)) => catalog.entries.push(entry),
                Ok(None) => {}
                Err(reason) => {
                    tracing::warn!("skipping skill {shown}: {reason}");
                    catalog.warnings.push(format!("{shown}: {reason}"));
                }
            }
        }
        catalog.entries.sort_by(|a, b| a.name.cmp(&b.name));
        catalog
    }

    fn read_entry(
        workspace: &Workspace,
        folder_name: &str,
        shown: &str,
    ) -> Result<Option<SkillEntry>, String> {
        // Through the boundary: a skill folder or file that is a symlink to outside is refused.
        let inside = workspace.inside(shown).map_err(|err| err.to_string())?;
        let folder = inside.parent().unwrap_or_else(|| inside.clone());
        if workspace.kind(&folder).map_err(|e| e.to_string())? != Some(FileKind::Directory) {
            return Ok(None);
        }
        let file = match workspace.open_regular(&inside) {
            Ok(file) => file,
            Err(err) if err.is_not_found() => return Err("no SKILL.md in the folder".into()),
            Err(err) => return Err(err.to_string()),
        };
        let mut bytes = Vec::new();
        file.take(MAX_SKILL_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|e| e.to_string())?;
        let header: Header =
            agent_frontmatter::read_header(bytes.as_slice()).map_err(|e| e.to_string())?;
        if !NameRule::Skill.accepts(&header.name) {
            return Err(format!(
                "name `{}` must be a lowercase slug (a-z, 0-9, -) of at most {MAX_NAME_LEN} characters",
                header.name
            ));
        }
        if header.name != folder_name {
            return Err(format!(
                "name `{}` does not match the folder name `{folder_name}`",
                header.name
            ));
        }
        let description = header.description.trim();
        if description.is_empty() || description.contains('\n') {
            return Err("description must be one non-empty line".into());
        }
        Ok(Some(SkillEntry {
            name: header.name,
            description: description.to_string(),
            path: inside,
            sha256: agent_trust::sha256_hex(&bytes),
        }))
    }

    /// What the catalog would put in front of the model — every skill's name and file — as
    /// one fingerprint for the trust store; `None` when there is no skill.
    pub fn fingerprint(&self) -> Option<String> {
        if self.entries.is_empty() {
            return None;
        }
        let print = self
            .entries
            .iter()
            .fold(Fingerprint::new(), |print, entry| {
                print
                    .part(entry.name.as_bytes())
                    .part(entry.sha256.as_bytes())
            });
        Some(print.finish())
    }

    /// This catalog if `trust` trusts it, else an empty one: a cloned repository's skills
    /// would otherwise shape every prompt (and their bodies every `load_skill`) unasked. The
    /// refusal is reported through `trust`, once, with how to trust them.
    pub fn trusted(self, trust: &dyn WorkspaceTrust) -> Self {
        let Some(print) = self.fingerprint() else {
            return self;
        };
        match trust.verdict(TrustKind::Skills, &print) {
            Verdict::Trusted => self,
            verdict => {
                trust.refused(TrustKind::Skills, verdict, self.entries.len());
                Self {
                    entries: Vec::new(),
                    warnings: self.warnings,
                }
            }
        }
    }

    /// Every valid skill, sorted by name (the rendered catalog may list fewer).
    pub fn entries(&self) -> &[SkillEntry] {
        &self.entries
    }

    /// One line per skipped skill (its file and the reason), for the person to see at start.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// No valid (or no trusted) skill: the harness then leaves the catalog out of the prompt.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The skill named `name`, if the catalog has it.
    pub fn get(&self, name: &str) -> Option<&SkillEntry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// The catalog text: one line per skill, sorted, at most [`MAX_CATALOG_ENTRIES`] lines
    /// and [`MAX_CATALOG_BYTES`] bytes; what is left out is said in one last line.
    pub fn render(&self) -> String {
        if self.entries.is_empty() {
            return NO_SKILLS.to_string();
        }
        let mut lines: Vec<String> = Vec::new();
        let mut bytes = 0;
        for entry in self.entries.iter().take(MAX_CATALOG_ENTRIES) {
            let line = entry.line();
            // +1 for the newline; keep room for the "left out" line.
            if bytes + line.len() + 1 > MAX_CATALOG_BYTES - 80 {
                break;
            }
            bytes += line.len() + 1;
            lines.push(line);
        }
        let left_out = self.entries.len() - lines.len();
        if left_out > 0 {
            lines.push(format!(
                "- … {left_out} more skill{} not listed (catalog limit: {MAX_CATALOG_ENTRIES} entries, {MAX_CATALOG_BYTES} bytes)",
                if left_out == 1 { "" } else { "s" }
            ));
        }
        lines.join("\n")
    }
}
