//! The mailbox store (chapter 15): one JSON file per message, one folder per state.
//!
//! ```text
//! .agent_tutorial/mail/<recipient>/
//!   .lock          advisory lock: every change of this mailbox, from any process
//!   ready/         sent, waiting; claimed oldest first by (created_at, id)
//!   processing/    claimed, not yet acknowledged
//!   done/          acknowledged
//!   quarantine/    unreadable files and poison messages, each with `<name>.reason`
//! ```
//!
//! Every move is one rename through the workspace boundary, under the lock, so a message is
//! in exactly one folder at any time and two claimers (threads or processes) never take the
//! same one. Delivery is at least once: a message is acknowledged only after its recipient
//! has stored it, and what was `processing` when a process died goes back to `ready` when
//! the session starts again ([`Mailbox::recover`]). The fragment carries the message id, so
//! the recipient's history can tell a redelivery from a new message.
//!
//! Nothing is created for a recipient until the roster has said it may receive mail: a
//! misspelt name is an error naming the team, not a phantom inbox.

mod files;

use std::sync::Arc;

use agent_protocol::AgentId;
use agent_workspace::store::MAX_ENTRIES;
use agent_workspace::{Clock, Existing, FileLock, Inside, PathError, Workspace};

use crate::message::{MailKind, MailMessage, MessageId};
use crate::roster::{RecipientError, Roster};

pub use files::FileProblem;

/// Where the mailboxes live, inside the harness's state folder.
pub const MAIL_DIR: &str = ".agent_tutorial/mail";
/// The largest body a message may have, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// The most messages one recipient may have waiting (`ready` and `processing`).
pub const MAX_WAITING: usize = 256;
/// How many times a message may make its recipient fail before it is quarantined.
pub const MAX_ATTEMPTS: usize = 3;
/// The most of one message file that is read: JSON may write a byte of the body as six
/// (`\u0000`), and the other fields are small.
pub const READ_LIMIT: u64 = 6 * MAX_MESSAGE_BYTES as u64 + 16 * 1024;
/// The longest failure reason kept per attempt, in characters.
pub const MAX_REASON_CHARS: usize = 500;

/// Acknowledged messages kept per recipient ([`Mailbox::keep_done`]): `done/` is a record
/// (and what makes a repeated ack recognisable), not an archive, so the oldest go.
pub const KEEP_DONE: usize = 1_000;

const LOCK_FILE: &str = ".lock";
/// The suffix of the file beside a quarantined one that says why it is there.
pub const REASON_SUFFIX: &str = ".reason";

/// The four states of a message, one folder each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Folder {
    /// Sent, waiting to be claimed.
    Ready,
    /// Claimed, not yet acknowledged.
    Processing,
    /// Acknowledged.
    Done,
    /// Set aside: unreadable, or it made its recipient fail too often.
    Quarantine,
}

impl Folder {
    /// The folder's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ready => "ready",
            Self::Processing => "processing",
            Self::Done => "done",
            Self::Quarantine => "quarantine",
        }
    }
}

/// Why a mailbox operation failed.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    /// The recipient cannot receive mail (nothing was written).
    #[error(transparent)]
    Recipient(#[from] RecipientError),
    /// The body is over [`MAX_MESSAGE_BYTES`].
    #[error("the message is {size} bytes, over the limit of {MAX_MESSAGE_BYTES} bytes")]
    TooLarge {
        /// Its size in bytes.
        size: usize,
    },
    /// The recipient has [`MAX_WAITING`] messages waiting.
    #[error(
        "`{recipient}` already has {MAX_WAITING} messages waiting; try again after it has read them"
    )]
    Full {
        /// The recipient.
        recipient: AgentId,
    },
    /// The message is not claimed (never was, or it was released or quarantined since).
    #[error("message {0} is not being processed, so it cannot be acknowledged or failed")]
    NotClaimed(MessageId),
    /// The message under that id has different content than the one acknowledged.
    #[error("message {0} was stored with different content than the one acknowledged")]
    Conflict(MessageId),
    /// A file of this message cannot be read back.
    #[error("message file `{file}` cannot be used: {problem}")]
    Unreadable {
        /// The file, workspace-relative.
        file: String,
        /// What is wrong with it.
        #[source]
        problem: FileProblem,
    },
    /// A folder of the mailbox holds more entries than a listing reads (someone filled it).
    #[error("`{folder}` holds more than {MAX_ENTRIES} entries; remove what does not belong there")]
    TooManyEntries {
        /// The folder, workspace-relative.
        folder: String,
    },
    /// The mailbox folder cannot be read or written.
    #[error("the mailbox is not usable: {0}")]
    Storage(#[from] PathError),
    /// A message could not be encoded (a bug).
    #[error("the message cannot be encoded: {0}")]
    Encode(#[from] serde_json::Error),
}

/// What acknowledging did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acked {
    /// The message moved to `done`.
    Done,
    /// It was there already (the same message acknowledged twice).
    AlreadyDone,
}

/// What reporting a failed delivery did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failed {
    /// Back in `ready` for another attempt; `attempts` failures so far.
    Released {
        /// Failed deliveries so far.
        attempts: usize,
    },
    /// It failed [`MAX_ATTEMPTS`] times and is quarantined.
    Quarantined {
        /// Failed deliveries, all told.
        attempts: usize,
    },
}

/// How many messages each folder holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Waiting to be claimed.
    pub ready: usize,
    /// Claimed, not yet acknowledged.
    pub processing: usize,
    /// Acknowledged.
    pub done: usize,
    /// Set aside (reason files not counted).
    pub quarantine: usize,
}

/// One quarantined file and why it is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuarantineEntry {
    /// Its file name.
    pub file: String,
    /// The reason recorded beside it.
    pub reason: String,
}

/// The mailboxes of one workspace.
///
/// ```
/// use std::sync::Arc;
///
/// use agent_protocol::AgentId;
/// use agent_team::{Acked, Counts, MailKind, MailError, Mailbox, Member, Roster, TeammateStatus};
/// use agent_workspace::{SystemClock, Workspace};
///
/// let dir = tempfile::tempdir().unwrap();
/// let mailbox = Mailbox::new(Workspace::new(dir.path()).unwrap(), Arc::new(SystemClock));
/// let alice = AgentId::new("alice").unwrap();
/// let roster = Roster {
///     members: vec![Member {
///         name: alice.clone(),
///         role: "reviews the parser".into(),
///         status: TeammateStatus::Idle,
///     }],
/// };
///
/// let lead = AgentId::lead();
/// mailbox.send(&roster, &lead, "alice", MailKind::Message, "look at parse.rs").unwrap();
/// // A misspelt name is refused before anything is written.
/// let error = mailbox.send(&roster, &lead, "alcie", MailKind::Message, "hi").unwrap_err();
/// assert!(matches!(error, MailError::Recipient(_)));
///
/// let message = mailbox.claim(&alice).unwrap().unwrap();
/// assert_eq!((message.from.as_str(), message.body.as_str()), ("lead", "look at parse.rs"));
/// assert_eq!(mailbox.ack(&message).unwrap(), Acked::Done);
/// let counts = mailbox.counts(&alice).unwrap();
/// assert_eq!(counts, Counts { done: 1, ..Counts::default() });
/// ```
#[derive(Debug, Clone)]
pub struct Mailbox {
    workspace: Workspace,
    root: String,
    clock: Arc<dyn Clock>,
    keep_done: usize,
}

impl Mailbox {
    /// The mailboxes under [`MAIL_DIR`].
    pub fn new(workspace: Workspace, clock: Arc<dyn Clock>) -> Self {
        Self {
            workspace,
            root: MAIL_DIR.to_string(),
            clock,
            keep_done: KEEP_DONE,
        }
    }

    /// The same mailboxes keeping the `keep` newest acknowledged messages per recipient.
    pub fn keep_done(mut self, keep: usize) -> Self {
        self.keep_done = keep;
        self
    }

    fn folder(&self, recipient: &AgentId, folder: Folder) -> Result<Inside, MailError> {
        Ok(self
            .workspace
            .inside(&format!("{}/{recipient}/{}", self.root, folder.as_str()))?)
    }

    fn mailbox_dir(&self, recipient: &AgentId) -> Result<Inside, MailError> {
        Ok(self
            .workspace
            .inside(&format!("{}/{recipient}", self.root))?)
    }

    /// Takes the lock of `recipient`'s mailbox (`<mailbox>/.lock`, created with its folder).
    fn lock(&self, recipient: &AgentId) -> Result<FileLock, MailError> {
        let path = self
            .workspace
            .inside(&format!("{}/{recipient}/{LOCK_FILE}", self.root))?;
        Ok(self.workspace.lock_exclusive(&path)?)
    }

    /// Sends `body` from `from` to the agent the model named `to`. The recipient is checked
    /// against `roster` before anything is written.
    pub fn send(
        &self,
        roster: &Roster,
        from: &AgentId,
        to: &str,
        kind: MailKind,
        body: &str,
    ) -> Result<MailMessage, MailError> {
        let to = roster.recipient(from, to)?;
        if body.len() > MAX_MESSAGE_BYTES {
            return Err(MailError::TooLarge { size: body.len() });
        }
        let message = MailMessage {
            id: MessageId::generate(),
            from: from.clone(),
            to: to.clone(),
            kind,
            body: body.to_string(),
            created_at: crate::now_ms(self.clock.as_ref()),
            failures: Vec::new(),
        };
        let bytes = serde_json::to_vec_pretty(&message)?;
        let _lock = self.lock(&to)?;
        let waiting =
            self.names(&to, Folder::Ready)?.len() + self.names(&to, Folder::Processing)?.len();
        if waiting >= MAX_WAITING {
            return Err(MailError::Full { recipient: to });
        }
        let path = self.file(&to, Folder::Ready, &message.file_name())?;
        self.workspace
            .write_atomic(&path, &bytes, Existing::Refuse)?;
        Ok(message)
    }

    /// Claims the oldest waiting message of `recipient` (moves it to `processing`), or
    /// `None` when nothing waits. A file that cannot be read, does not match its name, or has
    /// failed too often is quarantined on the way and the next one is tried.
    pub fn claim(&self, recipient: &AgentId) -> Result<Option<MailMessage>, MailError> {
        let _lock = self.lock(recipient)?;
        loop {
            let mut names: Vec<(u64, MessageId, String)> = Vec::new();
            for name in self.names(recipient, Folder::Ready)? {
                match MailMessage::parse_file_name(&name) {
                    Some((time, id)) => names.push((time, id, name)),
                    None => {
                        self.quarantine(recipient, Folder::Ready, &name, &FileProblem::Name)?;
                    }
                }
            }
            names.sort();
            let Some((_, _, name)) = names.into_iter().next() else {
                return Ok(None);
            };
            let path = self.file(recipient, Folder::Ready, &name)?;
            match self.read_message(&path, recipient, &name) {
                Ok(message) if message.failures.len() >= MAX_ATTEMPTS => {
                    let problem = FileProblem::Poison(message.failures.clone());
                    self.quarantine(recipient, Folder::Ready, &name, &problem)?;
                }
                Ok(message) => {
                    let to = self.file(recipient, Folder::Processing, &name)?;
                    self.move_file(&path, &to)?;
                    return Ok(Some(message));
                }
                Err(problem) => self.quarantine(recipient, Folder::Ready, &name, &problem)?,
            }
        }
    }

    /// Acknowledges a claimed message (moves it to `done`). The same message acknowledged
    /// again is fine; a different one under its id is [`MailError::Conflict`].
    pub fn ack(&self, message: &MailMessage) -> Result<Acked, MailError> {
        let _lock = self.lock(&message.to)?;
        let name = message.file_name();
        let processing = self.file(&message.to, Folder::Processing, &name)?;
        let done = self.file(&message.to, Folder::Done, &name)?;
        if self.workspace.kind(&processing)?.is_some() {
            self.claimed(&processing, message)?;
            self.move_file(&processing, &done)?;
            self.prune_done(&message.to)?;
            return Ok(Acked::Done);
        }
        if self.workspace.kind(&done)?.is_some() {
            let stored = self.read_existing(&done, message)?;
            return if stored.same_message(message) {
                Ok(Acked::AlreadyDone)
            } else {
                Err(MailError::Conflict(message.id.clone()))
            };
        }
        Err(MailError::NotClaimed(message.id.clone()))
    }

    /// Reports that delivering a claimed message made its recipient fail: it goes back to
    /// `ready` with the reason recorded, or, the [`MAX_ATTEMPTS`]th time, to `quarantine`.
    pub fn fail(&self, message: &MailMessage, reason: &str) -> Result<Failed, MailError> {
        let _lock = self.lock(&message.to)?;
        let name = message.file_name();
        let processing = self.file(&message.to, Folder::Processing, &name)?;
        let mut stored = self.claimed(&processing, message)?;
        stored
            .failures
            .push(reason.chars().take(MAX_REASON_CHARS).collect());
        let attempts = stored.failures.len();
        self.workspace.write_atomic(
            &processing,
            &serde_json::to_vec_pretty(&stored)?,
            Existing::Replace,
        )?;
        if attempts >= MAX_ATTEMPTS {
            let problem = FileProblem::Poison(stored.failures);
            self.quarantine(&message.to, Folder::Processing, &name, &problem)?;
            return Ok(Failed::Quarantined { attempts });
        }
        let ready = self.file(&message.to, Folder::Ready, &name)?;
        self.move_file(&processing, &ready)?;
        Ok(Failed::Released { attempts })
    }

    /// Puts a claimed message back in `ready` without counting a failure (the session ended
    /// before the recipient stored it).
    pub fn release(&self, message: &MailMessage) -> Result<(), MailError> {
        let _lock = self.lock(&message.to)?;
        let name = message.file_name();
        let processing = self.file(&message.to, Folder::Processing, &name)?;
        self.claimed(&processing, message)?;
        let ready = self.file(&message.to, Folder::Ready, &name)?;
        self.move_file(&processing, &ready)
    }

    /// At the start of a session: every message left in `processing` by a process that died
    /// goes back to `ready`, and temporary files it left are removed. Returns how many
    /// messages were put back. Call it once when the session starts, before its claimers do:
    /// it cannot tell a dead process's claim from a live one's, so a second session claiming
    /// from the same mailbox at that moment would see its message delivered twice (still at
    /// least once, and the message id lets the recipient drop the copy).
    pub fn recover(&self, recipient: &AgentId) -> Result<usize, MailError> {
        if self
            .workspace
            .kind(&self.mailbox_dir(recipient)?)?
            .is_none()
        {
            return Ok(0);
        }
        let _lock = self.lock(recipient)?;
        for folder in [
            Folder::Ready,
            Folder::Processing,
            Folder::Done,
            Folder::Quarantine,
        ] {
            let path = self.folder(recipient, folder)?;
            if self.workspace.kind(&path)?.is_some() {
                self.workspace.remove_leftovers(&path)?;
            }
        }
        let names = self.names(recipient, Folder::Processing)?;
        for name in &names {
            let from = self.file(recipient, Folder::Processing, name)?;
            let to = self.file(recipient, Folder::Ready, name)?;
            self.move_file(&from, &to)?;
        }
        Ok(names.len())
    }

    /// How many messages each folder of `recipient` holds. Creates nothing.
    pub fn counts(&self, recipient: &AgentId) -> Result<Counts, MailError> {
        let quarantine = self.names(recipient, Folder::Quarantine)?;
        Ok(Counts {
            ready: self.names(recipient, Folder::Ready)?.len(),
            processing: self.names(recipient, Folder::Processing)?.len(),
            done: self.names(recipient, Folder::Done)?.len(),
            quarantine: quarantine
                .iter()
                .filter(|n| !n.ends_with(REASON_SUFFIX))
                .count(),
        })
    }
}
