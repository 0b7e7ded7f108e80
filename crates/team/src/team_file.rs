//! The team as the last session left it, for `agent-tutorial team list` in another process:
//! one small state file, `.agent_tutorial/team.json`, replaced whole under its lock each time
//! a teammate's status changes, and bounded on load.

use agent_protocol::AgentId;
use agent_workspace::{PathError, StateDir, StoreError, Workspace};
use serde::{Deserialize, Serialize};

use crate::message::MessageId;
use crate::roster::{MAX_TEAMMATES, TeammateStatus};

/// The state file, workspace-relative.
pub const TEAM_FILE: &str = ".agent_tutorial/team.json";
const STATE_FOLDER: &str = ".agent_tutorial";
const FILE_NAME: &str = "team.json";
const LOCK_NAME: &str = "team.lock";
/// The longest last result kept per teammate, in characters (the lead got all of it by mail).
pub const MAX_RESULT_CHARS: usize = 2_000;
/// The most of the file that is read: every teammate at its largest, each character written
/// as up to six bytes by JSON, and room for the other fields.
pub const READ_LIMIT: u64 = (MAX_TEAMMATES * (6 * (MAX_RESULT_CHARS + 200) + 1024)) as u64;

/// One teammate as the file keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeamRecord {
    /// Its name (and mailbox).
    pub name: AgentId,
    /// What the lead said it is for.
    pub role: String,
    /// Where it stands.
    pub status: TeammateStatus,
    /// The message it works on now, if it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<MessageId>,
    /// Its last final answer (cut to [`MAX_RESULT_CHARS`]), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_result: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TeamState {
    teammates: Vec<TeamRecord>,
}

/// What [`TeamFile::load`] read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Loaded {
    /// At most [`MAX_TEAMMATES`] records, in the order they were started.
    pub records: Vec<TeamRecord>,
    /// Records past the bound that were left out (someone wrote them; say so).
    pub skipped: usize,
}

/// Why the team file cannot be used.
///
/// The cause is part of the message and deliberately not a `source`: the store's errors
/// already print their own cause, so a printed chain (`{:#}`, as the CLI prints errors)
/// would repeat it.
#[derive(Debug, thiserror::Error)]
pub enum TeamFileError {
    /// Its folder or lock cannot be used.
    #[error("the team file is not usable: {0}")]
    Storage(PathError),
    /// It cannot be read (too large, not a team, not a file) or written.
    #[error("the team file is not usable: {0}")]
    Store(StoreError),
}

impl From<PathError> for TeamFileError {
    fn from(err: PathError) -> Self {
        Self::Storage(err)
    }
}

impl From<StoreError> for TeamFileError {
    fn from(err: StoreError) -> Self {
        Self::Store(err)
    }
}

/// The team file of one workspace.
#[derive(Debug, Clone)]
pub struct TeamFile {
    state: StateDir,
}

impl TeamFile {
    /// The file [`TEAM_FILE`] of `workspace`.
    pub fn new(workspace: &Workspace) -> Self {
        Self {
            state: StateDir::new(workspace, STATE_FOLDER).with_lock_file(LOCK_NAME),
        }
    }

    /// Replaces the file with `records` (a result cut to [`MAX_RESULT_CHARS`]).
    pub fn save(&self, records: &[TeamRecord]) -> Result<(), TeamFileError> {
        let teammates = records
            .iter()
            .take(MAX_TEAMMATES)
            .map(|r| TeamRecord {
                last_result: r
                    .last_result
                    .as_ref()
                    .map(|t| t.chars().take(MAX_RESULT_CHARS).collect()),
                ..r.clone()
            })
            .collect();
        let lock = self.state.lock()?;
        lock.replace_json(FILE_NAME, &TeamState { teammates })?;
        Ok(())
    }

    /// The records (none when there is no file), read under the lock and bounded: a file
    /// over [`READ_LIMIT`] is an error, records past [`MAX_TEAMMATES`] are left out and
    /// counted.
    pub fn load(&self) -> Result<Loaded, TeamFileError> {
        if !self.state.exists()? {
            return Ok(Loaded::default());
        }
        let lock = self.state.lock()?;
        let state: TeamState = lock.read_json(FILE_NAME, READ_LIMIT)?.unwrap_or_default();
        let mut records = state.teammates;
        let skipped = records.len().saturating_sub(MAX_TEAMMATES);
        records.truncate(MAX_TEAMMATES);
        Ok(Loaded { records, skipped })
    }
}
