//! What each agent's last delivered message came to, kept across a crash (chapter 15).
//!
//! ```text
//! .agent_tutorial/deliveries/
//!   .lock          every change, from any process
//!   <agent>.json   {"id": "<message id>", "answer": "<final answer>"?}
//! ```
//!
//! An agent works on one message at a time, so one record per agent is enough: it is written
//! when the message's fragment goes into the agent's history (no `answer` yet), and again
//! when the turn has completed (with the turn's final answer), both before the message is
//! acknowledged. A process killed between the turn's end and the ack leaves the message in
//! `processing` and this record saying it was answered: the next session acknowledges it
//! without a turn (no second model call) and puts the fragment and the answer back into the
//! agent's history once. A record is read bounded ([`READ_LIMIT`]); one that cannot be read
//! (too large, corrupt, a link, not a file) is skipped with a warning, and the message is
//! then delivered again — at least once, never lost.

use agent_protocol::AgentId;
use agent_workspace::{PathError, StateDir, StoreError, Workspace};
use serde::{Deserialize, Serialize};

use crate::message::MessageId;

/// The folder of the records, workspace-relative.
pub const JOURNAL_DIR: &str = ".agent_tutorial/deliveries";
/// The longest answer kept, in characters: it goes back into the history of a restarted
/// agent, so it is bounded like everything loaded.
pub const MAX_ANSWER_CHARS: usize = 16 * 1024;
/// The most of a record that is read: the answer at its largest, each character written as
/// up to six bytes by JSON, and room for the id.
pub const READ_LIMIT: u64 = (6 * MAX_ANSWER_CHARS + 1024) as u64;

/// What became of the message an agent was last given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeliveryRecord {
    /// The message.
    pub id: MessageId,
    /// The turn's final answer once the turn has completed; `None` while it runs (or when
    /// the process died under it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
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
/// use agent_team::{Deliveries, DeliveryRecord, MessageId};
/// use agent_workspace::Workspace;
///
/// let dir = tempfile::tempdir().unwrap();
/// let journal = Deliveries::new(&Workspace::new(dir.path()).unwrap());
/// let lead = AgentId::lead();
/// let id = MessageId::generate();
/// journal.started(&lead, &id).unwrap();
/// journal.answered(&lead, &id, "Noted.").unwrap();
/// let record = journal.load(&lead).unwrap();
/// assert_eq!(record, Some(DeliveryRecord { id, answer: Some("Noted.".into()) }));
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
        self.write(
            &DeliveryRecord {
                id: id.clone(),
                answer: None,
            },
            agent,
        )
    }

    /// Records that the turn `id` started has completed with `answer` (cut to
    /// [`MAX_ANSWER_CHARS`]).
    pub fn answered(
        &self,
        agent: &AgentId,
        id: &MessageId,
        answer: &str,
    ) -> Result<(), JournalError> {
        self.write(
            &DeliveryRecord {
                id: id.clone(),
                answer: Some(answer.chars().take(MAX_ANSWER_CHARS).collect()),
            },
            agent,
        )
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

    fn write(&self, record: &DeliveryRecord, agent: &AgentId) -> Result<(), JournalError> {
        let lock = self.state.lock()?;
        lock.replace_json(&Self::file_name(agent), record)?;
        Ok(())
    }

    /// `agent`'s record (`None` when there is none), read under the lock and bounded: a file
    /// over [`READ_LIMIT`], not valid, a link or not a regular file is an error.
    pub fn load(&self, agent: &AgentId) -> Result<Option<DeliveryRecord>, JournalError> {
        if !self.state.exists()? {
            return Ok(None);
        }
        let lock = self.state.lock()?;
        let mut record: Option<DeliveryRecord> =
            lock.read_json(&Self::file_name(agent), READ_LIMIT)?;
        if let Some(DeliveryRecord {
            answer: Some(answer),
            ..
        }) = &mut record
            && answer.chars().count() > MAX_ANSWER_CHARS
        {
            // Hand-written past the bound that a writer keeps: cut like a written one.
            *answer = answer.chars().take(MAX_ANSWER_CHARS).collect();
        }
        Ok(record)
    }
}
