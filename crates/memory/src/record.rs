//! One memory record and its file format.

use agent_core::names::{MAX_NAME_LEN, NameRule};
use agent_frontmatter::FrontMatterError;
use serde::{Deserialize, Serialize};

/// Why a record cannot be stored or read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The name is not a slug (it becomes part of a file name).
    #[error("name `{0}` must be a slug (a-z, 0-9, -, _; at most {MAX_NAME_LEN} characters)")]
    Name(String),
    /// The description (of the named record) is empty or spans lines: it is one line of the
    /// index.
    #[error("record `{0}`: description must be one non-empty line")]
    Description(String),
    /// A control, bidirectional or invisible character (the body may hold line breaks and
    /// tabs): a record goes into every later prompt and onto the terminal.
    #[error("record `{name}`: the {part} holds the hidden character U+{code:04X}")]
    HiddenCharacter {
        /// The record.
        name: String,
        /// "description" or "body".
        part: &'static str,
        /// The character's code point.
        code: u32,
    },
    /// The record file's front matter could not be read.
    #[error(transparent)]
    FrontMatter(#[from] FrontMatterError),
}

/// What a record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryType {
    /// Who the user is and how they like to work.
    User,
    /// Corrections and confirmations the user gave.
    Feedback,
    /// Facts about this project.
    Project,
    /// Where to find things.
    Reference,
}

impl MemoryType {
    /// The name the front matter and the prompt use (`feedback`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Feedback => "feedback",
            Self::Project => "project",
            Self::Reference => "reference",
        }
    }
}

/// The front matter of a record file: exactly these three fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// The record's name (a copy: the index's name is the one used).
    pub name: String,
    /// The one-line description.
    pub description: String,
    /// What it is about (`type:` in the file).
    #[serde(rename = "type")]
    pub kind: MemoryType,
}

/// A record as the model writes it and the prompt shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryRecord {
    /// A slug, unique in the store: saving a record of the same name replaces it.
    pub name: String,
    /// What it is about.
    #[serde(rename = "type")]
    pub kind: MemoryType,
    /// One line: what the index lists and selection reads.
    pub description: String,
    /// The memory itself, in Markdown.
    pub body: String,
}

impl MemoryRecord {
    /// A record from its four fields (not validated: [`MemoryRecord::validate`] does that).
    pub fn new(name: &str, kind: MemoryType, description: &str, body: &str) -> Self {
        Self {
            name: name.into(),
            kind,
            description: description.into(),
            body: body.into(),
        }
    }

    /// Checks the fields the way the store will: a slug name, a one-line description.
    pub fn validate(&self) -> Result<(), RecordError> {
        if !NameRule::Memory.accepts(&self.name) {
            return Err(RecordError::Name(self.name.clone()));
        }
        let description = self.description.trim();
        if description.is_empty() || description.contains('\n') {
            return Err(RecordError::Description(self.name.clone()));
        }
        // Checked when written and again when read back: `.memory/` may be planted.
        for (part, text, allowed) in [
            ("description", description, &[][..]),
            ("body", self.body.as_str(), &['\n', '\t'][..]),
        ] {
            if let Some(c) = text
                .chars()
                .find(|c| !allowed.contains(c) && agent_workspace::store::is_hidden_char(*c))
            {
                return Err(RecordError::HiddenCharacter {
                    name: self.name.clone(),
                    part,
                    code: u32::from(c),
                });
            }
        }
        Ok(())
    }

    /// The file text: front matter, a blank line, the body.
    pub fn to_file_text(&self) -> Result<String, RecordError> {
        let header = Header {
            name: self.name.clone(),
            description: self.description.trim().to_string(),
            kind: self.kind,
        };
        let mut text = agent_frontmatter::render(&header, self.body.trim())?;
        text.push('\n');
        Ok(text)
    }

    /// Parses a record file.
    pub fn from_file_text(text: &str) -> Result<Self, RecordError> {
        let (header, body): (Header, &str) = agent_frontmatter::parse(text)?;
        Ok(Self {
            name: header.name,
            kind: header.kind,
            description: header.description,
            body: body.trim().to_string(),
        })
    }
}

/// `records` with each name once, the last one given winning (a model may name a record twice
/// in one reply), in the order of those last occurrences.
pub fn last_wins(records: Vec<MemoryRecord>) -> Vec<MemoryRecord> {
    let mut out: Vec<MemoryRecord> = Vec::with_capacity(records.len());
    for record in records {
        out.retain(|r| r.name != record.name);
        out.push(record);
    }
    out
}
