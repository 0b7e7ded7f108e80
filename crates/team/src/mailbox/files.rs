//! The file work under the mailbox's lock: listing a folder, reading one message back
//! (bounded, no symlink, no FIFO), moving, and quarantining.

use agent_protocol::AgentId;
use agent_workspace::store::MAX_ENTRIES;
use agent_workspace::{Existing, Inside, PathError, TEMP_PREFIX};

use super::{Folder, MailError, Mailbox, QuarantineEntry, READ_LIMIT, REASON_SUFFIX};
use crate::message::{MailMessage, MessageId};

/// The longest reason file read back.
const REASON_LIMIT: u64 = 8 * 1024;

/// Why a message file cannot be delivered (the reason a quarantined file is there).
#[derive(Debug, thiserror::Error)]
pub enum FileProblem {
    /// Not readable as a bounded regular file (a FIFO, a symlink, too large, …).
    #[error(transparent)]
    Read(#[from] PathError),
    /// Not a message.
    #[error("not a message: {0}")]
    Json(#[from] serde_json::Error),
    /// A name the mailbox never writes.
    #[error("its name is not `<created_at>-<id>.json`")]
    Name,
    /// The content is not the message its name and folder say.
    #[error("it holds message {found} for `{to}`, not the one its name and mailbox say")]
    Mismatch {
        /// The id the content holds.
        found: MessageId,
        /// The recipient the content names.
        to: AgentId,
    },
    /// It made its recipient fail too often.
    #[error("it made its recipient fail {} times: {}", .0.len(), .0.join("; "))]
    Poison(Vec<String>),
}

impl Mailbox {
    /// The path of `name` in `folder` of `recipient`'s mailbox.
    pub(super) fn file(
        &self,
        recipient: &AgentId,
        folder: Folder,
        name: &str,
    ) -> Result<Inside, MailError> {
        let dir = self.folder(recipient, folder)?;
        dir.child(name).ok_or_else(|| MailError::Unreadable {
            file: name.escape_debug().to_string(),
            problem: FileProblem::Name,
        })
    }

    /// The names in a folder (none when it does not exist), leaving out the temporary files
    /// of a write in progress or of a writer that died.
    pub(super) fn names(
        &self,
        recipient: &AgentId,
        folder: Folder,
    ) -> Result<Vec<String>, MailError> {
        let path = self.folder(recipient, folder)?;
        let entries = match self.workspace.list_dir_bounded(&path, MAX_ENTRIES) {
            Ok(entries) => entries,
            Err(err) if err.is_not_found() => return Ok(Vec::new()),
            Err(err) => return Err(err.into()),
        };
        if entries.len() > MAX_ENTRIES {
            return Err(MailError::TooManyEntries {
                folder: path.to_string(),
            });
        }
        Ok(entries
            .into_iter()
            .map(|e| e.name)
            .filter(|n| !n.starts_with(TEMP_PREFIX))
            .collect())
    }

    /// Reads the message file `name` of `recipient`, checking that it is what its name says.
    pub(super) fn read_message(
        &self,
        path: &Inside,
        recipient: &AgentId,
        name: &str,
    ) -> Result<MailMessage, FileProblem> {
        let bytes = self.workspace.read_bytes(path, READ_LIMIT)?;
        let message: MailMessage = serde_json::from_slice(&bytes)?;
        let named = MailMessage::parse_file_name(name);
        if &message.to != recipient || named != Some((message.created_at, message.id.clone())) {
            return Err(FileProblem::Mismatch {
                found: message.id,
                to: message.to,
            });
        }
        Ok(message)
    }

    /// Reads the stored copy of `message` at `path`.
    pub(super) fn read_existing(
        &self,
        path: &Inside,
        message: &MailMessage,
    ) -> Result<MailMessage, MailError> {
        self.read_message(path, &message.to, &message.file_name())
            .map_err(|problem| MailError::Unreadable {
                file: path.to_string(),
                problem,
            })
    }

    /// The stored copy of a claimed `message` in `processing`: it must be there and be the
    /// same message.
    pub(super) fn claimed(
        &self,
        processing: &Inside,
        message: &MailMessage,
    ) -> Result<MailMessage, MailError> {
        if self.workspace.kind(processing)?.is_none() {
            return Err(MailError::NotClaimed(message.id.clone()));
        }
        let stored = self.read_existing(processing, message)?;
        if !stored.same_message(message) {
            return Err(MailError::Conflict(message.id.clone()));
        }
        Ok(stored)
    }

    /// Moves one file to another folder (created if missing) by one rename.
    pub(super) fn move_file(&self, from: &Inside, to: &Inside) -> Result<(), MailError> {
        if let Some(parent) = to.parent() {
            self.workspace.create_dir_all(&parent)?;
        }
        Ok(self.workspace.rename(from, to)?)
    }

    /// Moves `name` from `folder` to `quarantine` and records why beside it. The entry is
    /// moved as it is (a symlink stays a link, never followed; a FIFO is never opened).
    pub(super) fn quarantine(
        &self,
        recipient: &AgentId,
        folder: Folder,
        name: &str,
        problem: &FileProblem,
    ) -> Result<(), MailError> {
        let from = self.file(recipient, folder, name)?;
        let to = self.file(recipient, Folder::Quarantine, name)?;
        self.move_file(&from, &to)?;
        let reason = self.file(
            recipient,
            Folder::Quarantine,
            &format!("{name}{REASON_SUFFIX}"),
        )?;
        self.workspace
            .write_atomic(&reason, problem.to_string().as_bytes(), Existing::Replace)?;
        Ok(())
    }

    /// Removes the oldest acknowledged messages beyond the ones kept (under the lock).
    pub(super) fn prune_done(&self, recipient: &AgentId) -> Result<(), MailError> {
        let names = self.names(recipient, Folder::Done)?;
        let extra = names.len().saturating_sub(self.keep_done);
        // Names sort as (created_at, id): the first are the oldest.
        for name in names.iter().take(extra) {
            self.workspace
                .remove_file(&self.file(recipient, Folder::Done, name)?)?;
        }
        Ok(())
    }

    /// The quarantined files of `recipient` and their reasons, by file name.
    pub fn quarantined(&self, recipient: &AgentId) -> Result<Vec<QuarantineEntry>, MailError> {
        let mut entries = Vec::new();
        for name in self.names(recipient, Folder::Quarantine)? {
            if name.ends_with(REASON_SUFFIX) {
                continue;
            }
            let path = self.file(
                recipient,
                Folder::Quarantine,
                &format!("{name}{REASON_SUFFIX}"),
            )?;
            let reason = match self.workspace.read_to_string(&path, REASON_LIMIT) {
                Ok(reason) => reason,
                Err(err) => format!("(no reason recorded: {err})"),
            };
            entries.push(QuarantineEntry { file: name, reason });
        }
        Ok(entries)
    }
}

impl Mailbox {
    /// The first `n` messages waiting for `recipient`, oldest first, read without claiming
    /// or locking (what a status command shows). A file that cannot be read is skipped here
    /// and left for the next claim to quarantine. Creates nothing.
    pub fn peek(&self, recipient: &AgentId, n: usize) -> Result<Vec<MailMessage>, MailError> {
        let mut names: Vec<(u64, MessageId, String)> = self
            .names(recipient, Folder::Ready)?
            .into_iter()
            .filter_map(|name| {
                let (time, id) = MailMessage::parse_file_name(&name)?;
                Some((time, id, name))
            })
            .collect();
        names.sort();
        let mut messages = Vec::new();
        for (_, _, name) in names {
            if messages.len() >= n {
                break;
            }
            let path = self.file(recipient, Folder::Ready, &name)?;
            if let Ok(message) = self.read_message(&path, recipient, &name) {
                messages.push(message);
            }
        }
        Ok(messages)
    }
}
