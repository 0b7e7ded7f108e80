//! `agent-skills` (chapter 7): skills the agent can load on demand.
//!
//! A skill is `skills/<name>/SKILL.md` in the workspace: YAML front matter with `name` (a slug
//! equal to the folder name) and a one-line `description`, then a Markdown body. The *catalog*
//! — one line per skill — goes into the system prompt; the *body* is loaded only when the
//! model calls `load_skill{name}`. That split is the point: a hundred skills cost a hundred
//! lines of prompt, not a hundred documents.
//!
//! The catalog is scanned once, when the agent is built; a skill added on disk needs a
//! rebuild (chapter 10 says why that is the right trade).

#![warn(missing_docs)]

mod catalog;
mod tool;

pub use catalog::{
    MAX_CATALOG_BYTES, MAX_CATALOG_ENTRIES, MAX_NAME_LEN, NO_SKILLS, SkillCatalog, SkillEntry,
};
pub use tool::{LoadSkill, spec};
