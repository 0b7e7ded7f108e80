//! What became of each agent's last delivered message, kept across a crash (chapter 15).
//!
//! ```text
//! .agent_tutorial/deliveries/
//!   .lock          every change, from any process
//!   <agent>.json   {"id": "<message id>", "turn": "started" | "answered"}
//! ```
//!
//! An agent works on one message at a time, so one record per agent is enough: it is written
//! when the message's fragment goes into the agent's history (`started`), and again when the
//! turn has completed (`answered`), both before the message is acknowledged. A process killed
//! between the turn's end and the ack leaves the message in `processing` and this record
//! saying it was answered: the next session acknowledges it without a turn (no second model
//! call) and puts the fragment back into the agent's history once.
//!
//! The record keeps no text. The state folder is in a repository an attacker may write, and
//! what a record held would go back into a history: a stored answer would be words put in the
//! model's own mouth. The fragment is rebuilt from the message itself, which every delivery
//! already treats as untrusted (escaped, typed, with its sender).
//!
//! A record is read bounded ([`READ_LIMIT`]); one that cannot be read (too large, corrupt, a
//! link, not a file) is skipped with a warning, and the message is then delivered again — at
//! least once, never lost.

use agent_protocol::AgentId;
use agent_workspace::{PathError, StateDir, StoreError, Workspace};
use serde::{Deserialize, Serialize};

use crate::message::MessageId;

/// The folder of the records, workspace-relative.
pub const JOURNAL_DIR: &str = ".agent_tutorial/deliveries";
/// The most of a record that is read: an id and a state, with room to spare.
pub const READ_LIMIT: u64 = 1024;

/// How far the turn of a delivered message got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnState {
    /// Its fragment went into the history and its turn started (and, if this is what a
    /// restart finds, the process died before the turn ended).
    Started,
    /// Its turn completed; only the ack may be missing.
    Answered,
}

/// What became of the message an agent was last given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeliveryRecord {
    /// The message.
    pub id: MessageId,
    /// How far its turn got.
    pub turn: TurnState,
}

/// Why a record cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The folder or its lock cannot be used.
    #[error("the delivery record is not usable: {0}")]
    Storage(#[from] PathError),
    /// The record cannot be read (too large, corrupt, not a file) or written.
    #[error("the delivery record is not usable: {0}")]
    Store(#[from] StoreError),
}

/// The delivery records of one workspace.
///
/// ```
/// use agent_protocol::AgentId;
/// use agent_team::{Deliveries, DeliveryRecord, MessageId, TurnState};
/// use agent_workspace::Workspace;
///
/// let dir = tempfile::tempdir().unwrap();
/// let journal = Deliveries::new(&Workspace::new(dir.path()).unwrap());
/// let lead = AgentId::lead();
/// let id = MessageId::generate();
/// journal.started(&lead, &id).unwrap();
/// journal.answered(&lead, &id).unwrap();
/// let record = journal.load(&lead).unwrap();
/// assert_eq!(record, Some(DeliveryRecord { id, turn: TurnState::Answered }));
/// ```
#[derive(Debug, Clone)]
pub struct Deliveries {
    state: StateDir,
}

impl Deliveries {
    /// The records under [`JOURNAL_DIR`] of `workspace`.
    pub fn new(workspace: &Workspace) -> Self {
        Self {
            state: StateDir::new(workspace, JOURNAL_DIR),
        }
    }

    fn file_name(agent: &AgentId) -> String {
        // An agent id is a lowercase slug (or `lead`): it names a file as it is.
        format!("{agent}.json")
    }

    /// Records that `id`'s fragment is going into `agent`'s history and its turn starts.
    pub fn started(&self, agent: &AgentId, id: &MessageId) -> Result<(), JournalError> {
        self.write(agent, id, TurnState::Started)
    }

    /// Records that the turn `id` started has completed.
    pub fn answered(&self, agent: &AgentId, id: &MessageId) -> Result<(), JournalError> {
        self.write(agent, id, TurnState::Answered)
    }

    /// Forgets `agent`'s record: its message went back to the mailbox (released, or failed and
    /// counted), so the next delivery of it is a new one. No record is fine.
    pub fn clear(&self, agent: &AgentId) -> Result<(), JournalError> {
        if !self.state.exists()? {
            return Ok(());
        }
        let lock = self.state.lock()?;
        match lock
            .workspace()
            .remove_file(&lock.file(&Self::file_name(agent))?)
        {
            Err(err) if !err.is_not_found() => Err(err.into()),
            _ => Ok(()),
        }
    }

    /// At the start of a session: removes the temporary files a writer killed mid-write left
    /// (a record is replaced by writing a temporary file and renaming it). Failures are
    /// logged, never fatal.
    pub fn remove_leftovers(&self) -> Result<(), JournalError> {
        if !self.state.exists()? {
            return Ok(());
        }
        self.state.lock()?.remove_leftovers();
        Ok(())
    }

    fn write(&self, agent: &AgentId, id: &MessageId, turn: TurnState) -> Result<(), JournalError> {
        let record = DeliveryRecord {
            id: id.clone(),
            turn,
        };
        let lock = self.state.lock()?;
        lock.replace_json(&Self::file_name(agent), &record)?;
        Ok(())
    }

    /// `agent`'s record (`None` when there is none), read under the lock and bounded: a file
    /// over [`READ_LIMIT`], not valid, a link or not a regular file is an error.
    pub fn load(&self, agent: &AgentId) -> Result<Option<DeliveryRecord>, JournalError> {
        if !self.state.exists()? {
            return Ok(None);
        }
        let lock = self.state.lock()?;
        Ok(lock.read_json(&Self::file_name(agent), READ_LIMIT)?)
    }
}
