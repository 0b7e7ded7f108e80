//! What a session file holds: its lines ([`Line`]) and the id that names it ([`SessionId`]).

use agent_protocol::message::Message;
use serde::{Deserialize, Serialize};

/// The version of the format this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// A session's id: its start time in UTC to the microsecond, `20261201-190400-123456` (the
/// format also takes six hex digits in the last part). Sorting ids sorts sessions by start,
/// so the latest is the last; one spelling per id, so a planted `../x` or an odd name is
/// simply not one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(String);

impl SessionId {
    /// A new id for a session starting `now`.
    pub fn new(now: jiff::Timestamp) -> Self {
        let time = now.strftime("%Y%m%d-%H%M%S");
        Self(format!("{time}-{:06}", now.subsec_microsecond()))
    }

    /// `text` when it is an id's exact spelling.
    pub fn parse(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        let digits = |range: std::ops::Range<usize>| bytes[range].iter().all(u8::is_ascii_digit);
        let hex = |b: &u8| b.is_ascii_digit() || (b'a'..=b'f').contains(b);
        let valid = bytes.len() == 22
            && digits(0..8)
            && bytes[8] == b'-'
            && digits(9..15)
            && bytes[15] == b'-'
            && bytes[16..].iter().all(hex);
        valid.then(|| Self(text.to_string()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The session file's name: `<id>.jsonl`.
    pub fn file_name(&self) -> String {
        format!("{}{}", self.0, crate::EXTENSION)
    }

    /// The id a file name holds, when it is a session file's name.
    pub fn from_file_name(name: &str) -> Option<Self> {
        name.strip_suffix(crate::EXTENSION).and_then(Self::parse)
    }
}

impl std::fmt::Display for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The first line of a session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// [`FORMAT_VERSION`] when written.
    pub version: u32,
    /// The session's id (the file's name must match it).
    pub id: String,
    /// When the session started, RFC 3339 in UTC.
    pub started: String,
    /// The chapter whose agent ran it: a session continues with the same chapter only.
    pub chapter: u8,
    /// The first prompt, as typed.
    pub first_prompt: String,
    /// The `prompt_cache_key` the session sends (chapter 10 on, a real server): a continued
    /// session sends the same, so its requests are the same bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_key: Option<String>,
}

impl Header {
    /// The header of a session starting now, with a new id.
    pub fn start(chapter: u8, first_prompt: &str) -> Self {
        let now = jiff::Timestamp::now();
        Self {
            version: FORMAT_VERSION,
            id: SessionId::new(now).0,
            started: now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
            chapter,
            first_prompt: first_prompt.to_string(),
            cache_key: None,
        }
    }
}

/// One line of a session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Line {
    /// The first line.
    Header(Header),
    /// A person's turn began here (the messages it stored follow).
    Turn,
    /// One message of the history, exactly as the loop stored it.
    Message {
        /// The message.
        message: Message,
    },
    /// The writer reached a bound ([`crate::Limits`]) and stopped: what follows in the
    /// session was not kept, so the file cannot be continued exactly.
    Truncated,
}
